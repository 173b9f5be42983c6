//! Snapshots of the bytecode gotopy emits on each of CPython 3.11 to 3.15, as `dis` shows
//! it without offsets (`python/tests/listing.py`): a goto out of nested frames, labels after
//! `return`, `raise` and `break`, a switch's search tree and a computed goto. They document
//! the lowering per version; what the code does is tested by running it (`tests/cpython.rs`,
//! `tests/run.rs`, `tests/switch.rs`).

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

use std::process::Command;

use common::root;

/// `(fixture, function)` pairs whose rewritten code is snapshotted.
const LISTED: [(&str, &str); 4] = [
    ("goto_out_of_nested_frames", "deep"),
    ("label_after_return_raise_break", "pick"),
    ("switch_int_cases", "describe"),
    ("computed_goto", "apply"),
];

#[test]
fn emitted_bytecode_on_every_version() {
    for (version, python) in cpython::installed() {
        for (fixture, function) in LISTED {
            let path = root().join(format!("fixtures/ok/{fixture}.py"));
            let output = cpython::run(
                &format!("the listing of {fixture} on CPython {version}"),
                Command::new(python)
                    .arg(root().join("python/tests/listing.py"))
                    .arg(&path)
                    .arg(function),
            );
            insta::assert_snapshot!(
                format!("{fixture}@{version}"),
                String::from_utf8_lossy(&output.stdout)
            );
        }
    }
}
