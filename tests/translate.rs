//! `gotopy translate` (issue 26): translated programs run under plain Pythons, gotopy nowhere
//! importable (`-I -S`), and must print what the goto program prints. Oracles: `gotopy run`
//! for the fixtures (whose own assertions run too), the differential generator's reference
//! interpreter for random programs (`tests/differential/programs.py`).

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The plain Pythons a translation runs on: CPython 3.11 to 3.15, PyPy 3.11 and MicroPython
/// (`tools/pythons`), and CPython 3.8, 3.9 and 3.10 where pyenv has them; only those that
/// `GOTOPY_TRANSLATE_PYTHONS` names when it is set (`3.11,3.13,pypy3.11`).
fn interpreters() -> Vec<(String, PathBuf)> {
    let mut all = every_interpreter();
    if let Ok(names) = std::env::var("GOTOPY_TRANSLATE_PYTHONS") {
        let names: Vec<&str> = names.split(',').map(str::trim).collect();
        all.retain(|(version, _)| names.contains(&version.as_str()));
        assert!(
            !all.is_empty(),
            "GOTOPY_TRANSLATE_PYTHONS names none of them"
        );
    }
    all
}

fn every_interpreter() -> Vec<(String, PathBuf)> {
    let mut all = cpython::pythons();
    all.push(("pypy3.11".to_owned(), cpython::pypy()));
    all.push(("micropython".to_owned(), cpython::micropython()));
    let pyenv = std::env::var("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".pyenv"));
    for old in ["3.8", "3.9", "3.10"] {
        let found = std::fs::read_dir(pyenv.join("versions"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .find(|path| {
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{old}.")))
            });
        if let Some(dir) = found {
            all.push((old.to_owned(), dir.join(format!("bin/python{old}"))));
        }
    }
    all
}

fn minor(version: &str) -> u32 {
    version
        .split('.')
        .nth(1)
        .and_then(|minor| minor.parse().ok())
        .unwrap_or(0)
}

fn translate(input: &Path, output: &Path, all_scopes: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gotopy"));
    command.arg("translate").arg(input).arg("-o").arg(output);
    if all_scopes {
        command.arg("--all-scopes");
    }
    command.output().unwrap()
}

/// How an interpreter runs a file with nothing of gotopy's: CPython and PyPy isolated
/// (`-I -S`), MicroPython (which has neither option, nor the packages) with a heap that
/// holds 2,000 programs.
fn plain_args(python: &Path) -> &'static [&'static str] {
    if python.ends_with("micropython") {
        &["-X", "heapsize=1024M"]
    } else {
        &["-I", "-S"]
    }
}

fn plain_run(python: &Path, file: &Path) -> Output {
    Command::new(python)
        .args(plain_args(python))
        .arg(file.file_name().unwrap())
        .current_dir(file.parent().unwrap())
        .output()
        .unwrap()
}

#[test]
fn every_fixture_translated_prints_what_gotopy_run_prints() {
    let dir = std::env::temp_dir().join(format!("gotopy-translate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pythons = interpreters();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(common::root().join("fixtures/ok"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let options = common::fixture_options(&text);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = dir.join(&name);
        let translated = translate(&path, &out, options.all_scopes);
        assert!(
            translated.status.success(),
            "{name}: translate failed\n{}",
            String::from_utf8_lossy(&translated.stderr)
        );
        let output = std::fs::read_to_string(&out).unwrap();
        // A program that uses the goto module itself (not only its markers) keeps its
        // import, so it needs gotopy installed: the one fixture that does is run by the
        // CPython package's own tests instead.
        if output
            .lines()
            .any(|line| line.trim_start().starts_with("import goto"))
        {
            assert_eq!(name, "marker_names_imported_or_global.py");
            continue;
        }
        let gotopy_line = |line: &str| {
            let line = line.trim_start();
            [
                "from goto",
                "import gotopy",
                "from gotopy",
                "@goto",
                "@gotopy.",
                "@with_goto",
                "@switch",
            ]
            .iter()
            .any(|start| line.starts_with(start))
        };
        assert!(
            !output.lines().any(gotopy_line),
            "{name}: the translation still uses gotopy:\n{output}"
        );
        let args: &[&str] = if options.all_scopes {
            &["--all-scopes"]
        } else {
            &[]
        };
        let expected = common::gotopy_run(&path, args);
        // The fixtures use syntax of 3.11 (`except*`, `match`): the older Pythons and
        // MicroPython run the random programs below.
        for (version, python) in pythons.iter().filter(|(version, _)| minor(version) >= 11) {
            let got = plain_run(python, &out);
            compared += 1;
            if got.stdout != expected.stdout || got.status.code() != expected.status.code() {
                failures.push(format!(
                    "{name} on {version}: expected\n{}\ngot\n{}",
                    cpython::shown(&expected),
                    cpython::shown(&got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared > 200, "only {compared} runs compared");
}

/// Programs per generated module: a module of 100,000 programs would take each interpreter
/// minutes to compile, so larger runs go in modules of this many, each with a seed of its
/// own (the given seed plus the module's number).
const PROGRAMS_PER_MODULE: usize = 2000;

#[test]
fn random_programs_translated_match_the_reference_interpreter() {
    let (seed, count) = common::seed_and_size("GOTOPY_TRANSLATE", 1000);
    let pythons = interpreters();
    for (index, start) in (0..count).step_by(PROGRAMS_PER_MODULE).enumerate() {
        let size = PROGRAMS_PER_MODULE.min(count - start);
        translated_programs_agree(seed + index as u64, size, &pythons);
    }
}

/// Generates `count` programs from `seed`, translates them as one module, and runs the
/// translation on every interpreter at once.
fn translated_programs_agree(seed: u64, count: usize, pythons: &[(String, PathBuf)]) {
    let dir = common::generate_programs("translate", seed, count);
    let out = dir.join("translated.py");
    let translated = translate(&dir.join("module.py"), &out, false);
    assert!(
        translated.status.success(),
        "seed {seed}: translate failed\n{}",
        String::from_utf8_lossy(&translated.stderr)
    );
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    assert!(
        expected.lines().count() > count,
        "seed {seed}: too few calls"
    );
    let running: Vec<_> = pythons
        .iter()
        .map(|(version, python)| {
            let child = Command::new(python)
                .args(plain_args(python))
                .arg("translated.py")
                .current_dir(&dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (version, child)
        })
        .collect();
    for (version, child) in running {
        let got = child.wait_with_output().unwrap();
        assert!(
            got.status.success(),
            "seed {seed}, {version}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        let got = String::from_utf8_lossy(&got.stdout);
        let mismatches: Vec<(&str, &str)> = expected
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(3)
            .collect();
        assert!(
            mismatches.is_empty() && expected.lines().count() == got.lines().count(),
            "seed {seed}, {version}: the translation disagrees with the reference: {mismatches:#?}"
        );
    }
}

#[test]
fn a_file_check_rejects_is_not_translated() {
    let path = common::write(
        "translate_rejected.py",
        "from goto import goto\n\n@goto\ndef f():\n    goto .nowhere\n",
    );
    let out = path.with_extension("out.py");
    let output = translate(&path, &out, false);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("G002"));
    assert!(!out.exists());
}

/// PyPy 3.11 (8.0.1) miscompiles a `with` left early more than once (its handler stays on
/// after the first exit): an exception raised after the later exit calls a stale `__exit__`
/// or crashes the interpreter, for plain Python too. A translated goto function leaves
/// every `with` early at most once (docs/translate.md), so this one runs there; the `return`s
/// of an async generator stay bare.
#[test]
fn a_with_left_by_two_returns_runs_on_pypy() {
    let path = common::write(
        "translate_two_returns.py",
        r#"from goto import goto, label


class Manager:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append(f"enter {self.name}")

    def __exit__(self, kind, value, tb):
        self.log.append(f"exit {self.name} {kind.__name__ if kind else None}")


@goto
def twice(log, x):
    try:
        label .again
        x += 1
        if x < 2:
            goto .again
        with Manager(log, "outer"):
            with Manager(log, "inner"):
                if x > 9:
                    return "big"
                return "small"
    finally:
        raise KeyError(x)


@goto
async def numbers(log, n):
    label .top
    with Manager(log, n):
        if n > 3:
            return
        yield n
        n += 1
        if n == 2:
            return
        goto .top


async def main():
    for n in (0, 4):
        log = []
        print([x async for x in numbers(log, n)], log)


for x in (0, 10):
    log = []
    try:
        twice(log, x)
    except KeyError as error:
        print(x, log, error)
import asyncio
asyncio.run(main())
"#,
    );
    let out = path.with_extension("out.py");
    assert!(translate(&path, &out, false).status.success());
    let expected = common::gotopy_run(&path, &[]);
    assert!(expected.status.success(), "{}", cpython::shown(&expected));
    let got = plain_run(&cpython::pypy(), &out);
    assert_eq!(
        (got.status.code(), &got.stdout),
        (Some(0), &expected.stdout),
        "{}",
        cpython::shown(&got)
    );
}
