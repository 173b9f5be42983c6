//! `gotopy.compile`, the built-in `compile()` with goto: its arguments taken as the
//! built-in takes them, then the module compiled by the package's compile path
//! (`gotopy._compile.compile_source`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};

/// `ast.PyCF_ONLY_AST`, the same number in every version.
const ONLY_AST: i64 = 0x400;

/// The built-in ``compile()`` with goto: the code object of ``source`` with every marker
/// of every rewritten scope lowered, as ``gotopy.install()`` compiles a module it imports.
/// The scopes rewritten are those the source decorates with ``@goto`` (or ``@with_goto``),
/// or every scope when ``all_scopes`` is true or, when it is ``None``, when the source has a
/// line ``# gotopy: all-scopes`` among its first five. ``mode``, ``flags`` (``__future__``
/// features), ``dont_inherit`` and ``optimize`` are the built-in's; ``"eval"`` compiles an
/// expression, which holds no marker. Errors are ``SyntaxError`` (``GotoSyntaxError`` for
/// gotopy's own) or, where CPython cannot compile the source, what ``compile()`` raises
/// (``RecursionError``, ``MemoryError``), raised without gotopy's frames below the caller's.
#[pyfunction]
#[pyo3(
    signature = (source, filename, mode = "exec", flags = 0, dont_inherit = false, optimize = -1, *, all_scopes = None),
    text_signature = "(source, filename, mode='exec', flags=0, dont_inherit=False, optimize=-1, *, all_scopes=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn compile<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    filename: &Bound<'py, PyAny>,
    mode: &str,
    mut flags: i64,
    dont_inherit: bool,
    optimize: i64,
    all_scopes: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    if !matches!(mode, "exec" | "eval" | "single") {
        return Err(PyValueError::new_err(
            "gotopy.compile() mode must be 'exec', 'eval' or 'single'",
        ));
    }
    if flags & ONLY_AST != 0 {
        return Err(PyValueError::new_err(
            "gotopy.compile() returns code objects: for the syntax tree, use ast.parse (the \
             markers are plain expressions there)",
        ));
    }
    let builtins = py.import("builtins")?;
    let text = if source.is_instance_of::<PyString>() {
        source.clone()
    } else if source.is_instance_of::<PyBytes>()
        || source.is_instance_of::<PyByteArray>()
        || source.is_instance_of::<PyMemoryView>()
    {
        builtins.getattr("bytes")?.call1((source,))?
    } else {
        return Err(PyTypeError::new_err(format!(
            "gotopy.compile() arg 1 must be a string or bytes, not {} (gotopy compiles source \
             text)",
            source.get_type().name()?
        )));
    };
    if !dont_inherit {
        // What the built-in inherits: the `__future__` features of the code that calls it
        // (this function is native: the top frame is the caller's).
        let future = py.import("__future__")?;
        let mut features = 0;
        for name in future.getattr("all_feature_names")?.try_iter()? {
            let feature = future.getattr(name?.cast_into::<PyString>()?)?;
            features |= feature.getattr("compiler_flag")?.extract::<i64>()?;
        }
        let caller = py.import("sys")?.call_method1("_getframe", (0,))?;
        flags |= caller
            .getattr("f_code")?
            .getattr("co_flags")?
            .extract::<i64>()?
            & features;
    }
    let path = py.import("os")?.call_method1("fsdecode", (filename,))?;
    if mode == "eval" {
        return builtins
            .getattr("compile")?
            .call1((text, path, mode, flags, true, optimize));
    }
    let data = match text.cast::<PyString>() {
        Ok(text) => crate::source_bytes(text, &path.cast::<PyString>()?.to_string_lossy())?,
        Err(_) => text,
    };
    let data = data.cast_into::<PyBytes>()?;
    let all_scopes =
        all_scopes.unwrap_or_else(|| gotopy::cpython::asks_all_scopes(data.as_bytes()));
    let keywords = PyDict::new(py);
    keywords.set_item("all_scopes", all_scopes)?;
    keywords.set_item("optimize", optimize)?;
    keywords.set_item("mode", mode)?;
    keywords.set_item("flags", flags)?;
    let compile_source = py.import("gotopy._compile")?.getattr("compile_source")?;
    (compile_source.call((data, path), Some(&keywords)))
        .map_err(|error| crate::frames::own_frames_dropped(py, error))
}
