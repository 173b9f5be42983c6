//! The Python package installed for CPython 3.11 to 3.15, for the tests that run programs
//! on the CPython backend (`tests/cpython.rs`, `tests/run.rs`).
//!
//! Builds the package's wheel once per test process with `tools/dist`, as a release is built
//! (the manylinux2014 abi3 wheel, and the sdist), installs it into a virtual environment for
//! each interpreter `tools/pythons` gives, with the tools the package's tests use (coverage;
//! the type checkers, linters and pre-commit on one version). Everything lives under
//! `target/cpython/`: `cargo/` (the extension's own target directory), `dist/` and
//! `venv-3.X/`. A venv is reused, and the wheel reinstalled only when its digest changed.
//! Needs network on the first run (Debian packages for 3.14 and 3.15, the tools from PyPI,
//! `tools/dist`'s build tools, the extension's crates).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::common::root;

/// The version the type checkers, the linters and pre-commit run on.
const TYPING_VERSION: &str = "3.13";

/// `path` run by `gotopy run` (RustPython) and by `python -m gotopy run` on every CPython,
/// each with the target's name. All at once, a thread each: the machines have two cores,
/// and one run at a time left one idle.
pub fn run_everywhere(path: &Path) -> Vec<(String, Output)> {
    let targets: Vec<(String, Option<&Path>)> = std::iter::once(("RustPython".to_owned(), None))
        .chain(
            (installed().iter())
                .map(|(version, python)| (format!("CPython {version}"), Some(python.as_path()))),
        )
        .collect();
    crate::common::on_threads(&targets, |(name, python)| {
        let output = match python {
            None => crate::common::gotopy_run(path, &[]),
            Some(python) => Command::new(python)
                .args(["-m", "gotopy", "run"])
                .arg(path)
                .output()
                .unwrap(),
        };
        (name.clone(), output)
    })
}

/// The program with goto does what the structured one does, on RustPython (against
/// `python3`) and on every CPython with the package (against that CPython).
#[allow(dead_code)] // not every test that shares this module uses it
pub fn assert_same_everywhere(name: &str, with_goto: &str, structured: &str) {
    crate::common::assert_same_as_cpython(name, with_goto, structured);
    let goto_path = crate::common::write(&format!("{name}.py"), with_goto);
    let plain_path = crate::common::write(&format!("{name}_plain.py"), structured);
    for (version, python) in installed() {
        eprintln!("{name} on CPython {version}");
        let ours = Command::new(python)
            .args(["-m", "gotopy", "run"])
            .arg(&goto_path)
            .output()
            .unwrap();
        crate::common::assert_ran_the_same(
            ours,
            Command::new(python).arg(&plain_path).output().unwrap(),
        );
    }
}

/// `(version, interpreter)` of each CPython with the package installed, set up once.
pub fn installed() -> &'static [(String, PathBuf)] {
    static INSTALLED: OnceLock<Vec<(String, PathBuf)>> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let work = work_dir();
        let pythons = pythons();
        let wheel = wheel();
        // One thread per version: pip spends most of its time fetching and unpacking, and
        // the five would otherwise wait for each other.
        crate::common::on_threads(&pythons, |(version, python)| {
            (version.clone(), install(&work, version, python, wheel))
        })
    })
}

/// The wheel `tools/dist` builds for this machine (and checks with
/// `tools/check_artifact.py`), built once.
pub fn wheel() -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(|| build_wheel(&work_dir()))
}

/// `target/cpython`, in whatever target directory this test was built in.
pub fn work_dir() -> PathBuf {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gotopy"));
    let target = binary
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| root().join("target"), Path::to_path_buf);
    target.join("cpython")
}

/// Runs `command` from the repository root with no standard input; its output, or a panic
/// that shows it.
pub fn run(what: &str, command: &mut Command) -> Output {
    let output = command
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("{what}: cannot start {command:?}: {error}"));
    if !output.status.success() {
        panic!("{what} failed ({}):\n{}", output.status, shown(&output));
    }
    output
}

pub fn shown(output: &Output) -> String {
    format!(
        "--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The interpreters `tools/pythons` sets up, without the package: (version, path).
pub fn pythons() -> Vec<(String, PathBuf)> {
    let output = run(
        "tools/pythons",
        &mut Command::new(root().join("tools/pythons")),
    );
    let versions: Vec<(String, PathBuf)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(version, path)| (version.to_owned(), PathBuf::from(path)))
        .collect();
    assert_eq!(versions.len(), 5, "tools/pythons must print five versions");
    versions
}

/// PyPy 3.11, which `tools/pythons --pypy` sets up beside them (`gotopy translate`'s output
/// runs on it).
pub fn pypy() -> PathBuf {
    other("pypy", "pypy3.11")
}

/// MicroPython, which `tools/pythons --micropython` sets up beside them.
pub fn micropython() -> PathBuf {
    other("micropython", "micropython")
}

fn other(option: &str, name: &str) -> PathBuf {
    let output = run(
        &format!("tools/pythons --{option}"),
        Command::new(root().join("tools/pythons")).arg(format!("--{option}")),
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")).map(PathBuf::from))
        .unwrap_or_else(|| panic!("tools/pythons --{option} must print a {name} line"))
}

/// CPython 3.13 built without the GIL (`tools/pythons --free-threaded`), with the package's
/// `cp313t` wheel (`tools/dist --free-threaded`, into `dist-free-threaded/`) and the tools
/// installed in `venv-3.13t/` as for the other versions; set up once, its interpreter.
pub fn free_threaded() -> &'static Path {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let work = work_dir();
        let python = other("free-threaded", "3.13t");
        let wheel = dist(
            &work,
            "dist-free-threaded",
            &["--free-threaded"],
            "-cp313t-",
        );
        install(&work, "3.13t", &python, &wheel)
    })
}

/// A venv made by `python` at `dir`, unless it is there already; its interpreter.
fn venv(python: &Path, dir: &Path) -> PathBuf {
    let interpreter = dir.join("bin/python");
    if !interpreter.exists() {
        run(
            &format!("{} -m venv", python.display()),
            Command::new(python).arg("-m").arg("venv").arg(dir),
        );
    }
    interpreter
}

/// Builds the wheel and the sdist a release publishes, with `tools/dist` (the manylinux2014
/// abi3 wheel, built by maturin with zig), into `dist/`; the wheel's path. The tests install
/// what a user installs.
fn build_wheel(work: &Path) -> PathBuf {
    dist(work, "dist", &[], "-abi3-")
}

/// Runs `tools/dist` with `options` into `work/out`, the extension's build kept in `cargo/`
/// between runs; the path of the wheel it printed whose name holds `tag`.
fn dist(work: &Path, out: &str, options: &[&str], tag: &str) -> PathBuf {
    let started = Instant::now();
    let output = run(
        &format!("tools/dist {}", options.join(" ")),
        Command::new(root().join("tools/dist"))
            .args(options)
            .arg("--out")
            .arg(work.join(out))
            .env("CARGO_TARGET_DIR", work.join("cargo")),
    );
    println!(
        "tools/dist {} built in {:.1?}",
        options.join(" "),
        started.elapsed()
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    let wheel = (printed.lines())
        .find(|line| line.contains(tag) && line.ends_with(".whl"))
        .unwrap_or_else(|| panic!("tools/dist must print a {tag} wheel:\n{printed}"));
    PathBuf::from(wheel)
}

/// `command` as on a user's machine that installed the wheel and has no Rust: `PATH` without
/// the directories that hold `cargo` or `rustc`, and none of the variables cargo sets for
/// the tests that name them.
pub fn without_rust(command: &mut Command) -> &mut Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept = std::env::split_paths(&path)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists());
    command
        .env("PATH", std::env::join_paths(kept).unwrap())
        .env_remove("CARGO")
        .env_remove("RUSTC")
}

/// Installs `wheel` into the venv of `version`, unless that very wheel is installed; its
/// interpreter.
fn install(work: &Path, version: &str, python: &Path, wheel: &Path) -> PathBuf {
    let dir = work.join(format!("venv-{version}"));
    let interpreter = venv(python, &dir);
    // What the tools tests (`python/tests/test_tools.py`) run: coverage everywhere; the
    // type checkers, the linters and pre-commit on one version (pyright's wheel brings its
    // own Node.js, over 100 MB), and pytest-lsp for `python/tests/test_server.py`'s client
    // of the language server. IPython everywhere, for the notebook cells of
    // `python/tests/test_programs.py`.
    let mut wanted = vec!["coverage>=7.6,<8", "ipython>=8.18,<10"];
    if version == TYPING_VERSION {
        wanted.extend([
            "mypy>=1.13,<2",
            "pyright[nodejs]>=1.1.400,<2",
            "ruff>=0.15,<0.18",
            "pylint>=3.3,<5",
            "flake8>=7,<8",
            "flake8-bugbear>=24",
            "pre-commit>=4,<5",
            "pytest-lsp>=1,<2",
        ]);
    }
    let tools = dir.join("gotopy-test-tools");
    let stamp = wanted.join("\n");
    if std::fs::read_to_string(&tools).ok().as_deref() != Some(stamp.as_str()) {
        // Without compiling every module of them up front, as pip does by default: from
        // pip's cache, that took 36 s against 23 on 3.13 (every tool) and 14 against 8 on
        // 3.12. The modules the tests import are compiled when they are first imported.
        run(
            &format!("pip install the test tools on {version}"),
            Command::new(&interpreter)
                .args(["-m", "pip", "install", "--quiet", "--no-compile"])
                .args(&wanted),
        );
        std::fs::write(&tools, &stamp).unwrap();
    }
    let digest = format!("{:x}", Sha256::digest(std::fs::read(wheel).unwrap()));
    let stamp = dir.join("gotopy-wheel.sha256");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(digest.as_str()) {
        run(
            &format!("pip install on {version}"),
            // As a user without Rust installs it: nothing in the wheel is built.
            without_rust(&mut Command::new(&interpreter))
                .args(["-m", "pip", "install", "--quiet", "--force-reinstall"])
                .arg(wheel),
        );
        std::fs::write(&stamp, &digest).unwrap();
    }
    interpreter
}
