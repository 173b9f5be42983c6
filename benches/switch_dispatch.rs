//! Switch dispatch against the same logic as an `if`/`elif` chain and as a `match`
//! statement, for 16, 256 and 4,096 integer cases, timed inside one interpreter run.
//! Goals: the switch at least 10 times faster than `if`/`elif` at 256 cases, and growing
//! with log n (4,096 cases at most 3.5 times 16 cases).
//!
//! Run: `cargo bench --bench switch_dispatch`. Prints the table and writes the chart the
//! README shows, `docs/switch_dispatch.svg`.

use std::fmt::Write;

use gotopy::{Options, Source};

const SIZES: [usize; 3] = [16, 256, 4096];
const KINDS: [&str; 3] = ["switch", "if/elif", "match"];

/// The three functions for `n` cases; each returns the index of the matching case.
fn functions(n: usize, out: &mut String) {
    // Case values spread out, so that no form can index by value.
    let value = |i: usize| i * 7 + 3;
    let _ = writeln!(out, "@goto\ndef switch_{n}(x):\n    while switch *x:");
    for i in 0..n {
        let _ = writeln!(out, "        case[{}]\n        return {i}", value(i));
    }
    let _ = writeln!(out, "    return -1\n\ndef chain_{n}(x):");
    for i in 0..n {
        let keyword = if i == 0 { "if" } else { "elif" };
        let _ = writeln!(out, "    {keyword} x == {}:\n        return {i}", value(i));
    }
    let _ = writeln!(out, "    return -1\n\ndef match_{n}(x):\n    match x:");
    for i in 0..n {
        let _ = writeln!(out, "        case {}:\n            return {i}", value(i));
    }
    let _ = writeln!(
        out,
        "    return -1\n\nSUBJECTS_{n} = [(i * 7919) % {n} * 7 + 3 for i in range(2000)]\n\
         assert [switch_{n}(x) for x in SUBJECTS_{n}] == [chain_{n}(x) for x in SUBJECTS_{n}] \
         == [match_{n}(x) for x in SUBJECTS_{n}]\n"
    );
}

fn program(report: &str) -> String {
    let mut out = String::from("from goto import goto, switch, case\nimport json, time\n\n");
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

call = time_calls(baseline, SUBJECTS_16)
results = {{"call_ns": call * 1e9}}
print(f"ns per call, best of 15 runs over 2,000 subjects; calling a function that only")
print(f"returns its argument costs {{call * 1e9:.0f}} ns; dispatch = per call minus that")
print(f"{{'cases':>6}} {{'switch':>16}} {{'if/elif':>18}} {{'match':>18}}")
print(f"{{'':>6}} {{'call dispatch':>16}} {{'call dispatch':>18}} {{'call dispatch':>18}}")
for n in {sizes:?}:
    subjects = globals()[f"SUBJECTS_{{n}}"]
    row = {{}}
    for kind, prefix in (("switch", "switch"), ("if/elif", "chain"), ("match", "match")):
        row[kind] = time_calls(globals()[f"{{prefix}}_{{n}}"], subjects) * 1e9
    results[str(n)] = row
    cells = " ".join(f"{{row[k]:>9.0f}} {{row[k] - call * 1e9:>8.0f}}" for k in ("switch", "if/elif", "match"))
    print(f"{{n:>6}} {{cells}}")
r = results
net = lambda n, kind: r[str(n)][kind] - r["call_ns"]
print(f"if/elif / switch at 256 cases: dispatch {{net(256, 'if/elif') / net(256, 'switch'):.1f}}x, "
      f"whole call {{r['256']['if/elif'] / r['256']['switch']:.1f}}x (goal >= 10)")
print(f"switch 4096 / switch 16: dispatch {{net(4096, 'switch') / net(16, 'switch'):.2f}}, "
      f"whole call {{r['4096']['switch'] / r['16']['switch']:.2f}} (goal <= 3.5)")
with open({report:?}, "w") as f:
    json.dump(results, f)
"#,
        sizes = SIZES,
    );
    out
}

fn main() {
    let report = std::env::temp_dir().join(format!("switch_dispatch-{}.json", std::process::id()));
    let report_path = report.to_string_lossy().into_owned();
    let source = Source::new("switch_dispatch.py", program(&report_path));
    let status = gotopy::run::run_source(
        &source,
        Options::default(),
        vec!["switch_dispatch.py".into()],
    )
    .unwrap_or_else(|error| panic!("the benchmark program compiles: {error}"));
    assert_eq!(status, 0, "the benchmark program failed");
    let text = std::fs::read_to_string(&report).expect("the program wrote its figures");
    let figures: serde_json::Value = serde_json::from_str(&text).expect("the figures are JSON");
    let chart = chart(&figures);
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/switch_dispatch.svg");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, chart).unwrap();
    println!("chart written to {}", out.display());
}

/// Nanoseconds per call against number of cases, both axes logarithmic, one line per form.
fn chart(figures: &serde_json::Value) -> String {
    let (width, height) = (640.0, 400.0);
    let (left, right, top, bottom) = (70.0, 150.0, 40.0, 50.0);
    // Dispatch time: per call, minus the cost of calling a function that does nothing.
    let call = figures["call_ns"].as_f64().unwrap_or(0.0);
    let ns = |n: usize, kind: &str| {
        (figures[n.to_string()][kind].as_f64().unwrap_or(1.0) - call).max(1.0)
    };
    let all: Vec<f64> = SIZES
        .iter()
        .flat_map(|&n| KINDS.iter().map(move |&kind| ns(n, kind)))
        .collect();
    let low = all.iter().copied().fold(f64::MAX, f64::min).log10().floor();
    let high = all.iter().copied().fold(0.0, f64::max).log10().ceil();
    let x = |n: usize| {
        let (first, last) = ((SIZES[0] as f64).log2(), (SIZES[2] as f64).log2());
        left + ((n as f64).log2() - first) / (last - first) * (width - left - right)
    };
    let y =
        |value: f64| top + (high - value.log10()) / (high - low).max(1.0) * (height - top - bottom);
    let colours = ["#1b7837", "#b2182b", "#2166ac"];
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="14">Dispatch time (ns per call, minus a plain call) against number of integer cases</text>"#,
        width / 2.0
    );
    let mut decade = low;
    while decade <= high {
        let at = y(10f64.powf(decade));
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{at:.1}" x2="{:.1}" y2="{at:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{} ns</text>"##,
            width - right,
            left - 6.0,
            at + 4.0,
            10f64.powf(decade)
        );
        decade += 1.0;
    }
    for n in SIZES {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{n}</text>"#,
            x(n),
            height - bottom + 18.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">cases (log scale)</text>"#,
        (left + width - right) / 2.0,
        height - 10.0
    );
    // Line labels at the right end, pushed apart where lines end close together.
    let mut label_at: Vec<(f64, usize)> = KINDS
        .iter()
        .enumerate()
        .map(|(index, kind)| (y(ns(SIZES[2], kind)), index))
        .collect();
    label_at.sort_by(|a, b| a.0.total_cmp(&b.0));
    for i in 1..label_at.len() {
        label_at[i].0 = label_at[i].0.max(label_at[i - 1].0 + 15.0);
    }
    for (index, (kind, colour)) in KINDS.iter().zip(colours).enumerate() {
        let points: Vec<String> = SIZES
            .iter()
            .map(|&n| format!("{:.1},{:.1}", x(n), y(ns(n, kind))))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            points.join(" ")
        );
        for &n in &SIZES {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                x(n),
                y(ns(n, kind))
            );
        }
        let last = label_at
            .iter()
            .find(|(_, i)| *i == index)
            .map_or(0.0, |(at, _)| *at);
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" fill="{colour}">{kind} ({:.0} ns)</text>"#,
            width - right + 8.0,
            last + 4.0,
            ns(SIZES[2], kind)
        );
    }
    svg.push_str("</svg>\n");
    svg
}
