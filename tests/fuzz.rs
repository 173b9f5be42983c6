//! Fuzzing with proptest (a coverage-guided `cargo fuzz` target needs a nightly toolchain,
//! which these machines do not have): `check` and `compile` on arbitrary text and on
//! generated Python dense in markers and compound statements, with and without
//! `--all-scopes`, and on nesting far past CPython's bounds. Neither may panic; whatever
//! `compile` emits has passed the verifier inside `assemble`, and must decode and
//! disassemble again; the run-time rewrite of a
//! plainly compiled module must not panic either and, when it succeeds, must leave code
//! that decodes.
//!
//! The seed is fixed; `PROPTEST_RNG_SEED=N` runs another.
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz` runs longer; failures are
//! shrunk and saved under `tests/fuzz.proptest-regressions`, replayed on every run.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use gotopy::bytecode::marshal;
use gotopy::compile::{CompileError, compile_source};
use gotopy::{Code, Options, Source, check_source};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, RngSeed};

/// Lines of a small Python-like language dense in what gotopy cares about.
fn line() -> impl Strategy<Value = (usize, &'static str)> {
    let statements = prop_oneof![
        Just("goto .a"),
        Just("label .a"),
        Just("label .b"),
        Just("goto *x"),
        Just("while switch *x:"),
        Just("case[1]"),
        Just("case[1, 'a']"),
        Just("case[b'x']"),
        Just("for i in x:"),
        Just("async for i in x:"),
        Just("with m:"),
        Just("with m as n, k:"),
        Just("async with m:"),
        Just("try:"),
        Just("try: "),
        Just("try:  "),
        Just("if x: "),
        Just("if x:"),
        Just("while True:"),
        // Other true constants the code generators fold as they fold `True`.
        Just("while 'x':"),
        Just("while not 0:"),
        Just("return 1"),
        Just("yield x"),
        Just("await x"),
        Just("raise E"),
        Just("break"),
        Just("continue"),
        Just("pass"),
        Just("x = goto"),
        Just("@goto"),
        Just("def f():"),
        Just("async def g():"),
        Just("class C:"),
        Just("print(label .a)"),
    ];
    (0usize..4, statements)
}

/// A function of `line()`s. `well_formed` makes it `async` and turns into `pass` (or
/// `return`) what `check` or Python rejects by itself (see `well_formed_line`), never
/// leaves a `finally` or `except*` body by goto, and ends the function with every label no
/// line defined, so that most programs get past `check` into the rewrite; otherwise all of
/// that stays, for `check`.
fn program(well_formed: bool) -> impl Strategy<Value = String> {
    proptest::collection::vec(line(), 1..30).prop_map(move |lines| {
        let mut text = String::from("from goto import goto, label, switch, case\n@goto\n");
        text.push_str(if well_formed { "async def" } else { "def" });
        text.push_str(" f(x, m, k, E):\n");
        // Mostly well formed: a block opener indents the next line, a line may dedent any
        // number of levels, and blocks that need a second clause get one when they close
        // (`try:` an `except E:`, `try: ` a `finally:`, `try:  ` an `except* E as e:`,
        // `if x: ` an `else:`).
        let mut indent: usize = 1;
        let mut opened = false;
        let mut open: Vec<(usize, &str)> = Vec::new();
        let close = |open: &mut Vec<(usize, &str)>, to: usize, text: &mut String| {
            while open.last().is_some_and(|&(at, _)| at >= to) {
                let (at, opener) = open.pop().unwrap();
                let clause = match opener {
                    "try:" => "except E:",
                    "try: " => "finally:",
                    "try:  " => "except* E as e:",
                    "if x: " => "else:",
                    _ => continue,
                };
                text.push_str(&"    ".repeat(at));
                text.push_str(clause);
                text.push('\n');
                text.push_str(&"    ".repeat(at + 1));
                // G004 and G014: no goto leaves those.
                let stays = well_formed && matches!(clause, "finally:" | "except* E as e:");
                text.push_str(if stays { "pass\n" } else { "goto .a\n" });
            }
        };
        let mut defined: Vec<&str> = Vec::new();
        for (dedent, mut line) in lines {
            indent = if opened {
                indent + 1
            } else {
                indent.saturating_sub(dedent).max(1)
            };
            close(&mut open, indent, &mut text);
            if well_formed {
                line = well_formed_line(line, &open, indent, &defined);
                if line.starts_with("label .") {
                    defined.push(line);
                }
            }
            text.push_str(&"    ".repeat(indent));
            text.push_str(line.trim_end());
            text.push('\n');
            opened = line.trim_end().ends_with(':');
            if opened {
                open.push((indent, line));
            }
        }
        if opened {
            text.push_str(&"    ".repeat(indent + 1));
            text.push_str("pass\n");
        }
        close(&mut open, 0, &mut text);
        if well_formed {
            for label in ["label .a", "label .b"] {
                if !defined.contains(&label) {
                    text.push_str("    ");
                    text.push_str(label);
                    text.push('\n');
                }
            }
        }
        text
    })
}

/// `line` as `program(true)` writes it at `indent` inside the blocks `open` (innermost
/// last), where the function itself is `async`: `pass` for a misused marker (`x = goto`,
/// `print(label .a)`, a stray `@goto`), a `case` outside a switch body, a label defined
/// again, `await` and `async` blocks outside an `async` function, `return` and `yield` in
/// a class body, `break` outside a loop and `continue` outside a loop or in a switch;
/// `return` for `return 1` where the function may be an async generator.
fn well_formed_line(
    line: &'static str,
    open: &[(usize, &'static str)],
    indent: usize,
    defined: &[&str],
) -> &'static str {
    const SCOPES: [&str; 3] = ["def f():", "async def g():", "class C:"];
    let openers = || open.iter().rev().map(|&(_, opener)| opener);
    let scope = openers().find(|opener| SCOPES.contains(opener));
    let is_async = matches!(scope, None | Some("async def g():"));
    let is_loop = |opener: &&str| {
        ["for ", "async for ", "while "]
            .iter()
            .any(|l| opener.starts_with(l))
    };
    let innermost_loop = openers()
        .take_while(|opener| !SCOPES.contains(opener))
        .find(is_loop);
    let in_switch_body = open
        .last()
        .is_some_and(|&(at, opener)| at + 1 == indent && opener == "while switch *x:");
    let keep = match line {
        "x = goto" | "print(label .a)" | "@goto" => false,
        "await x" | "async for i in x:" | "async with m:" => is_async,
        "return 1" if is_async => return "return",
        "return 1" | "yield x" => scope != Some("class C:"),
        "break" => innermost_loop.is_some(),
        "continue" => innermost_loop.is_some_and(|opener| opener != "while switch *x:"),
        _ if line.starts_with("case[") => in_switch_body,
        _ if line.starts_with("label .") => !defined.contains(&line),
        _ => true,
    };
    if keep { line } else { "pass" }
}

/// Checks and compiles `text`: no panic, no internal error, and emitted code that decodes.
/// Gives what `check` found, and what `compile` emitted when it succeeded.
fn check_and_compile(
    text: &str,
    options: Options,
) -> (
    Vec<gotopy::Diagnostic>,
    Option<rustpython_compiler::CodeObject>,
) {
    let source = Source::new("fuzz.py", text);
    let checked = catch_unwind(AssertUnwindSafe(|| check_source(&source, options)))
        .unwrap_or_else(|_| panic!("check panicked on:\n{text}"));
    assert!(
        !checked.iter().any(|d| d.code == Code::Internal),
        "{checked:?} on:\n{text}"
    );
    let compiled = catch_unwind(AssertUnwindSafe(|| compile_source(&source, options)))
        .unwrap_or_else(|_| panic!("compile panicked on:\n{text}"));
    let emitted = match compiled {
        Ok(compiled) => {
            gotopy::bytecode::disassemble(&compiled.code)
                .unwrap_or_else(|e| panic!("emitted code does not decode ({e}):\n{text}"));
            Some(compiled.code)
        }
        // A refusal by design or a bad program is fine; a failure inside gotopy is not.
        Err(CompileError::Rejected { diagnostics, .. }) => {
            let internal: Vec<_> = diagnostics
                .iter()
                .filter(|d| d.code == Code::Internal)
                .collect();
            assert!(internal.is_empty(), "{internal:?} on:\n{text}");
            None
        }
        // RustPython's own code generator refuses or panics on some programs.
        Err(CompileError::Codegen(_)) => None,
    };
    (checked, emitted)
}

/// Checks and compiles `text` both ways, then rewrites RustPython's own compile of it;
/// panics (failing the case) on any panic inside. Whether gotopy's compile reached the
/// rewrite: it emitted other code than RustPython's compiler does for the same text.
fn exercise(text: &str) -> bool {
    let emitted: Vec<_> = [Options::default(), Options::new().all_scopes(true)]
        .into_iter()
        .map(|options| {
            check_and_compile(text, options)
                .1
                .map(|code| marshal(&code))
        })
        .collect();
    // RustPython's own code generator panics on some programs: not gotopy's to test.
    let plain = catch_unwind(|| {
        rustpython_compiler::compile(
            text,
            rustpython_compiler::Mode::Exec,
            "fuzz.py",
            rustpython_compiler::CompileOpts::default(),
        )
    });
    let Ok(Ok(mut plain)) = plain else {
        return false;
    };
    let plain_bytes = marshal(&plain);
    let reached = (emitted.iter().flatten()).any(|bytes| *bytes != plain_bytes);
    {
        let rewritten = catch_unwind(AssertUnwindSafe(|| {
            gotopy::rewrite::rewrite_code(&mut plain)
        }))
        .unwrap_or_else(|_| panic!("the run-time rewrite panicked on:\n{text}"));
        match rewritten {
            Ok(_) => {
                gotopy::bytecode::disassemble(&plain)
                    .unwrap_or_else(|e| panic!("rewritten code does not decode ({e}):\n{text}"));
            }
            Err(error) => assert!(!error.internal, "{error} on:\n{text}"),
        }
    }
    reached
}

/// Deep nesting (issue 39): runs of the pieces `tests/deep/shapes.py` nests, one inside the
/// other, in a statement under a few blocks, from just a few levels to far past CPython's
/// bounds. A stack overflow would end the whole test process.
fn nesting() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(("(", ")")),
        Just(("[", "]")),
        Just(("{1: ", "}")),
        Just(("f(", ")")),
        Just(("a[", "]")),
        Just(("f'{", "}'")),
        Just(("[y for y in ", "]")),
        Just(("(w := ", ")")),
        Just(("-", "")),
        Just(("not ", "")),
        Just(("lambda: ", "")),
        Just(("lambda a, b=-1: ", "")),
        Just(("0 if c else ", "")),
        Just(("1 + ", "")),
        Just(("2 ** ", "")),
        Just(("", ".b")),
        Just(("", "()")),
        Just(("", "[0]")),
        Just(("", " and b or c")),
    ];
    let runs = prop::collection::vec((piece, 1usize..1_500), 1..5);
    (runs, 0usize..4).prop_map(|(runs, blocks)| {
        let mut open = String::new();
        let mut close = String::new();
        for ((prefix, suffix), count) in runs {
            open.push_str(&prefix.repeat(count));
            close.insert_str(0, &suffix.repeat(count));
        }
        let mut text = String::from("@goto\ndef f():\n    label .a\n    goto .a\n");
        for level in 0..blocks {
            text.push_str(&format!("{}if c:\n", "    ".repeat(level)));
        }
        text.push_str(&format!("{}x = {open}1{close}\n", "    ".repeat(blocks)));
        text
    })
}

/// Checks and compiles deep `text` (not RustPython's own compile, which has no bound): as
/// [`check_and_compile`], and its only errors are syntax errors.
fn exercise_deep(text: &str) {
    let (checked, _) = check_and_compile(text, Options::default());
    assert!(
        checked
            .iter()
            .all(|d| !d.is_error() || d.code == Code::SyntaxError),
        "{checked:?}"
    );
}

/// proptest's configuration from its environment variables, with a fixed seed unless
/// `PROPTEST_RNG_SEED` names one: a red run replays from its log, and a new seed is one
/// variable away.
fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(20261123);
    }
    // Failures are saved in, and replayed from, this file (from the package root, where
    // `cargo test` runs the tests): proptest's default looks for the file beside `lib.rs`
    // or `main.rs` above the test's source, which an integration test does not have, and
    // so saved and replayed nothing.
    config.failure_persistence = Some(Box::new(FileFailurePersistence::Direct(
        "tests/fuzz.proptest-regressions",
    )));
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        exercise(&text);
    }

    #[test]
    fn generated_python_never_panics(text in program(false)) {
        exercise(&text);
    }

}

/// As `generated_python_never_panics`, on programs made to get past `check`: and most of
/// them reach the rewrite (gotopy emits other code than RustPython's compiler), so that the
/// fuzzing exercises the lowering, not only the checker's refusals.
#[test]
fn well_formed_generated_python_never_panics() {
    let (cases, reached) = (Cell::new(0u32), Cell::new(0u32));
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let result = runner.run(&program(true), |text| {
        cases.set(cases.get() + 1);
        reached.set(reached.get() + u32::from(exercise(&text)));
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    let (cases, reached) = (cases.get(), reached.get());
    assert!(
        reached * 2 > cases,
        "only {reached} of {cases} well-formed programs reached the rewrite"
    );
    println!("{reached} of {cases} well-formed programs reached the rewrite");
}

proptest! {
    // Each case is a large module; a quarter of the default number of cases.
    #![proptest_config(ProptestConfig { cases: config().cases / 4, ..config() })]

    #[test]
    fn deep_nesting_never_crashes(text in nesting()) {
        exercise_deep(&text);
    }
}
