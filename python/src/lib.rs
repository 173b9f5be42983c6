//! `gotopy._gotopy`: gotopy's front end for the Python package.
//!
//! The Python shell (`gotopy/__main__.py`) reads files, parses arguments, writes the streams
//! and exits; this module takes bytes and returns text, through the same library functions
//! the `gotopy` binary calls, so both print the same diagnostics, JSON and summary. It knows
//! nothing of the command line, the file system or colour detection.

use gotopy::compile::CompileError;
use gotopy::compile::plan::plan_source;
use gotopy::diagnostic::{render_text as render_diagnostics, report_json, report_text};
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

/// Decodes, checks and plans one module for CPython's compiler (`gotopy::compile::plan`),
/// as JSON: `{"plan": ...}`, or `{"errors": [...], "report": text}` when it is rejected,
/// each error with its code, message and one-based line and character column.
#[pyfunction]
#[pyo3(signature = (path, data, *, all_scopes = false))]
fn plan(path: &str, data: &[u8], all_scopes: bool) -> PyResult<String> {
    let source =
        Source::from_bytes(path, data).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let json = match plan_source(&source, Options::new().all_scopes(all_scopes)) {
        Ok(plan) => serde_json::json!({ "plan": plan }),
        Err(CompileError::Rejected { diagnostics, .. }) => {
            let errors: Vec<_> = diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| {
                    let start = source.location(d.range.start());
                    let end = source.location(d.range.end());
                    serde_json::json!({
                        "code": d.code.as_str(),
                        "message": d.message,
                        "line": start.line,
                        "column": start.column,
                        "end_line": end.line,
                        "end_column": end.column,
                    })
                })
                .collect();
            let report = render_diagnostics(&diagnostics, &source, false);
            serde_json::json!({ "errors": errors, "report": report })
        }
        Err(other) => serde_json::json!({ "errors": [], "report": other.to_string() }),
    };
    Ok(json.to_string())
}

#[pymodule]
mod _gotopy {
    #[pymodule_export]
    use super::{Checked, check, decode_source, plan, render_json, render_text};
}
