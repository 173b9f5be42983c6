//! The Python package on CPython 3.11 to 3.15: `python/tests/test_check.py` (the package's
//! `check` against the binary, with `GOTOPY_BIN` set to this build's `gotopy`) and
//! `test_run.py` (the CPython backend) on each interpreter `tools/pythons` gives, with the
//! package installed by `common/cpython.rs`.

use std::process::{Command, Stdio};
use std::time::Instant;

use common::root;

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[path = "common/cpython.rs"]
mod cpython;

#[test]
fn python_package_checks_as_the_binary_does_on_every_version() {
    let mut failures = Vec::new();
    // Two versions at a time: the machines have two cores, and each run is one process.
    for pair in cpython::installed().chunks(2) {
        let runs: Vec<_> = pair
            .iter()
            .map(|(version, interpreter)| {
                let started = Instant::now();
                let child = Command::new(interpreter)
                    .args(["-m", "unittest", "-v", "test_check", "test_run"])
                    .current_dir(root().join("python/tests"))
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .env("GOTOPY_BIN", env!("CARGO_BIN_EXE_gotopy"))
                    .spawn()
                    .unwrap_or_else(|error| panic!("cannot run the tests on {version}: {error}"));
                (version, started, child)
            })
            .collect();
        for (version, started, child) in runs {
            let output = child.wait_with_output().unwrap();
            let verdict = if output.status.success() {
                "ok"
            } else {
                "FAILED"
            };
            println!("CPython {version}: {verdict} in {:.1?}", started.elapsed());
            if !output.status.success() {
                failures.push(format!("CPython {version}:\n{}", cpython::shown(&output)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
