//! Compiling with goto: every `fixtures/ok` fixture either compiles to code objects that pass
//! the verifier (snapshot: the rewritten disassembly and what `gotopy run` prints) or is refused with `G200`, naming what
//! is not supported yet (snapshot: the refusal); a module without markers in a rewritten
//! scope compiles byte for byte as the plain RustPython compiler compiles it (the fixtures
//! always, CPython's standard library with `GOTOPY_STDLIB=1`).

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use gotopy::bytecode::{disassemble, marshal};
use gotopy::compile::{CompileError, compile_source};
use gotopy::diagnostic::render_text;
use gotopy::{Code, Options, Source};
use rustpython_compiler::{CompileOpts, Mode, compile};

#[path = "../benches/corpus.rs"]
mod corpus;

#[test]
fn ok_fixtures_compile_or_are_refused() {
    insta::glob!("../fixtures/ok", "*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let source = Source::new(common::shown(path), text.clone());
        let shown = match compile_source(&source, common::fixture_options(&text)) {
            Ok(compiled) => {
                let listing = disassemble(&compiled.code).expect("emitted code decodes");
                format!("{listing}--- gotopy run ---\n{}", run_output(path))
            }
            Err(CompileError::Rejected(diagnostics)) => {
                let errors: Vec<_> = diagnostics.iter().filter(|d| d.is_error()).collect();
                assert!(
                    errors.iter().all(|d| d.code == Code::CannotRewrite),
                    "{}: only G200 may refuse an ok fixture:\n{}",
                    path.display(),
                    render_text(&diagnostics, &source, false)
                );
                render_text(&diagnostics, &source, false)
            }
            Err(error) => panic!("{}: {error}", path.display()),
        };
        insta::assert_snapshot!(shown);
    });
}

/// What `gotopy run FILE` prints and its exit status (stderr only if it failed).
fn run_output(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_gotopy"));
    command.arg("run");
    if common::fixture_options(&text).all_scopes {
        command.arg("--all-scopes");
    }
    let output = command
        .arg(common::shown(path))
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .output()
        .expect("gotopy runs");
    let mut shown = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        shown.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    format!(
        "{shown}(exit status {})\n",
        output.status.code().unwrap_or(-1)
    )
}

/// The goto of `for` bodies lowers to one `POP_ITER` per loop left, then the jump.
#[test]
fn goto_out_of_eleven_for_loops_pops_eleven_iterators() {
    let path = common::root().join("fixtures/ok/eleven_nested_for_loops.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let compiled = compile_source(&Source::new("f.py", text), Options::default()).unwrap();
    let listing = disassemble(&compiled.code).unwrap();
    let run = listing
        .lines()
        .skip_while(|line| !line.contains("POP_ITER"))
        .take_while(|line| line.contains("POP_ITER"))
        .count();
    assert_eq!(run, 11, "{listing}");
    // Inside the function, no marker is left: neither `goto` nor `label` is loaded.
    let function = listing
        .split("\n\n")
        .find(|block| block.starts_with("Disassembly of nth_bit_pattern"))
        .expect("the function is listed");
    assert!(
        !function.contains("goto") && !function.contains("label"),
        "{function}"
    );
}

#[test]
fn labels_after_return_survive_and_guards_leave_nothing() {
    let source = Source::new(
        "t.py",
        "@goto\ndef f(n):\n    goto .b\n    return 1\n    label .b\n    return 2\n",
    );
    let compiled = compile_source(&source, Options::default()).unwrap();
    let listing = disassemble(&compiled.code).unwrap();
    // The guard `if label:` is gone: no `label` is loaded and nothing tests a value.
    assert!(!listing.contains("label"), "{listing}");
    assert!(!listing.contains("TO_BOOL"), "{listing}");
    assert!(listing.contains("JUMP_FORWARD"), "{listing}");
}

#[test]
fn a_label_the_compiler_removes_is_refused() {
    // `if False:` bodies are dropped by the code generator; gotopy does not guard them.
    let source = Source::new(
        "t.py",
        "@goto\ndef f():\n    goto .x\n    if False:\n        label .x\n    return 1\n",
    );
    match compile_source(&source, Options::default()) {
        Err(CompileError::Rejected(diagnostics)) => {
            assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
            assert_eq!(diagnostics[0].code, Code::CannotRewrite);
            assert!(diagnostics[0].message.contains("`.x`"), "{diagnostics:?}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}

fn assert_plain_files_compile_identically(files: &[(String, String)]) {
    let mut compared = 0;
    for (path, text) in files {
        let Ok(plain) = compile(text, Mode::Exec, path, CompileOpts::default()) else {
            continue;
        };
        let source = Source::new(path.as_str(), text.as_str());
        match compile_source(&source, Options::default()) {
            Ok(compiled) => assert!(
                marshal(&compiled.code) == marshal(&plain),
                "{path}: differs from the plain compile"
            ),
            // Rewritten scopes (only in the fixtures) legitimately differ.
            Err(_) => continue,
        }
        compared += 1;
    }
    assert!(compared > 0);
}

#[test]
fn files_without_rewritten_markers_compile_as_rustpython_does() {
    let root = common::root();
    let files: Vec<_> = ["fixtures/ok/markers_not_rewritten_warning.py"]
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            (file.to_string(), text)
        })
        .collect();
    assert_plain_files_compile_identically(&files);
}

#[test]
fn standard_library_compiles_as_rustpython_does() {
    if std::env::var_os("GOTOPY_STDLIB").is_none() {
        eprintln!("skipped: set GOTOPY_STDLIB=1 to compile the standard library");
        return;
    }
    assert_plain_files_compile_identically(&corpus::stdlib_sources());
}
