//! Compiling with goto: every `fixtures/ok` fixture compiles to code objects that pass the
//! verifier, runs with exit status 0, and checks what it computes with its own assertions
//! (snapshot: the rewritten disassembly and what `gotopy run` prints). An internal error
//! (`G900`) fails every test. A module
//! without markers in a rewritten scope compiles byte for byte as the plain RustPython
//! compiler compiles it (the fixtures always; CPython's standard library in a test that is
//! ignored unless asked for, `-- --include-ignored` as `.ci/run` runs it).

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
fn ok_fixtures_compile_and_run() {
    insta::glob!("../fixtures/ok", "*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let source = Source::new(common::shown(path), text.clone());
        let compiled = match compile_source(&source, common::fixture_options(&text)) {
            Ok(compiled) => compiled,
            Err(CompileError::Rejected { diagnostics, .. }) => panic!(
                "{}: an ok fixture must compile:\n{}",
                path.display(),
                render_text(&diagnostics, &source, false)
            ),
            Err(error) => panic!("{}: {error}", path.display()),
        };
        let listing = disassemble(&compiled.code).expect("emitted code decodes");
        // The oracle: the fixture's own assertions, which must be there and must hold.
        assert!(
            text.lines()
                .any(|line| line.trim_start().starts_with("assert ")),
            "{}: an ok fixture checks what it computes with `assert`",
            path.display()
        );
        let (status, run) = run_output(path);
        assert_eq!(status, Some(0), "{}: {run}", path.display());
        insta::assert_snapshot!(format!("{listing}--- gotopy run ---\n{run}"));
    });
}

/// What `gotopy run FILE` prints (stderr only if it failed) with its exit status, and that
/// status.
fn run_output(path: &std::path::Path) -> (Option<i32>, String) {
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
    let status = output.status.code();
    (
        status,
        format!("{shown}(exit status {})\n", status.unwrap_or(-1)),
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
fn code_under_a_literal_test_survives_and_its_guard_leaves_a_jump() {
    // The code generator drops the body of `if False:`; the guard `if not label:` keeps it,
    // and the rewrite turns the guard into a jump over it.
    let source = Source::new(
        "t.py",
        "@goto\ndef f():\n    goto .x\n    if False:\n        label .x\n        return 2\n    return 1\n",
    );
    let compiled = compile_source(&source, Options::default()).unwrap();
    let listing = disassemble(&compiled.code).unwrap();
    assert!(!listing.contains("label"), "{listing}");
    assert!(!listing.contains("TO_BOOL"), "{listing}");
    assert!(listing.contains("RETURN_VALUE"), "{listing}");
    assert!(
        listing.matches("LOAD_CONST").count() >= 2,
        "both returns: {listing}"
    );
}

/// Every file RustPython compiles compiles with gotopy to the same bytes; every file it
/// rejects, gotopy rejects for the same reason. None of `files` has a rewritten scope.
fn assert_plain_files_compile_identically(files: &[(String, String)]) {
    assert!(!files.is_empty());
    for (path, text) in files {
        let plain = match compile(text, Mode::Exec, path, CompileOpts::default()) {
            Ok(plain) => plain,
            Err(error) => {
                assert_same_failure(path, text, &error);
                continue;
            }
        };
        let source = Source::new(path.as_str(), text.as_str());
        match compile_source(&source, Options::default()) {
            Ok(compiled) => assert!(
                marshal(&compiled.code) == marshal(&plain),
                "{path}: differs from the plain compile"
            ),
            Err(error) => panic!("{path}: RustPython compiles it, gotopy fails: {error:?}"),
        }
    }
}

/// A file RustPython cannot compile fails with gotopy too, for the same reason: a code
/// generator error with the same message, or a syntax error (`G000`) on the same line, or
/// on the line of a bracket left open before it, which gotopy blames as CPython does.
fn assert_same_failure(path: &str, text: &str, plain: &rustpython_compiler::CompileError) {
    let source = Source::new(path, text);
    match (compile_source(&source, Options::default()), plain) {
        (Err(CompileError::Codegen(message)), rustpython_compiler::CompileError::Codegen(_)) => {
            assert_eq!(message, plain.to_string(), "{path}")
        }
        (
            Err(CompileError::Rejected { diagnostics, .. }),
            rustpython_compiler::CompileError::Parse(_),
        ) => {
            let [diagnostic] = diagnostics.as_slice() else {
                panic!("{path}: expected one syntax error, got {diagnostics:?}");
            };
            assert_eq!(diagnostic.code, Code::SyntaxError, "{path}");
            let line = source.location(diagnostic.range.start()).line;
            let plain_line = plain.python_location().0;
            let blamed_bracket = diagnostic.message.contains("was never closed");
            assert!(
                line == plain_line || (blamed_bracket && line < plain_line),
                "{path}: gotopy says line {line}, RustPython line {plain_line}"
            );
        }
        (other, _) => panic!(
            "{path}: RustPython fails with {plain}, gotopy gives {:?}",
            other.map(|_| ())
        ),
    }
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
#[ignore = "the standard library, slow in a debug build: `-- --include-ignored` (CI) or `--ignored`"]
fn standard_library_compiles_as_rustpython_does() {
    assert_plain_files_compile_identically(&corpus::stdlib_sources());
}

/// Files RustPython rejects, in its parser and in its code generator.
#[test]
fn files_rustpython_rejects_fail_the_same_way() {
    let files = [
        ("syntax.py", "x = (1,\ny = 2\n"),
        ("bad.py", "def f(:\n    pass\n"),
        ("outside.py", "return 1\n"),
        ("await.py", "await x\n"),
    ]
    .map(|(path, text)| (path.to_owned(), text.to_owned()));
    for (path, text) in &files {
        let plain = compile(text, Mode::Exec, path, CompileOpts::default())
            .expect_err("RustPython rejects it");
        assert_same_failure(path, text, &plain);
    }
}

/// RustPython 0.5.0's code generator panics on some valid programs (here a `return` in a
/// handler inside a `while` in a `finally` body after a `for` with `return`): an error of
/// the file, not a crash of gotopy.
#[test]
fn code_generator_panics_are_errors() {
    let text = "\
def runner(q, quitting):
    try:
        for item in q:
            if quitting:
                return
    finally:
        while True:
            try:
                q.put(1)
            except ValueError:
                if quitting:
                    return
                continue
            else:
                break
";
    match compile_source(&Source::new("p.py", text), Options::default()) {
        Err(CompileError::Codegen(message)) => assert!(
            message.contains("code generator failed") && message.contains("StackUnderflow"),
            "{message}"
        ),
        other => panic!(
            "expected a code generator error, got {:?}",
            other.map(|_| ())
        ),
    }
    let path = common::write("panic.py", text);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .arg("compile")
        .arg(&path)
        .arg("-o")
        .arg(path.with_extension("rpyc"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("code generator failed on this file"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked at"), "{stderr}");
}

/// `gotopy compile PATH... --out-dir DIR`: files under a directory keep their relative path,
/// file arguments go to DIR/<name>; each output is the marshalled code object (byte for
/// byte RustPython's for files without markers); files are compiled in parallel but their
/// diagnostics come in input order, and one bad file does not stop the others.
#[test]
fn compile_writes_a_tree_of_code_objects() {
    let dir = common::Scratch::dir("compile");
    let tree = dir.join("tree");
    let mut expected = Vec::new();
    for i in 0..40 {
        let relative = format!("pkg{}/m{i}.py", i % 3);
        let text = format!("def f{i}(x):\n    return x * {i}\n");
        std::fs::create_dir_all(tree.join(format!("pkg{}", i % 3))).unwrap();
        std::fs::write(tree.join(&relative), &text).unwrap();
        expected.push((relative, text));
    }
    for name in ["a_bad.py", "z_bad.py"] {
        let text = "from goto import goto\n@goto\ndef f():\n    goto .nowhere\n";
        std::fs::write(tree.join(name), text).unwrap();
    }
    let single = dir.join("single.py");
    std::fs::write(&single, "print('single')\n").unwrap();
    let out = dir.join("out");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .arg("compile")
        .arg(&tree)
        .arg(&single)
        .arg("--out-dir")
        .arg(&out)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.find("a_bad.py").expect("a_bad.py reported");
    let last = stderr.find("z_bad.py").expect("z_bad.py reported");
    assert!(first < last, "{stderr}");
    assert!(stderr.contains("G002"), "{stderr}");
    assert!(!out.join("a_bad.rpyc").exists() && !out.join("z_bad.rpyc").exists());
    for (relative, text) in &expected {
        let path = tree.join(relative);
        let plain = compile(
            text,
            Mode::Exec,
            &path.to_string_lossy(),
            CompileOpts::default(),
        )
        .unwrap();
        let written = std::fs::read(out.join(relative).with_extension("rpyc")).unwrap();
        assert!(written == marshal(&plain), "{relative} differs");
    }
    let plain = compile(
        "print('single')\n",
        Mode::Exec,
        &single.to_string_lossy(),
        CompileOpts::default(),
    )
    .unwrap();
    assert!(std::fs::read(out.join("single.rpyc")).unwrap() == marshal(&plain));
}
