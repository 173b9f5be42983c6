//! Decoding a code object into an instruction list and assembling it again, with no edits,
//! reproduces it byte for byte (in RustPython's marshal format), and every code object the
//! plain RustPython compiler emits passes gotopy's verifier.
//!
//! The fixtures always; CPython's standard library in a test ignored unless asked for
//! (`-- --include-ignored`, as `.ci/run` runs it).

use gotopy::bytecode::{Body, for_each_code_mut, marshal};
use rustpython_compiler::{CompileOpts, Mode, compile};

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[path = "../benches/corpus.rs"]
mod corpus;

/// Decodes and reassembles every code object of `text`; `None` if RustPython cannot
/// compile it.
fn roundtrip(path: &str, text: &str) -> Option<Result<(), String>> {
    let original = compile(text, Mode::Exec, path, CompileOpts::default()).ok()?;
    let mut copy = original.clone();
    let result = for_each_code_mut(&mut copy, &mut |code| {
        let depth = code.max_stackdepth;
        let body = Body::decode(code).map_err(|e| format!("{}: decode: {e}", code.qualname))?;
        body.assemble(code)
            .map_err(|e| format!("{}: assemble: {e}", code.qualname))?;
        if code.max_stackdepth != depth {
            return Err(format!(
                "{}: max stack depth {} recomputed as {}",
                code.qualname, depth, code.max_stackdepth
            ));
        }
        Ok(())
    });
    Some(result.and_then(|()| {
        if marshal(&copy) == marshal(&original) {
            Ok(())
        } else {
            Err("reassembled code differs".to_owned())
        }
    }))
}

fn assert_all_roundtrip(files: &[(String, String)]) {
    let mut failures = Vec::new();
    let mut compiled = 0;
    let results = common::in_halves(files, |(path, text)| roundtrip(path, text));
    for ((path, _), result) in files.iter().zip(results) {
        match result {
            None => {}
            Some(Ok(())) => compiled += 1,
            Some(Err(why)) => failures.push(format!("{path}: {why}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files do not round-trip:\n{}",
        failures.len(),
        compiled + failures.len(),
        failures.join("\n")
    );
    assert!(compiled > 0);
}

#[test]
fn fixtures_roundtrip() {
    let files: Vec<_> = ["fixtures/ok", "fixtures/err", "examples"]
        .iter()
        .flat_map(|dir| common::python_files(dir))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path.display().to_string(), text)
        })
        .collect();
    assert_all_roundtrip(&files);
}

#[test]
#[ignore = "the standard library, slow in a debug build: `-- --include-ignored` (CI) or `--ignored`"]
fn standard_library_roundtrips() {
    let files = corpus::stdlib_sources();
    assert!(files.len() > 1000, "found only {} files", files.len());
    assert_all_roundtrip(&files);
}
