//! Embedding CPython with gotopy: register gotopy's native module before the interpreter
//! starts, install gotopy once it runs, then run a script that imports a module using goto
//! (compiled by gotopy's import hook) and applies the run-time decorator to code it compiles
//! with `exec`. The CPython counterpart of `examples/embed.rs` (RustPython), with the same
//! module, `examples/embed/scheduler.py`.
//!
//! Run: `PYO3_PYTHON=python3.13 cargo run --manifest-path examples/embed_cpython/Cargo.toml`
//! (the interpreter's shared library on the loader's path).

use std::process::ExitCode;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The script, shared with `examples/embed.rs`.
const SCRIPT: &str = include_str!("../../embed/script.py");

fn main() -> ExitCode {
    gotopy_python::embed::register();
    Python::initialize();
    let modules = concat!(env!("CARGO_MANIFEST_DIR"), "/../embed");
    let script = std::ffi::CString::new(SCRIPT).expect("the script has no NUL byte");
    let ran = Python::attach(|py| -> PyResult<()> {
        gotopy_python::embed::install(py)?;
        py.import("sys")?
            .getattr("path")?
            .call_method1("insert", (0, modules))?;
        py.run(&script, Some(&PyDict::new(py)), None)
    });
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Python::attach(|py| error.print(py));
            ExitCode::FAILURE
        }
    }
}
