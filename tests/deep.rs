//! Deep input never crashes (issues 39 and 67): every kind of nesting gotopy or CPython
//! bounds, from `tests/deep/shapes.py`, through every command of the binary.
//!
//! - Just under each bound, `gotopy run` runs the module and its own assertions hold; for
//!   the tokenizer's bounds (brackets, indentation), CPython (`python3`) runs the same module
//!   without goto the same way. The depth of the tree and the nesting of scopes are gotopy's
//!   own bounds, far past what CPython compiles (`python/tests/test_deep.py` holds each
//!   CPython at its own limit).
//! - Just over, every command (`check`, `compile`, `dis`, `run`, `translate`) ends with status
//!   1 and gotopy's message for that bound; for brackets and indentation CPython refuses the
//!   same module with the same words.
//! - At 10^5 levels (1,000 of indentation, whose text grows as its square), `check` refuses
//!   every shape, and every command one shape of each of the tokenizer's bounds (every
//!   command starts with the same parse, and the tree's bounds are just under 10^5 levels),
//!   and CPython refuses each too; 10^6 levels for `check`. No command ever ends by a
//!   signal.
//! - A 4,096-branch `elif` chain in a goto function, which CPython 3.13 and later compile,
//!   runs and translates.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

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

    /// What gotopy says far past it, where the estimate before the parse may stop the file
    /// first: the words up to the limit's first colon ("too complex" for the tree's bounds).
    fn message_far(&self) -> String {
        let family = self.limit.split(':').next().unwrap_or_default();
        format!("error[G000]: syntax error: {family}")
    }

    /// Whether the bound is CPython's tokenizer's, the same on every version.
    fn tokenizer(&self) -> bool {
        !self.limit.starts_with("too complex")
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

/// What `python` says of `path` (its error's last line, or `ok`).
fn cpython_says(python: &Path, path: &Path) -> String {
    let output = Command::new(python).arg(path).output().unwrap();
    assert!(
        output.status.code().is_some(),
        "CPython ended by a signal on {}",
        common::shown(path)
    );
    let text = shown(&output);
    text.lines().last().unwrap_or_default().to_owned()
}

/// What CPython (`python3`) says of `path`.
fn cpython(path: &Path) -> String {
    cpython_says(Path::new("python3"), path)
}

#[test]
fn just_under_each_bound_the_module_runs() {
    let shapes = shapes();
    let failures: Vec<String> = common::on_threads(&shapes, |shape| {
        let mut failures = Vec::new();
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
        if shape.tokenizer() && shape.name != "f-strings" {
            let theirs = cpython(&module(&shape.name, shape.under, true));
            if theirs != "ok" {
                failures.push(format!(
                    "CPython on {} at {}: {theirs}",
                    shape.name, shape.under
                ));
            }
        }
        failures
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What the help of a "too complex" refusal says to split: a long `if`/`elif` chain (each
/// `elif` is a level deeper in CPython's tree), or an expression.
const CHAIN: &str = "each `elif` nests one level deeper";
const EXPRESSION: &str = "split the expression with intermediate variables";

/// What the help of `shape`'s refusal says to split, where it is "too complex".
fn split(shape: &str) -> &'static str {
    if shape == "elif" { CHAIN } else { EXPRESSION }
}

#[test]
fn just_over_each_bound_every_command_gives_the_error() {
    let mut failures = Vec::new();
    for shape in shapes() {
        let path = module(&shape.name, shape.over, false);
        refuses(&path, &COMMANDS, &shape.message(), &mut failures);
        if shape.limit == "too complex" {
            let text = shown(&gotopy(&["check"], &path));
            if !text.contains(split(&shape.name)) {
                failures.push(format!("{} at {}: {text}", shape.name, shape.over));
            }
        }
        if shape.tokenizer() && shape.name != "f-strings" {
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

/// The shapes of the tokenizer's bounds that every command also takes 10^5 levels deep (the
/// tree's bounds, 10^5 levels, are just over them: every command took those there).
const TOKENIZER_REPRESENTATIVES: [&str; 3] = ["parentheses", "f-strings", "functions"];

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
        // Every command on one shape of each of the tokenizer's bounds (each starts with the
        // same parse), `check` on the others.
        let commands: &[&str] = if TOKENIZER_REPRESENTATIVES.contains(&shape.name.as_str()) {
            &COMMANDS
        } else {
            &["check"]
        };
        refuses(&path, commands, &shape.message_far(), &mut failures);
        let theirs = cpython(&module(&shape.name, depth, true));
        if theirs.ends_with("ok") {
            failures.push(format!("CPython accepts {} at {depth}", shape.name));
        }
    }
    // A million levels: `check` alone, which every other command starts with.
    for shape in &shapes {
        if MILLION.contains(&shape.name.as_str()) {
            let path = module(&shape.name, 1_000_000, false);
            refuses(&path, &["check"], &shape.message_far(), &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The help of a "too complex" refusal says what to split, also where the estimate before
/// the parse stops the file (past its bound, 200,000); just over the tree's bound
/// `just_over_each_bound_every_command_gives_the_error` holds it.
#[test]
fn too_complex_says_whether_to_split_a_chain_or_an_expression() {
    let mut failures = Vec::new();
    for name in ["elif", "unary"] {
        let output = gotopy(&["check"], &module(name, 300_000, false));
        let text = shown(&output);
        if !text.contains("error[G000]: syntax error: too complex") || !text.contains(split(name)) {
            failures.push(format!("{name}: wanted {:?}:\n{text}", split(name)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A generated `if`/`elif` chain of 4,096 branches in a goto function (issue 67), which
/// CPython 3.13 and later compile (3.11 and 3.12 raise `RecursionError` themselves): `gotopy
/// run` prints what CPython 3.13 prints for the program without goto, and `gotopy
/// translate`, whose output the chain already nests beyond what 3.11 and 3.12 compile,
/// translates it into a program that 3.13 runs the same way.
#[test]
fn a_chain_of_4096_elifs_runs_and_translates() {
    let python = cpython::pythons()
        .into_iter()
        .find(|(version, _)| version == "3.13")
        .expect("CPython 3.13")
        .1;
    let path = module("elif", 4_096, false);
    let theirs = Command::new(&python)
        .arg(&*module("elif", 4_096, true))
        .output()
        .unwrap();
    assert_eq!(
        (
            theirs.status.code(),
            String::from_utf8_lossy(&theirs.stdout)
        ),
        (Some(0), "ok\n".into()),
        "{}",
        shown(&theirs)
    );
    let ours = common::gotopy_run(&path, &[]);
    assert_eq!(
        (ours.status.code(), &ours.stdout),
        (Some(0), &theirs.stdout),
        "{}",
        shown(&ours)
    );
    let scratch = common::Scratch::dir("deep-translated");
    let out = scratch.join("elif.py");
    let translated = gotopy(&["translate", "-o", out.to_str().unwrap()], &path);
    assert!(translated.status.success(), "{}", shown(&translated));
    let ran = Command::new(&python).arg(&out).output().unwrap();
    assert_eq!(
        (ran.status.code(), &ran.stdout),
        (Some(0), &theirs.stdout),
        "{}",
        shown(&ran)
    );
}

/// `gotopy translate` refuses a translation for its depth only where it nests deeper than
/// CPython 3.11 and 3.12 compile (2,900 levels) and its source does not: an `elif` chain of n
/// clauses in the goto function is n + 6 levels deep, and its translation, in a dispatch
/// loop, n + 7. So 2,894 clauses are refused (`G200`), and 2,893 translate, and so do 2,895,
/// whose source is past that depth already; both translations run on CPython 3.11 as the
/// programs without goto do.
#[test]
fn a_translation_nests_deeper_than_cpython_compiles_only_where_its_source_does() {
    let python = cpython::pythons()
        .into_iter()
        .find(|(version, _)| version == "3.11")
        .expect("CPython 3.11")
        .1;
    let scratch = common::Scratch::dir("deep-translated");
    for (clauses, translates) in [(2_893, true), (2_894, false), (2_895, true)] {
        let path = module("elif", clauses, false);
        let out = scratch.join(format!("elif-{clauses}.py"));
        let output = gotopy(&["translate", "-o", out.to_str().unwrap()], &path);
        if translates {
            assert!(output.status.success(), "{clauses}: {}", shown(&output));
            assert_eq!(cpython_says(&python, &out), "ok", "{clauses}");
            assert_eq!(
                cpython_says(&python, &module("elif", clauses, true)),
                "ok",
                "{clauses}"
            );
        } else {
            let text = shown(&output);
            assert_eq!(output.status.code(), Some(1), "{clauses}: {text}");
            assert!(
                text.contains("error[G200]") && text.contains("nests more than 2,900 levels"),
                "{clauses}: {text}"
            );
            assert_eq!(
                gotopy(&["check"], &path).status.code(),
                Some(0),
                "{clauses}"
            );
        }
    }
}
