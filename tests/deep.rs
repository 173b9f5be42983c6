//! Deep input never crashes (issue 39): every kind of nesting CPython bounds, from
//! `tests/deep/shapes.py`, through every command of the binary.
//!
//! - Just under each bound, `gotopy run` runs the module and its own assertions hold, and
//!   CPython (`python3`) runs the same module without goto the same way (the oracle).
//! - Just over, every command (`check`, `compile`, `dis`, `run`, `translate`) ends with status
//!   1 and the message CPython gives for that bound; for brackets and indentation CPython
//!   refuses the same module with the same words (for expressions too deep, gotopy's bound,
//!   2,900 levels, is below CPython's, which varies by version and call depth).
//! - Far beyond (10^5 levels, 1,000 of indentation, whose text grows as its square), the
//!   same for one shape of each bound and `check` for the others (every command starts with
//!   the same parse), and CPython refuses each too; 10^6 levels for `check`. No command
//!   ever ends by a signal.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::root;

/// One shape of `tests/deep/shapes.py --list`.
struct Shape {
    name: String,
    limit: String,
    under: usize,
    over: usize,
}

impl Shape {
    /// What gotopy says past this shape's bound.
    fn message(&self) -> String {
        format!("error[G000]: syntax error: {}", self.limit)
    }
}

fn shapes() -> Vec<Shape> {
    let output = generator(&["--list"]);
    String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            Shape {
                name: fields[0].to_owned(),
                limit: fields[1].to_owned(),
                under: fields[2].parse().unwrap(),
                over: fields[3].parse().unwrap(),
            }
        })
        .collect()
}

fn generator(args: &[&str]) -> Vec<u8> {
    let output = Command::new("python3")
        .arg(root().join("tests/deep/shapes.py"))
        .args(args)
        .output()
        .expect("python3 runs tests/deep/shapes.py");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The module of `shape` at `depth` (without goto when `plain`), written to a scratch file.
fn module(shape: &str, depth: usize, plain: bool) -> common::Scratch {
    let depth = depth.to_string();
    let mut args = vec![shape, depth.as_str()];
    if plain {
        args.insert(0, "--plain");
    }
    let text = String::from_utf8(generator(&args)).unwrap();
    let suffix = if plain { "-plain" } else { "" };
    common::write(&format!("deep-{shape}-{depth}{suffix}.py"), &text)
}

fn gotopy(args: &[&str], path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .args(args)
        .arg(path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Everything a command printed, for messages.
fn shown(output: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    text.chars().take(2_000).collect()
}

/// The commands of the binary, each of which parses its file first.
const COMMANDS: [&str; 5] = ["check", "compile", "dis", "run", "translate"];

/// Each of `commands` refuses `path` with status 1 (never a signal) and `message`.
fn refuses(path: &Path, commands: &[&str], message: &str, failures: &mut Vec<String>) {
    let scratch = common::Scratch::dir("deep");
    let out = scratch.join("out");
    let out = out.to_str().unwrap();
    for &command in commands {
        let args: &[&str] = match command {
            "compile" | "translate" => &[command, "-o", out],
            _ => &[command],
        };
        let output = gotopy(args, path);
        let text = shown(&output);
        if output.status.code() != Some(1) || !text.contains(message) {
            failures.push(format!(
                "gotopy {command} {}: {:?}, expected status 1 and {message:?}:\n{text}",
                common::shown(path),
                output.status
            ));
        }
    }
}

/// What CPython says of `path` (its error's first line, or `ok`).
fn cpython(path: &Path) -> String {
    let output = Command::new("python3").arg(path).output().unwrap();
    assert!(
        output.status.code().is_some(),
        "CPython ended by a signal on {}",
        common::shown(path)
    );
    let text = shown(&output);
    text.lines().last().unwrap_or_default().to_owned()
}

#[test]
fn just_under_each_bound_the_module_runs_as_cpython_runs_it() {
    let mut failures = Vec::new();
    for shape in shapes() {
        let ours = common::gotopy_run(&module(&shape.name, shape.under, false), &[]);
        if !ours.status.success() || String::from_utf8_lossy(&ours.stdout) != "ok\n" {
            failures.push(format!(
                "gotopy run {} at {}:\n{}",
                shape.name,
                shape.under,
                shown(&ours)
            ));
        }
        // CPython 3.11 (`python3`) nests no f-string in one of the same quote; the package's
        // tests run this shape on 3.12 and later.
        if shape.name != "f-strings" {
            let theirs = cpython(&module(&shape.name, shape.under, true));
            if theirs != "ok" {
                failures.push(format!(
                    "CPython on {} at {}: {theirs}",
                    shape.name, shape.under
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn just_over_each_bound_every_command_gives_cpythons_error() {
    let mut failures = Vec::new();
    for shape in shapes() {
        let path = module(&shape.name, shape.over, false);
        refuses(&path, &COMMANDS, &shape.message(), &mut failures);
        if shape.limit != "too complex" && shape.name != "f-strings" {
            let theirs = cpython(&module(&shape.name, shape.over, true));
            if !theirs.contains(&shape.limit) {
                failures.push(format!(
                    "CPython on {} at {}: {theirs}",
                    shape.name, shape.over
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One shape of each bound, and of each way the estimate and the tree's depth stop a file.
const REPRESENTATIVES: [&str; 6] = [
    "parentheses",
    "f-strings",
    "unary",
    "lambdas",
    "elif",
    "functions",
];

/// The shapes `check` also takes a million levels deep.
const MILLION: [&str; 6] = [
    "parentheses",
    "unary",
    "sum",
    "lambdas",
    "conditional",
    "f-strings",
];

#[test]
fn far_beyond_each_bound_every_command_gives_the_error_and_no_signal() {
    let mut failures = Vec::new();
    let shapes = shapes();
    for shape in &shapes {
        // Indentation costs the square of its depth in text.
        let depth = if shape.limit.contains("indentation") {
            1_000
        } else {
            100_000
        };
        let path = module(&shape.name, depth, false);
        // Every command on one shape of each bound (each starts with the same parse),
        // `check` on the others.
        let commands: &[&str] = if REPRESENTATIVES.contains(&shape.name.as_str()) {
            &COMMANDS
        } else {
            &["check"]
        };
        refuses(&path, commands, &shape.message(), &mut failures);
        let theirs = cpython(&module(&shape.name, depth, true));
        if theirs.ends_with("ok") {
            failures.push(format!("CPython accepts {} at {depth}", shape.name));
        }
    }
    // A million levels: `check` alone, which every other command starts with.
    for shape in &shapes {
        if MILLION.contains(&shape.name.as_str()) {
            let path = module(&shape.name, 1_000_000, false);
            refuses(&path, &["check"], &shape.message(), &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The help of a "too complex" refusal says what to split: a long `if`/`elif` chain (each
/// `elif` is a level deeper in CPython's tree), or an expression. Both the tree's bound (just
/// over it) and the estimate before the parse (far beyond) tell them apart.
#[test]
fn too_complex_says_whether_to_split_a_chain_or_an_expression() {
    const CHAIN: &str = "each `elif` nests one level deeper";
    const EXPRESSION: &str = "split the expression with intermediate variables";
    let mut failures = Vec::new();
    for shape in shapes().iter().filter(|shape| shape.limit == "too complex") {
        let wanted = if shape.name == "elif" {
            CHAIN
        } else {
            EXPRESSION
        };
        for depth in [shape.over, 100_000] {
            let output = gotopy(&["check"], &module(&shape.name, depth, false));
            let text = shown(&output);
            if !text.contains(&shape.message()) || !text.contains(wanted) {
                failures.push(format!(
                    "{} at {depth}: wanted {wanted:?}:\n{text}",
                    shape.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
