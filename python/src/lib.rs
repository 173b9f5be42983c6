//! `gotopy._gotopy`: gotopy's front end for the Python package.
//!
//! The Python shell (`gotopy/__main__.py`) reads files, parses arguments, writes the streams
//! and exits; this module takes bytes and returns text, through the same library functions
//! the `gotopy` binary calls, so both print the same diagnostics, JSON and summary. It knows
//! nothing of the command line, the file system or colour detection.

use gotopy::compile::plan::{Span, late_error_json, plan_json};
use gotopy::diagnostic::{report_json, report_text};
use gotopy::{Diagnostic, Options, Source, check_source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// One module checked: its decoded source and its diagnostics.
#[pyclass(frozen, module = "gotopy._gotopy")]
struct Checked {
    source: Source,
    diagnostics: Vec<Diagnostic>,
}

#[pymethods]
impl Checked {
    /// The path the module is reported under.
    #[getter]
    fn path(&self) -> &str {
        self.source.path()
    }

    /// Whether some diagnostic is an error (what makes `check` exit with status 1).
    #[getter]
    fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Decodes a module's bytes as CPython does (a BOM, a PEP 263 coding declaration, else
/// UTF-8); `ValueError` says why it cannot be.
#[pyfunction]
fn decode_source(data: &[u8]) -> PyResult<String> {
    gotopy::source::decode(data).map_err(|error| PyValueError::new_err(error.to_string()))
}

/// Decodes and checks one module reported under `path`; `ValueError` when it cannot be
/// decoded.
#[pyfunction]
#[pyo3(signature = (path, data, *, all_scopes = false))]
fn check(path: &str, data: &[u8], all_scopes: bool) -> PyResult<Checked> {
    let source =
        Source::from_bytes(path, data).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let diagnostics = check_source(&source, Options::new().all_scopes(all_scopes));
    Ok(Checked {
        source,
        diagnostics,
    })
}

/// The text report of `gotopy check`: every module's diagnostics, then the summary line.
#[pyfunction]
#[pyo3(signature = (checked, *, color = false))]
fn render_text(checked: Vec<PyRef<'_, Checked>>, color: bool) -> String {
    report_text(
        checked
            .iter()
            .map(|one| (&one.source, one.diagnostics.as_slice())),
        color,
    )
}

/// The JSON report of `gotopy check --format json`.
#[pyfunction]
fn render_json(checked: Vec<PyRef<'_, Checked>>) -> PyResult<String> {
    report_json(
        checked
            .iter()
            .map(|one| (&one.source, one.diagnostics.as_slice())),
    )
    .map_err(|error| {
        PyValueError::new_err(format!("cannot write the diagnostics as JSON: {error}"))
    })
}

/// Decodes, checks and plans one module for CPython's compiler, as
/// `gotopy::compile::plan::plan_json` gives it; `ValueError` when it cannot be decoded.
/// `scope_line` also rewrites the function or class defined on that line (`f = goto(f)`).
#[pyfunction]
#[pyo3(signature = (path, data, *, all_scopes = false, color = false, scope_line = None))]
fn plan(
    path: &str,
    data: &[u8],
    all_scopes: bool,
    color: bool,
    scope_line: Option<usize>,
) -> PyResult<String> {
    let source =
        Source::from_bytes(path, data).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let options = Options::new().all_scopes(all_scopes).scope_line(scope_line);
    Ok(plan_json(&source, options, color))
}

/// An error the compile path finds in the code CPython compiled from the plan, as
/// `gotopy::compile::plan::late_error_json` gives it: a refusal by design (`G200`, `help`
/// says what to write instead) or, with `internal`, a failure inside gotopy (`G900`), at
/// `span` (CPython's `(line, end_line, column, end_column)`, columns in UTF-8 bytes).
#[pyfunction]
#[pyo3(signature = (path, data, *, internal, message, help, span, color = false))]
fn late_error(
    path: &str,
    data: &[u8],
    internal: bool,
    message: &str,
    help: &str,
    span: Span,
    color: bool,
) -> PyResult<String> {
    let source =
        Source::from_bytes(path, data).map_err(|error| PyValueError::new_err(error.to_string()))?;
    Ok(late_error_json(
        &source, internal, message, help, span, color,
    ))
}

pub mod bytecode;
pub mod embed;

#[pymodule]
mod _gotopy {
    #[pymodule_export]
    use super::bytecode::{BytecodeError, Instructions, Opcodes};
    #[pymodule_export]
    use super::{Checked, check, decode_source, late_error, plan, render_json, render_text};
}
