//! The Python package on CPython 3.11 to 3.15: `python/tests/test_check.py` (the package's
//! `check` against the binary, with `GOTOPY_BIN` set to this build's `gotopy`),
//! `test_run.py` (the CPython backend), `test_pyc.py` (standalone `.pyc` files),
//! `test_cli.py` (`run`'s forms and `dis` against CPython itself, the error paths against the
//! binary, errors without gotopy's frames), `test_tools.py`, `test_deep.py`,
//! `test_programs.py` (the old libraries' programs on every route, an IPython cell among
//! them), `test_threads.py` (16 threads at once on every route), `test_installed.py` (the `gotopy` command) and `test_server.py` (`gotopy server`,
//! and pytest-lsp's client on one version) on each interpreter `tools/pythons` gives, with
//! the wheel `tools/dist` builds installed by `common/cpython.rs` and no Rust on `PATH` (but
//! for `test_tools`, whose pre-commit hook builds the package from source); and `gotopy
//! compile --python` with interpreters that do not have the package.

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use common::root;

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

/// The package's test modules (`python/tests/`), the slowest first (`test_tools` runs
/// pre-commit, which builds the package, on 3.13).
const PACKAGE_TESTS: [&str; 10] = [
    "test_tools",
    "test_run",
    "test_pyc",
    "test_cli",
    "test_programs",
    "test_threads",
    "test_deep",
    "test_check",
    "test_installed",
    "test_server",
];

/// The package's own tests. Its name sorts first on purpose: the harness runs tests in the
/// order of their names on two threads, and these jobs (14 minutes in CI) ended the step
/// when they started after the `.pyc` test (5 minutes); the others now run beside them.
#[test]
fn all_python_package_tests_pass_on_every_version() {
    // Each test module on each version is a job, taken by two workers in turn: the machines
    // have two cores, and whole versions in pairs left one idle while the other finished
    // (and for the whole fifth version).
    let jobs = PACKAGE_TESTS
        .iter()
        .flat_map(|module| cpython::installed().iter().map(move |run| (run, *module)));
    run_package_tests(jobs, &[]);
}

/// The package's tests on CPython 3.13 built without the GIL (`tools/pythons
/// --free-threaded`), with the `cp313t` wheel (`tools/dist --free-threaded`) installed as
/// for the other versions, `test_threads` for 50 rounds (`test_threads` also holds that the
/// GIL stays off once gotopy is imported). Only with `GOTOPY_FREE_THREADED=1`: on a machine
/// that has not built that interpreter yet (its build outlives the clone), the build takes
/// 10 to 50 minutes of two cores.
#[test]
fn python_package_tests_pass_without_the_gil() {
    if std::env::var_os("GOTOPY_FREE_THREADED").is_none() {
        eprintln!(
            "skipped: GOTOPY_FREE_THREADED=1 runs the package's tests on free-threaded CPython 3.13"
        );
        return;
    }
    let run = ("3.13t".to_owned(), cpython::free_threaded().to_path_buf());
    let jobs = PACKAGE_TESTS.iter().map(|module| (&run, *module));
    run_package_tests(jobs, &[("GOTOPY_THREAD_ROUNDS", "50")]);
}

/// Runs each `(version and interpreter, test module)` of `jobs` as `python -m unittest`
/// with `env` set, on two workers; fails with the output of those that failed.
fn run_package_tests<'a>(
    jobs: impl Iterator<Item = (&'a (String, std::path::PathBuf), &'a str)> + Send,
    env: &[(&str, &str)],
) {
    let queue = Mutex::new(jobs);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    // Taken in a statement of its own, so that the lock is not held while
                    // the job runs.
                    let next = queue.lock().unwrap().next();
                    let Some(((version, interpreter), module)) = next else {
                        break;
                    };
                    let job = Instant::now();
                    let mut command = Command::new(interpreter);
                    command
                        .args(["-m", "unittest", "-v", module])
                        .current_dir(root().join("python/tests"))
                        .stdin(Stdio::null())
                        .env("GOTOPY_BIN", env!("CARGO_BIN_EXE_gotopy"))
                        // The differential test's programs and their expected calls, made
                        // by the first version that needs them and read by the others.
                        .env("GOTOPY_DIFF_CACHE", cpython::work_dir().join("generated"))
                        .envs(env.iter().copied());
                    // As a user who installed the wheel: no Rust. Only pre-commit's hook
                    // (in `test_tools`) builds the package from source, as pre-commit does.
                    if module != "test_tools" {
                        cpython::without_rust(&mut command).env("GOTOPY_NO_RUST", "1");
                    }
                    let output = command.output().unwrap_or_else(|error| {
                        panic!("cannot run {module} on {version}: {error}")
                    });
                    let verdict = if output.status.success() {
                        "ok"
                    } else {
                        "FAILED"
                    };
                    println!(
                        "CPython {version} {module}: {verdict} in {:.1?} (at {:.0?})",
                        job.elapsed(),
                        started.elapsed()
                    );
                    if !output.status.success() {
                        failures.lock().unwrap().push(format!(
                            "CPython {version}, {module}:\n{}",
                            cpython::shown(&output)
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `tools/check_artifact.py`, which `tools/dist` runs on every artifact before it lands (the
/// wheel these tests install passed it), refuses what a platform could not load: the same
/// wheel checked as another processor's, renamed to a version-specific tag it was not built
/// for, or holding a path given as the building machine's; and a path counts only as a
/// directory (a prefix of one's name is no match).
#[test]
fn the_artifact_check_refuses_a_wheel_for_another_platform() {
    let wheel = cpython::wheel();
    let check = |arguments: &[&str], artifact: &std::path::Path| {
        let output = Command::new("python3")
            .arg(root().join("tools/check_artifact.py"))
            .args(arguments)
            .arg(artifact)
            .output()
            .expect("python3 runs tools/check_artifact.py");
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), said)
    };
    let (status, said) = check(&["--platform", "linux-x86_64"], wheel);
    assert_eq!(status, Some(0), "{said}");
    assert!(said.contains("ELF x86-64"), "{said}");
    // The remapped sources' paths (gotopy/src/...) stand for a build path in the module.
    let (status, said) = check(
        &["--platform", "linux-x86_64", "--forbid-path", "gotopy/sr"],
        wheel,
    );
    assert_eq!(
        status,
        Some(0),
        "a prefix of a directory's name is no build path: {said}"
    );
    let scratch = tempfile::tempdir().unwrap();
    // Its native module, read as a program of another processor.
    let extracted = Command::new("python3")
        .args(["-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract('gotopy/_gotopy.abi3.so', sys.argv[2])"])
        .arg(wheel)
        .arg(scratch.path())
        .status()
        .unwrap();
    assert!(extracted.success());
    let module = scratch.path().join("gotopy/_gotopy.abi3.so");
    for (arguments, artifact, refusal) in [
        (&["--platform", "linux-aarch64"][..], wheel, "platform tags"),
        (
            &["--platform", "linux-aarch64"][..],
            module.as_path(),
            "ELF machine 62, expected 183",
        ),
        (
            &["--platform", "linux-x86_64", "--forbid-path", "gotopy/src"][..],
            wheel,
            "holds the build path gotopy/src",
        ),
    ] {
        let (status, said) = check(arguments, artifact);
        assert_eq!(status, Some(1), "{arguments:?}: {said}");
        assert!(
            said.contains(refusal),
            "{arguments:?}: expected {refusal:?} in {said}"
        );
    }
    let name = wheel
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace("-cp311-abi3-", "-cp312-cp312-");
    let renamed = scratch.path().join(name);
    std::fs::copy(wheel, &renamed).unwrap();
    let (status, said) = check(&["--platform", "linux-x86_64"], &renamed);
    assert_eq!(status, Some(1), "{said}");
    assert!(said.contains("tagged cp312-cp312"), "{said}");
}

/// The code the CPython backend emits does not change by accident: on every version, the
/// digest of every code object it emits for the fixtures and 500 random programs (and,
/// with `GOTOPY_STDLIB=1`, the standard library with a goto loop added to each file), by the
/// compile path and by the decorator without source (`tests/emitted/cpython.py`), is the one
/// recorded in `tests/emitted/cpython-3.X.txt`. A snapshot, not an oracle: it shows that
/// restructuring changed no byte. A change that means to change the output records them
/// again with `GOTOPY_BLESS=1` and says why (without `GOTOPY_STDLIB=1`, the recorded
/// standard-library section stays as it was). A recording of another patch release (a newer
/// Debian package) is reported and not compared: its compiler may differ. The test cannot
/// pass on nothing: each version compared gives at least [`MIN_DIGEST_LINES`] files'
/// digests, and only Debian's two versions may be left out.
#[test]
fn emitted_code_is_the_recorded_code() {
    let stdlib = std::env::var_os("GOTOPY_STDLIB").is_some();
    let bless = std::env::var_os("GOTOPY_BLESS").is_some();
    let mut changed = Vec::new();
    let mut skipped = Vec::new();
    for pair in cpython::installed().chunks(2) {
        let runs: Vec<_> = pair
            .iter()
            .map(|(version, interpreter)| {
                let mut command = Command::new(interpreter);
                command
                    .arg(root().join("tests/emitted/cpython.py"))
                    .arg(root())
                    .args(stdlib.then_some("stdlib"))
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                (version, command.spawn().unwrap())
            })
            .collect();
        for (version, child) in runs {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "CPython {version}: {}",
                cpython::shown(&output)
            );
            let got = String::from_utf8_lossy(&output.stdout).into_owned();
            // An internal error (G900) or another exception is a failing test, never a
            // recording: blessing cannot take one in either.
            let internal: Vec<&str> = (got.lines())
                .filter(|line| line.contains(":G900:") || line.contains("failed:"))
                .collect();
            assert!(
                internal.is_empty(),
                "CPython {version}: internal errors in gotopy:\n{}",
                internal.join("\n")
            );
            let recorded_path = root().join(format!("tests/emitted/cpython-{version}.txt"));
            if bless {
                let mut recording = got;
                // Without the standard library, its recorded section is kept as it was.
                if !stdlib
                    && let Ok(recorded) = std::fs::read_to_string(&recorded_path)
                    && let Some(at) = recorded.find("\n# stdlib\n")
                {
                    recording.push_str(&recorded[at + 1..]);
                    println!(
                        "CPython {version}: stdlib section kept as recorded; \
                         GOTOPY_STDLIB=1 records it again"
                    );
                }
                std::fs::write(&recorded_path, recording).unwrap();
                continue;
            }
            let recorded = std::fs::read_to_string(&recorded_path).unwrap();
            let (got_header, recorded_header) = (got.lines().next(), recorded.lines().next());
            if got_header != recorded_header {
                println!(
                    "skipped CPython {version}: recorded for {recorded_header:?}, running {got_header:?}; \
                     GOTOPY_BLESS=1 records this one"
                );
                skipped.push(version.as_str());
                continue;
            }
            // Without the standard library, its section is not compared.
            let compared: Vec<&str> = recorded
                .lines()
                .take_while(|line| stdlib || *line != "# stdlib")
                .collect();
            let lines: Vec<&str> = got.lines().collect();
            let differing: Vec<String> = compared
                .iter()
                .zip(&lines)
                .filter(|(was, now)| was != now)
                .map(|(was, now)| format!("  CPython {version}\n    now {now}\n    was {was}"))
                .collect();
            if compared.len() != lines.len() {
                changed.push(format!(
                    "CPython {version}: {} lines now, {} recorded",
                    lines.len(),
                    compared.len()
                ));
            }
            changed.extend(differing);
            // A digest line names a file and the digests of its code objects.
            let digests = compared
                .iter()
                .filter(|line| !line.starts_with('#'))
                .count();
            assert!(
                digests >= MIN_DIGEST_LINES,
                "CPython {version}: only {digests} files' digests compared"
            );
        }
    }
    assert!(
        changed.is_empty(),
        "the emitted code changed:\n{}",
        changed.join("\n")
    );
    // Only Debian's interpreters (3.14 and 3.15) can change patch release under the tests;
    // pyenv's are fixed on every machine, so at least three versions were compared.
    assert!(
        skipped.len() <= 2,
        "the digests of {skipped:?} were not compared: GOTOPY_BLESS=1 records them"
    );
}

/// The fewest digest lines each compared version must have: the fixtures and 500 random
/// programs give over 500 (more with the standard library), so a recording that lost
/// its programs cannot pass as compared.
const MIN_DIGEST_LINES: usize = 500;

/// `gotopy compile --python python3.X` (found on `PATH`) with an interpreter on which
/// gotopy is not installed, on every version: the `ok` fixtures' `.pyc` files, run by that
/// plain interpreter (`-I -S`: nothing but the standard library), print what `python -m
/// gotopy run` prints on the same version.
#[test]
fn binary_compiles_pyc_files_for_a_cpython_without_gotopy() {
    let plain = cpython::pythons();
    let installed = cpython::installed();
    for index in 0..plain.len() {
        let (version, python) = &plain[index];
        let (_, with_package) = &installed[index];
        let work = tempfile::tempdir().unwrap();
        let sources = work.path().join("src");
        std::fs::create_dir(&sources).unwrap();
        for entry in std::fs::read_dir(root().join("fixtures/ok")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, sources.join(path.file_name().unwrap())).unwrap();
        }
        let out = work.path().join("out");
        let compiled = Command::new(env!("CARGO_BIN_EXE_gotopy"))
            .args(["compile", "--python", &format!("python{version}")])
            .arg("--out-dir")
            .arg(&out)
            .arg(&sources)
            .env("NO_COLOR", "1")
            .env("PATH", on_path(python))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&compiled.stderr);
        // The two fixtures that need gotopy at run time (python/tests/test_pyc.py).
        assert_eq!(
            compiled.status.code(),
            Some(1),
            "CPython {version}: {stderr}"
        );
        assert_eq!(
            stderr.matches("is still needed at run time").count(),
            2,
            "{stderr}"
        );
        let mut ran = 0;
        for entry in std::fs::read_dir(&out).unwrap() {
            let pyc = entry.unwrap().path();
            let source = sources.join(pyc.with_extension("py").file_name().unwrap());
            let expected = cpython::run(
                "python -m gotopy run",
                Command::new(with_package)
                    .args(["-m", "gotopy", "run"])
                    .arg(&source),
            );
            let got = Command::new(python)
                .args(["-I", "-S"])
                .arg(&pyc)
                .output()
                .unwrap();
            assert!(
                got.status.success(),
                "CPython {version}, {}: {}",
                pyc.display(),
                cpython::shown(&got)
            );
            assert_eq!(
                got.stdout,
                expected.stdout,
                "CPython {version}, {}",
                pyc.display()
            );
            ran += 1;
        }
        assert!(ran >= 30, "CPython {version}: {ran} files ran");
    }
}

/// `PATH` with the directory of `python` first.
fn on_path(python: &std::path::Path) -> std::ffi::OsString {
    let mut paths = vec![python.parent().unwrap().to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// `gotopy compile --python` writes the cache file beside the source, with the invalidation
/// mode asked for, which the plain interpreter imports (the source itself cannot be: it
/// imports `goto`).
#[test]
fn binary_writes_the_cache_file_beside_the_source() {
    let (version, python) = cpython::pythons().swap_remove(0);
    let work = tempfile::tempdir().unwrap();
    let source = work.path().join("countdown.py");
    std::fs::write(
        &source,
        "from goto import goto, label\n\n@goto\ndef run(n):\n    out = []\n    label .top\n\
         \x20   if n:\n        out.append(n)\n        n -= 1\n        goto .top\n    return out\n",
    )
    .unwrap();
    let compiled = Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .args(["compile", "--python"])
        .arg(&python)
        .args(["--invalidation-mode", "unchecked-hash"])
        .arg(&source)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", cpython::shown(&compiled));
    let tag = version.replace('.', "");
    let cache = work
        .path()
        .join(format!("__pycache__/countdown.cpython-{tag}.pyc"));
    let header = std::fs::read(&cache).unwrap();
    // Flags: hash-based (1), not checked (2 unset).
    assert_eq!(u32::from_le_bytes(header[4..8].try_into().unwrap()), 1);
    let imported = cpython::run(
        "the plain interpreter",
        Command::new(&python).args(["-I", "-S", "-c"]).arg(format!(
            "import sys; sys.path.insert(0, {:?}); import countdown; print(countdown.run(3))",
            work.path().display().to_string()
        )),
    );
    assert_eq!(String::from_utf8_lossy(&imported.stdout), "[3, 2, 1]\n");
}

/// `examples/embed_cpython`: a Rust program that embeds CPython with PyO3 registers gotopy's
/// native module, installs gotopy, and runs a script that imports a module with goto (the
/// hook compiles it) and decorates `exec`-compiled code. It prints what CPython computes
/// without goto. Built against each version's shared library (pyenv's, and the Debian ones
/// `tools/pythons` unpacks, run through its `python3.X-embedded`).
#[test]
fn rust_program_embedding_cpython_installs_gotopy() {
    for (version, python) in cpython::pythons() {
        // The oracle: that CPython, without goto; the refusal is SPEC section 6's.
        let plain = format!(
            "{}print('refused: G200 at line 2')\n",
            common::EMBED_EXAMPLES_WITHOUT_GOTO
        );
        let expected = cpython::run(
            "the example without goto",
            Command::new(&python).args(["-c", &plain]),
        );
        // The shared library is under the interpreter's own prefix: in `lib/`, or in
        // Debian's multiarch directory (whose configuration names /usr, not the tree).
        let config = cpython::run(
            "sysconfig",
            Command::new(&python).args([
                "-c",
                "import os, sys, sysconfig as s\n\
                 name = 'libpython' + s.get_config_var('LDVERSION') + '.so'\n\
                 dirs = [os.path.join(sys.base_prefix, 'lib', s.get_config_var('MULTIARCH') or ''),\n\
                 \x20       os.path.join(sys.base_prefix, 'lib')]\n\
                 print(next((d for d in dirs if os.path.exists(os.path.join(d, name))), ''))\n\
                 print(s.get_config_var('LDVERSION'))",
            ]),
        );
        let config = String::from_utf8_lossy(&config.stdout).into_owned();
        let (lib_dir, ldversion) = config
            .trim_end()
            .split_once('\n')
            .expect("two lines of configuration");
        assert!(
            !lib_dir.is_empty(),
            "CPython {version} ({}) has no shared library",
            python.display()
        );
        // One target directory for every version: only PyO3 and what depends on it are built
        // again for each (its configuration changes), not gotopy's front end.
        let target = root().join("target/embed-cpython");
        std::fs::create_dir_all(&target).unwrap();
        let pyo3_config = target.join(format!("pyo3-{version}.cfg"));
        std::fs::write(
            &pyo3_config,
            format!(
                "implementation=CPython\nversion={version}\nshared=true\n\
                 lib_name=python{ldversion}\nlib_dir={lib_dir}\nexecutable={}\n\
                 pointer_width=64\nbuild_flags=\nsuppress_build_script_link_lines=false\n",
                python.display()
            ),
        )
        .unwrap();
        cpython::run(
            &format!("building examples/embed_cpython for CPython {version}"),
            Command::new(env!("CARGO"))
                .args(["rustc", "--locked", "--manifest-path"])
                .arg(root().join("examples/embed_cpython/Cargo.toml"))
                .env("CARGO_TARGET_DIR", &target)
                .env("PYO3_CONFIG_FILE", &pyo3_config)
                // The library's own dependencies are found where it is (Debian's need sid's C
                // library, which the machine's linker would not find). Given to the program
                // alone (not in `RUSTFLAGS`, which would build every crate again).
                .arg("--")
                .arg(format!("-Clink-arg=-Wl,-rpath-link,{lib_dir}")),
        );
        let program = target.join("debug/embed-cpython");
        let embedded = python.with_file_name(format!(
            "{}-embedded",
            python.file_name().unwrap().to_string_lossy()
        ));
        let mut command = if embedded.exists() {
            let mut command = Command::new(&embedded);
            command.arg(&program);
            command
        } else {
            let mut command = Command::new(&program);
            command.env("LD_LIBRARY_PATH", lib_dir);
            command
        };
        let output = cpython::run(
            &format!("examples/embed_cpython on CPython {version}"),
            &mut command,
        );
        assert_eq!(output.stdout, expected.stdout, "CPython {version}");
    }
}

/// `gotopy compile --python` with a CPython it does not support (3.10, which pyenv has on
/// every machine) refuses with exit status 2, naming the interpreter and the versions it
/// supports, and writes nothing.
#[test]
fn binary_refuses_an_interpreter_it_does_not_compile_for() {
    let pyenv = std::env::var("PYENV_ROOT").map_or_else(
        |_| std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".pyenv"),
        std::path::PathBuf::from,
    );
    let python = (std::fs::read_dir(pyenv.join("versions")).unwrap().flatten())
        .map(|entry| entry.path().join("bin/python3.10"))
        .find(|path| path.exists())
        .expect("pyenv's CPython 3.10");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("m.py"), "print(1)\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .args(["compile", "--python"])
        .arg(&python)
        .arg("m.py")
        .current_dir(work.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is Python 3.10.") && stderr.contains("compiles for CPython 3.11 to 3.15"),
        "{stderr}"
    );
    assert!(!work.path().join("__pycache__").exists());
}
