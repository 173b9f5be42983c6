//! `gotopy check` tells the whole truth (issue 67): for every fixture (`ok` and `err`), every
//! example and every program of `tests/programs`, the errors `check` reports are exactly the
//! errors each route refuses the module with, by code: RustPython's compile and `translate`
//! here, each CPython's `gotopy.compile` in `python/tests/test_run.py`, and the random
//! programs in `tests/differential.rs`. A module `check` passes compiles on every route; one
//! it rejects is rejected for the same reasons, never for others found later.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::collections::BTreeSet;

use gotopy::compile::{CompileError, compile_source};
use gotopy::translate::translate_source;
use gotopy::{Diagnostic, Source, check_source};

/// The codes of the errors among `diagnostics`.
fn errors(diagnostics: &[Diagnostic]) -> BTreeSet<&'static str> {
    (diagnostics.iter())
        .filter(|d| d.is_error())
        .map(|d| d.code.as_str())
        .collect()
}

/// The codes a route refused a module with (none when it compiled it).
fn refused<T>(result: Result<T, CompileError>, path: &str) -> BTreeSet<&'static str> {
    match result {
        Ok(_) => BTreeSet::new(),
        Err(CompileError::Rejected { diagnostics, .. }) => errors(&diagnostics),
        // RustPython's code generator refusing a module it cannot compile even without goto
        // is the interpreter's own error; no input here is such a module.
        Err(error) => panic!("{path}: {error}"),
    }
}

#[test]
fn every_route_refuses_exactly_what_check_reports() {
    let mut paths = Vec::new();
    for dir in ["fixtures/ok", "fixtures/err", "examples", "tests/programs"] {
        paths.extend(common::python_files(dir));
    }
    let mut rejected = 0;
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let shown = common::shown(path);
        let source = Source::new(shown.clone(), text.clone());
        let options = common::fixture_options(&text);
        let checked = errors(&check_source(&source, options));
        let compiled = refused(compile_source(&source, options), &shown);
        let translated = refused(translate_source(&source, options), &shown);
        assert_eq!(
            (&compiled, &translated),
            (&checked, &checked),
            "{shown}: check reports {checked:?}; RustPython refuses {compiled:?}, translate \
             {translated:?}"
        );
        rejected += usize::from(!checked.is_empty());
    }
    // Both verdicts are met: every `err` fixture is rejected, and most inputs are not.
    assert_eq!(rejected, common::python_files("fixtures/err").len());
    assert!(paths.len() > 2 * rejected, "{} inputs", paths.len());
}
