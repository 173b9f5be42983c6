//! Installing the binary as the docs say: `cargo install --path .`, which resolves the
//! dependencies afresh (without `--locked`, `cargo install` ignores `Cargo.lock`).
//!
//! - Always: a fresh resolution of the manifest, in a copy of the repository without its lock
//!   file (`cargo generate-lockfile`, seconds), picks the versions of `Cargo.lock` for every
//!   crate the manifest pins with `=` (the interpreter's), and no crate in more versions than
//!   `Cargo.lock` has: a second version of a crate the interpreter is built from is how a
//!   fresh build broke (`malachite-bigint` 0.14 beside 0.9.2, through `pymath`).
//! - With `GOTOPY_INSTALL=1`: `cargo install --path .` from such a copy, into a scratch
//!   directory, and the installed `gotopy` runs the bundled example (a release build from
//!   scratch: ten minutes on two cores, so CI leaves it to this switch; it says it skipped).
//!
//! Needs crates.io, as the first build does.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::{Scratch, root};

/// Each package of a lock file, by name, with its versions.
fn versions(lock: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if let Some(value) = line.strip_prefix("version = ")
            && let Some(name) = name.take()
        {
            let version = value.trim_matches('"').to_owned();
            found.entry(name).or_default().insert(version);
        }
    }
    found
}

/// The dependencies `Cargo.toml` pins with `=`, with their versions.
fn pinned(manifest: &str) -> Vec<(String, String)> {
    let mut pins = Vec::new();
    for line in manifest.lines() {
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        let Some(at) = value.find("\"=") else {
            continue;
        };
        let version: String = value[at + 2..].chars().take_while(|&c| c != '"').collect();
        // `ruff_source_file = { package = "rustpython-ruff_source_file", ... }`
        let name = match value.split_once("package = \"") {
            Some((_, rest)) => rest.split('"').next().unwrap_or_default().to_owned(),
            None => key.trim().to_owned(),
        };
        pins.push((name, version));
    }
    pins
}

/// A copy of the repository's tracked files (and the untracked ones beside them that git does
/// not ignore) without `Cargo.lock`.
fn unlocked_copy() -> Scratch {
    let copy = Scratch::dir("unlocked");
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .expect("git lists the repository's files");
    assert!(listed.status.success(), "git ls-files failed");
    for file in listed.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file).unwrap());
        let from = root().join(relative);
        if relative == Path::new("Cargo.lock") || !from.is_file() {
            continue;
        }
        let to = copy.join(relative);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    copy
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

#[test]
fn a_fresh_resolution_picks_the_locked_interpreter() {
    let copy = unlocked_copy();
    let resolved = cargo()
        .arg("generate-lockfile")
        .current_dir(&copy)
        .output()
        .unwrap();
    assert!(
        resolved.status.success(),
        "cargo generate-lockfile failed:\n{}",
        String::from_utf8_lossy(&resolved.stderr)
    );
    let fresh = versions(&std::fs::read_to_string(copy.join("Cargo.lock")).unwrap());
    let locked = versions(&std::fs::read_to_string(root().join("Cargo.lock")).unwrap());
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let pins = pinned(&manifest);
    assert!(
        pins.iter().any(|(name, _)| name == "rustpython-vm"),
        "the manifest pins the interpreter: {pins:?}"
    );
    for (name, version) in &pins {
        assert!(
            locked
                .get(name)
                .is_some_and(|found| found.contains(version)),
            "Cargo.lock's {name}: {:?}, the manifest pins {version}",
            locked.get(name)
        );
        assert!(
            fresh.get(name).is_some_and(|found| found.contains(version)),
            "a fresh resolution of {name}: {:?}, the manifest pins {version}",
            fresh.get(name)
        );
    }
    let doubled: Vec<String> = (fresh.iter())
        .filter(|(name, found)| found.len() > locked.get(*name).map_or(1, BTreeSet::len))
        .map(|(name, found)| format!("{name} {found:?} (Cargo.lock: {:?})", locked.get(name)))
        .collect();
    assert!(
        doubled.is_empty(),
        "a fresh resolution has more versions of these crates than Cargo.lock; pin the one the \
         interpreter is built with:\n{}",
        doubled.join("\n")
    );
}

#[test]
fn cargo_install_gives_a_working_gotopy() {
    if std::env::var_os("GOTOPY_INSTALL").is_none() {
        eprintln!("skipped: GOTOPY_INSTALL=1 runs `cargo install --path .` (a release build)");
        return;
    }
    let copy = unlocked_copy();
    let installed = Scratch::dir("installed");
    let status = cargo()
        .args(["install", "--path", "."])
        .arg("--root")
        .arg(&*installed)
        .current_dir(&copy)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .unwrap();
    assert!(status.success(), "cargo install --path . failed");
    let run = Command::new(installed.join("bin/gotopy"))
        .args(["run", "examples/grid_search.py"])
        .current_dir(&copy)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Worked out by hand from the example's grid and lines.
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "7 is at (1, 2) - 10 is at None\ntotal and bad lines: (44, 2)\n"
    );
}
