//! Fuzzing with proptest (a coverage-guided `cargo fuzz` target needs a nightly toolchain,
//! which these machines do not have): `check` and `compile` on arbitrary text and on
//! generated Python dense in markers and compound statements, with and without
//! `--all-scopes`. Neither may panic; whatever `compile` emits has passed the verifier
//! inside `assemble`, and must decode and disassemble again; the run-time rewrite of a
//! plainly compiled module must not panic either and, when it succeeds, must leave code
//! that decodes.
//!
//! The seed is fixed; `PROPTEST_RNG_SEED=N` runs another.
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz` runs longer; failures are
//! shrunk and saved under `tests/fuzz.proptest-regressions`, replayed on every run.

use std::panic::{AssertUnwindSafe, catch_unwind};

use gotopy::compile::{CompileError, compile_source};
use gotopy::{Code, Options, Source, check_source};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

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

fn program() -> impl Strategy<Value = String> {
    proptest::collection::vec(line(), 1..30).prop_map(|lines| {
        let mut text =
            String::from("from goto import goto, label, switch, case\n@goto\ndef f(x, m, k, E):\n");
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
                text.push_str("goto .a\n");
            }
        };
        for (dedent, line) in lines {
            indent = if opened {
                indent + 1
            } else {
                indent.saturating_sub(dedent).max(1)
            };
            close(&mut open, indent, &mut text);
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
        text
    })
}

/// Checks and compiles `text` both ways; panics (failing the case) on any panic inside.
fn exercise(text: &str) {
    for options in [Options::default(), Options::new().all_scopes(true)] {
        let source = Source::new("fuzz.py", text);
        let checked = catch_unwind(AssertUnwindSafe(|| check_source(&source, options)))
            .unwrap_or_else(|_| panic!("check panicked on:\n{text}"));
        assert!(
            !checked.iter().any(|d| d.code == Code::Internal),
            "{checked:?} on:\n{text}"
        );
        let compiled = catch_unwind(AssertUnwindSafe(|| compile_source(&source, options)))
            .unwrap_or_else(|_| panic!("compile panicked on:\n{text}"));
        match compiled {
            Ok(compiled) => {
                gotopy::bytecode::disassemble(&compiled.code)
                    .unwrap_or_else(|e| panic!("emitted code does not decode ({e}):\n{text}"));
            }
            // A refusal by design or a bad program is fine; a failure inside gotopy is not.
            Err(CompileError::Rejected { diagnostics, .. }) => {
                let internal: Vec<_> = diagnostics
                    .iter()
                    .filter(|d| d.code == Code::Internal)
                    .collect();
                assert!(internal.is_empty(), "{internal:?} on:\n{text}");
            }
            // RustPython's own code generator refuses or panics on some programs.
            Err(CompileError::Codegen(_)) => {}
        }
    }
    // RustPython's own code generator panics on some programs: not gotopy's to test.
    let plain = catch_unwind(|| {
        rustpython_compiler::compile(
            text,
            rustpython_compiler::Mode::Exec,
            "fuzz.py",
            rustpython_compiler::CompileOpts::default(),
        )
    });
    if let Ok(Ok(mut plain)) = plain {
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
}

/// proptest's configuration from its environment variables, with a fixed seed unless
/// `PROPTEST_RNG_SEED` names one: a red run replays from its log, and a new seed is one
/// variable away.
fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(20261123);
    }
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        exercise(&text);
    }

    #[test]
    fn generated_python_never_panics(text in program()) {
        exercise(&text);
    }
}
