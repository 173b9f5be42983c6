//! Corpus test: every file of CPython's standard library that RustPython's parser accepts
//! checks without a panic and without an error (the standard library uses no markers in
//! rewritten scopes), and every file it rejects gives exactly one syntax error.
//!
//! Slow in a debug build, so it is ignored unless asked for: `cargo test --test stdlib --
//! --ignored`, or `-- --include-ignored` as `.ci/run` runs every test.

use std::panic::{AssertUnwindSafe, catch_unwind};

use gotopy::{Code, Options, Source, check_source};

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[path = "../benches/corpus.rs"]
mod corpus;

#[test]
#[ignore = "the standard library, slow in a debug build: `-- --include-ignored` (CI) or `--ignored`"]
fn standard_library_checks_without_internal_errors() {
    let files = corpus::stdlib_sources();
    assert!(files.len() > 1000, "found only {} files", files.len());
    let (mut syntax_errors, mut warnings) = (0, 0);
    for options in [Options::default(), Options::new().all_scopes(true)] {
        let counts = common::in_halves(&files, |(path, text)| {
            let source = Source::new(path.clone(), text.clone());
            let diagnostics = catch_unwind(AssertUnwindSafe(|| check_source(&source, options)))
                .unwrap_or_else(|_| panic!("check panicked on {path}"));
            let parses = rustpython_compiler::parser::parse_module(text).is_ok();
            let syntax = diagnostics
                .iter()
                .filter(|d| d.code == Code::SyntaxError)
                .count();
            assert_eq!(syntax, usize::from(!parses), "{path}: {diagnostics:?}");
            let errors: Vec<_> = diagnostics
                .iter()
                .filter(|d| d.is_error() && d.code != Code::SyntaxError)
                .collect();
            assert!(errors.is_empty(), "{path}: {errors:?}");
            (syntax, diagnostics.len() - syntax)
        });
        for (syntax, others) in counts {
            syntax_errors += syntax;
            warnings += others;
        }
    }
    eprintln!(
        "checked {} files twice: {syntax_errors} syntax errors, {warnings} warnings",
        files.len()
    );
}
