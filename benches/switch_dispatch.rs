//! Switch dispatch against the same logic as an `if`/`elif` chain, as a `match` statement
//! and as the switch's own search tree written as nested `if`s, for 16, 256 and 4,096
//! integer cases, with subjects in random order and in a fixed cycle over the cases (whose
//! branches a processor learns to predict when the cases are few), timed inside one
//! interpreter run: the same program on RustPython
//! (gotopy's embedded interpreter) and on CPython 3.13 and 3.14 (`python -m gotopy run`,
//! with the package from the virtual environments `cargo test --test cpython` sets up
//! under `target/cpython/`; a version without one is left out, and says so). Goals: the switch at least 10 times faster than `if`/`elif` at
//! 256 cases, and growing with log n (4,096 cases at most 3.5 times 16 cases).
//!
//! Run: `cargo bench --bench switch_dispatch`. Prints the tables and draws the chart the
//! performance page shows, `docs/switch_dispatch.svg` (plotters).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use gotopy::{Options, Source};
use plotters::prelude::*;

/// The CPython versions measured, with the package installed in `target/cpython/venv-X`.
const CPYTHONS: [&str; 2] = ["3.13", "3.14"];

const SIZES: [usize; 3] = [16, 256, 4096];
const KINDS: [&str; 4] = ["switch", "if tree", "if/elif", "match"];

/// The four functions for `n` cases; each returns the index of the matching case.
fn functions(n: usize, out: &mut String) {
    // Case values spread out, so that no form can index by value.
    let value = |i: usize| i * 7 + 3;
    let _ = writeln!(out, "@goto\ndef switch_{n}(x):\n    while switch *x:");
    for i in 0..n {
        let _ = writeln!(out, "        case[{}]\n        return {i}", value(i));
    }
    // The fastest dispatch plain Python can write without a table: the same balanced
    // search as nested `if x < pivot:` statements, compiled by the target's own compiler.
    let _ = writeln!(out, "    return -1\n\ndef tree_{n}(x):");
    tree(0..n, 1, &value, out);
    let _ = writeln!(out, "def chain_{n}(x):");
    for i in 0..n {
        let keyword = if i == 0 { "if" } else { "elif" };
        let _ = writeln!(out, "    {keyword} x == {}:\n        return {i}", value(i));
    }
    let _ = writeln!(out, "    return -1\n\ndef match_{n}(x):\n    match x:");
    for i in 0..n {
        let _ = writeln!(out, "        case {}:\n            return {i}", value(i));
    }
    // The same 2,000 subjects for every form: each case's value, in a random order (seeded)
    // or in a cycle that steps through the cases the same way every time.
    let _ = writeln!(
        out,
        "    return -1\n\n_order = random.Random({n})\n\
         SUBJECTS_{n} = {{\n\
         \x20   'random': [_order.randrange({n}) * 7 + 3 for i in range(2000)],\n\
         \x20   'cycle': [(i * 7919) % {n} * 7 + 3 for i in range(2000)],\n\
         }}\n\
         for _subjects in SUBJECTS_{n}.values():\n\
         \x20   assert [switch_{n}(x) for x in _subjects] == [tree_{n}(x) for x in _subjects] \
         == [chain_{n}(x) for x in _subjects] == [match_{n}(x) for x in _subjects]\n"
    );
}

/// Nested `if` statements searching `cases` as the switch's tree does: `<` against the
/// middle value, `==` at a leaf.
fn tree(
    cases: std::ops::Range<usize>,
    depth: usize,
    value: &dyn Fn(usize) -> usize,
    out: &mut String,
) {
    let indent = "    ".repeat(depth);
    if cases.len() == 1 {
        let i = cases.start;
        let _ = writeln!(
            out,
            "{indent}if x == {}:\n{indent}    return {i}\n{indent}return -1",
            value(i)
        );
        return;
    }
    let middle = cases.start + cases.len() / 2;
    let _ = writeln!(out, "{indent}if x < {}:", value(middle));
    tree(cases.start..middle, depth + 1, value, out);
    let _ = writeln!(out, "{indent}else:");
    tree(middle..cases.end, depth + 1, value, out);
}

fn program(report: &str) -> String {
    let mut out =
        String::from("from goto import goto, switch, case\nimport json, random, time\n\n");
    for n in SIZES {
        functions(n, &mut out);
    }
    let _ = write!(
        out,
        r#"
def baseline(x):
    return x

def time_calls(f, subjects):
    best = None
    for _ in range(15):
        start = time.perf_counter()
        for x in subjects:
            f(x)
        elapsed = (time.perf_counter() - start) / len(subjects)
        best = elapsed if best is None else min(best, elapsed)
    return best

call = time_calls(baseline, SUBJECTS_16["random"])
results = {{"call_ns": call * 1e9}}
print(f"ns per call, best of 15 runs over 2,000 subjects; calling a function that only")
print(f"returns its argument costs {{call * 1e9:.0f}} ns; dispatch = per call minus that")
for order in ("random", "cycle"):
    print(f"subjects in {{'a random order' if order == 'random' else 'a fixed cycle'}}:")
    print(f"{{'cases':>6}} {{'switch':>16}} {{'if tree':>16}} {{'if/elif':>18}} {{'match':>18}}")
    print(f"{{'':>6}} {{'call dispatch':>16}} {{'call dispatch':>16}} {{'call dispatch':>18}} {{'call dispatch':>18}}")
    r = results[order] = {{}}
    for n in {sizes:?}:
        subjects = globals()[f"SUBJECTS_{{n}}"][order]
        row = {{}}
        for kind, prefix in (("switch", "switch"), ("if tree", "tree"), ("if/elif", "chain"), ("match", "match")):
            row[kind] = time_calls(globals()[f"{{prefix}}_{{n}}"], subjects) * 1e9
        r[str(n)] = row
        cells = " ".join(f"{{row[k]:>9.0f}} {{row[k] - call * 1e9:>8.0f}}" for k in {kinds:?})
        print(f"{{n:>6}} {{cells}}")
    net = lambda n, kind: r[str(n)][kind] - results["call_ns"]
    print(f"if/elif / switch at 256 cases: dispatch {{net(256, 'if/elif') / net(256, 'switch'):.1f}}x, "
          f"whole call {{r['256']['if/elif'] / r['256']['switch']:.1f}}x (goal >= 10)")
    print(f"switch 4096 / switch 16: dispatch {{net(4096, 'switch') / net(16, 'switch'):.2f}}, "
          f"whole call {{r['4096']['switch'] / r['16']['switch']:.2f}} (goal <= 3.5)")
    print("switch / the same tree as nested ifs, whole call: "
          + ", ".join(f"{{n}} cases {{r[str(n)]['switch'] / r[str(n)]['if tree']:.2f}}" for n in {sizes:?}))
with open({report:?}, "w") as f:
    json.dump(results, f)
"#,
        sizes = SIZES,
        kinds = KINDS,
    );
    out
}

fn main() {
    let mut figures = vec![("RustPython 0.5".to_owned(), on_rustpython())];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for version in CPYTHONS {
        let python = root.join(format!("target/cpython/venv-{version}/bin/python"));
        if python.exists() {
            figures.push((format!("CPython {version}"), on_cpython(&python)));
        } else {
            println!(
                "CPython {version}: no {} (`cargo test --test cpython` sets it up); left out",
                python.display()
            );
        }
    }
    let out = root.join("docs/switch_dispatch.svg");
    chart(&figures, &out).expect("the chart is drawn");
    println!("chart written to {}", out.display());
}

/// A report file for one run, in the temporary directory.
fn report_path(target: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "switch_dispatch-{target}-{}.json",
        std::process::id()
    ))
}

/// The figures the program wrote to `report`.
fn read_report(report: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(report).expect("the program wrote its figures");
    serde_json::from_str(&text).expect("the figures are JSON")
}

fn on_rustpython() -> serde_json::Value {
    println!("RustPython 0.5 (gotopy run):");
    let report = report_path("rustpython");
    let source = Source::new("switch_dispatch.py", program(&report.to_string_lossy()));
    let status = gotopy::run::run_source(
        &source,
        Options::default(),
        vec!["switch_dispatch.py".into()],
    )
    .unwrap_or_else(|error| panic!("the benchmark program compiles: {error}"));
    assert_eq!(status, 0, "the benchmark program failed");
    read_report(&report)
}

fn on_cpython(python: &Path) -> serde_json::Value {
    println!("{} -m gotopy run:", python.display());
    let report = report_path("cpython");
    let script = std::env::temp_dir().join(format!("switch_dispatch-{}.py", std::process::id()));
    std::fs::write(&script, program(&report.to_string_lossy())).unwrap();
    let status = std::process::Command::new(python)
        .args(["-m", "gotopy", "run"])
        .arg(&script)
        .status()
        .expect("the interpreter runs");
    assert!(
        status.success(),
        "the benchmark program failed on {}",
        python.display()
    );
    read_report(&report)
}

/// Dispatch time (per call, minus a plain call) against number of cases, both axes
/// logarithmic: a colour per form, a line style per target.
fn chart(
    figures: &[(String, serde_json::Value)],
    out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    // Subjects in a random order: no form gains from branches a processor learns.
    let dispatch = |report: &serde_json::Value, n: usize, kind: &str| {
        let call = report["call_ns"].as_f64().unwrap_or(0.0);
        (report["random"][n.to_string()][kind]
            .as_f64()
            .unwrap_or(1.0)
            - call)
            .max(1.0)
    };
    let values: Vec<f64> = figures
        .iter()
        .flat_map(|(_, report)| {
            SIZES
                .iter()
                .flat_map(move |&n| KINDS.iter().map(move |&kind| dispatch(report, n, kind)))
        })
        .collect();
    // Whole decades around the data, so that every tick label is a round number.
    let low = 10f64.powf(
        values
            .iter()
            .copied()
            .fold(f64::MAX, f64::min)
            .log10()
            .floor(),
    );
    let high = 10f64.powf(values.iter().copied().fold(1.0, f64::max).log10().ceil());
    let area = SVGBackend::new(out, (900, 560)).into_drawing_area();
    area.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(
            "Dispatch time (ns per call, minus a plain call, subjects in random order)",
            ("sans-serif", 18),
        )
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(
            (SIZES[0] as f64..SIZES[2] as f64)
                .log_scale()
                .with_key_points(SIZES.iter().map(|&n| n as f64).collect()),
            (low..high).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("cases")
        .y_desc("ns")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let colours = [
        RGBColor(0x1b, 0x78, 0x37),
        RGBColor(0xb2, 0x18, 0x2b),
        RGBColor(0x21, 0x66, 0xac),
        RGBColor(0xe0, 0x8a, 0x14),
    ];
    for (target_index, (target, report)) in figures.iter().enumerate() {
        for (kind, colour) in KINDS.iter().zip(colours) {
            let points: Vec<(f64, f64)> = SIZES
                .iter()
                .map(|&n| (n as f64, dispatch(report, n, kind)))
                .collect();
            let style = colour.stroke_width(2);
            let label = format!("{kind}, {target}");
            // One dash pattern per target (solid, dashed, dotted: dash and gap in pixels),
            // for its lines and for its legend, which draws three segments of it.
            let (dash, gap) = [(8, 0), (6, 3), (2, 4)][target_index.min(2)];
            let legend = move |(x, y): (i32, i32)| {
                let segment = |at: i32| {
                    PathElement::new(vec![(at, 0), (at + dash, 0)], colour.stroke_width(2))
                };
                EmptyElement::at((x, y))
                    + segment(0)
                    + segment(dash + gap)
                    + segment(2 * (dash + gap))
            };
            let series = if gap == 0 {
                chart.draw_series(LineSeries::new(points.clone(), style))?
            } else {
                chart.draw_series(DashedLineSeries::new(points.clone(), dash, gap, style))?
            };
            series.label(label).legend(legend);
            let marker = points
                .into_iter()
                .map(move |p| Circle::new(p, 3, colour.filled()));
            chart.draw_series(marker)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    area.present()?;
    Ok(())
}
