//! The code gotopy emits does not change by accident: a digest of every code object it emits
//! for the fixtures, for 2,000 random programs of the differential generator and (in a test
//! ignored unless asked for, `-- --include-ignored` as `.ci/run` runs it) for the standard
//! library, both by the compile path and by the run-time decorator's rewrite, is compared
//! with the digests recorded in `tests/emitted/`.
//!
//! This is a snapshot, not an oracle: it shows that a refactoring (of the bytecode layer, of
//! the rewrite) left the output byte for byte as it was. What the emitted code does is
//! asserted elsewhere (`compile`, `differential`, `switch`, `decorator`). A change that
//! means to change the output re-records the digests with `GOTOPY_BLESS=1` and says why.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::fmt::Write as _;

use gotopy::Source;
use gotopy::bytecode::marshal;
use gotopy::compile::{CompileError, compile_source};
use rustpython_compiler::{CompileOpts, Mode, compile};
use sha2::{Digest, Sha256};

#[path = "../benches/corpus.rs"]
mod corpus;

/// The first 16 hexadecimal digits of the SHA-256 of `bytes`.
fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// What gotopy emits for one file, as one line: the compile path's code (or the codes of
/// its refusal) and the run-time rewrite's (or its refusal).
fn emitted(path: &str, text: &str) -> String {
    let source = Source::new(path, text);
    let compiled = match compile_source(&source, common::fixture_options(text)) {
        Ok(compiled) => digest(&marshal(&compiled.code)),
        Err(CompileError::Rejected { diagnostics, .. }) => {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
            format!("rejected:{}", codes.join(","))
        }
        Err(other) => format!("failed:{}", digest(other.to_string().as_bytes())),
    };
    let decorated = match compile(text, Mode::Exec, path, CompileOpts::default()) {
        Err(_) => "-".to_owned(),
        Ok(mut code) => match gotopy::rewrite::rewrite_code(&mut code) {
            Ok(_) => digest(&marshal(&code)),
            Err(error) => format!("refused:{}", digest(error.message.as_bytes())),
        },
    };
    format!("{path} {compiled} {decorated}\n")
}

/// Compares the lines of `files` with `tests/emitted/{name}.txt`, or records them there
/// when `GOTOPY_BLESS=1`.
fn assert_unchanged(name: &str, files: &[(String, String)]) {
    assert!(!files.is_empty());
    let got: String = common::in_halves(files, |(path, text)| emitted(path, text)).concat();
    // An internal error is a failing test, never a recording: blessing cannot take one in.
    // (`failed:` is RustPython's own compiler rejecting a file, as it does without gotopy.)
    let internal: Vec<&str> = got.lines().filter(|line| line.contains("G900")).collect();
    assert!(
        internal.is_empty(),
        "internal errors in gotopy:\n{}",
        internal.join("\n")
    );
    let recorded = common::root().join(format!("tests/emitted/{name}.txt"));
    if std::env::var_os("GOTOPY_BLESS").is_some() {
        std::fs::write(&recorded, &got).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&recorded).unwrap();
    let changed: Vec<String> = got
        .lines()
        .zip(expected.lines())
        .filter(|(got, expected)| got != expected)
        .map(|(got, expected)| format!("  now {got}\n  was {expected}"))
        .collect();
    assert!(
        changed.is_empty() && got.lines().count() == expected.lines().count(),
        "the emitted code of {} file(s) changed ({} lines now, {} recorded):\n{}",
        changed.len(),
        got.lines().count(),
        expected.lines().count(),
        changed.join("\n")
    );
}

#[test]
fn fixtures_emit_the_recorded_code() {
    let mut files = Vec::new();
    for dir in ["fixtures/ok", "fixtures/err", "examples"] {
        for path in common::python_files(dir) {
            let text = std::fs::read_to_string(&path).unwrap();
            files.push((common::shown(&path), text));
        }
    }
    assert_unchanged("fixtures", &files);
}

#[test]
fn random_programs_emit_the_recorded_code() {
    // A seed of its own, fixed whatever `GOTOPY_DIFF_SEED` says: the digests belong to it.
    // 500 programs (2,000 until 2026-11-30, the first 500 the same): a snapshot, while
    // `tests/differential.rs` runs 2,000 against an oracle.
    let dir = common::generate_programs("emitted", 20261123, 500);
    let programs: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("programs.json")).unwrap()).unwrap();
    let files: Vec<(String, String)> = programs
        .into_iter()
        .enumerate()
        .map(|(index, text)| (format!("program{index}.py"), text))
        .collect();
    assert_unchanged("programs", &files);
}

#[test]
#[ignore = "the standard library, slow in a debug build: `-- --include-ignored` (CI) or `--ignored`"]
fn standard_library_emits_the_recorded_code() {
    assert_unchanged("stdlib", &corpus::stdlib_sources());
}
