//! `gotopy._gotopy`: the native module of gotopy's Python package, a thin adapter over the
//! `gotopy` crate. Its front end (check, diagnostics, the plan of a module) and its CPython
//! backend (`gotopy::cpython`: decoding, lowering and assembling code objects for the
//! running version) take bytes and code objects from Python and give text and code objects
//! back; the package's command line is gotopy's own (`gotopy::shell`, in `shell.rs`). It makes
//! no decision about bytecode itself.

use std::collections::HashMap;
use std::sync::OnceLock;

use gotopy::cpython::bytecode::Body;
use gotopy::cpython::code::Code;
use gotopy::cpython::lower::LowerError;
use gotopy::cpython::module::{LateError, late_rejection, lower_module};
use gotopy::cpython::plan::{Rejection, plan_source};
use gotopy::cpython::shapes::Shapes;
use gotopy::cpython::{Version, markers, rewrite};
use gotopy::tables::Position;
use gotopy::{Options, Source};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyLookupError, PyRuntimeError, PySyntaxError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

mod code;
mod compile;
pub mod embed;
mod frames;
mod run;
mod shell;

create_exception!(
    gotopy,
    GotoSyntaxError,
    PySyntaxError,
    "A goto, label or switch error: the first error of a module gotopy rejects, at its place, \
     with the diagnostic's `code` (`G001`...), its help as a note, and the `report` of all of \
     them as `gotopy check` renders it."
);
create_exception!(
    _gotopy,
    Refused,
    PyException,
    "The rewrite without source refuses a code object: `(message, position, help)`."
);
create_exception!(
    _gotopy,
    BytecodeError,
    PyException,
    "A code object that cannot be decoded, or a rewrite that fails the check."
);

fn source(path: &str, data: &[u8]) -> PyResult<Source> {
    Source::from_bytes(path, data).map_err(|error| PyValueError::new_err(error.to_string()))
}

/// `text`, a module's source given as `str` (decoded already), as the bytes of a source file
/// for [`plan`]: encoded in the encoding it declares (PEP 263), else UTF-8. `SyntaxError`
/// at `path` when that encoding cannot hold the text; a name Python does not know is
/// encoded as UTF-8, and the plan says the declaration cannot be decoded.
#[pyfunction]
fn source_bytes<'py>(text: &Bound<'py, PyString>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = text.py();
    let raw = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let encoding = gotopy::source::declared_encoding(raw.extract()?).unwrap_or("utf-8");
    let encoded = match text.call_method1("encode", (encoding,)) {
        Err(error) if error.is_instance_of::<PyLookupError>(py) => {
            text.call_method1("encode", ("utf-8",))
        }
        other => other,
    };
    encoded.map_err(|error| {
        PySyntaxError::new_err((
            format!(
                "the source declares the encoding {encoding}, which cannot hold its text \
                 ({}): remove the coding line or pass the source as bytes",
                error.value(py)
            ),
            (path.to_owned(), 1, 1, py.None()),
        ))
    })
}

/// The stack of the thread on which a deep module's tree makes its round trip through `ast`
/// objects (`gotopy._prepare.compiled`): it starts with the whole of C recursion's allowance
/// (3.12, 3.13) and with a stack that 3.14 and later measure their allowance by, so that the
/// round trip holds what the compiler held on the caller's thread (3.14's main thread, 8 MB:
/// 52,000 subscripts). Mapped only as it is used; just under 256 MB, which CPython for
/// Windows takes no thread stack of.
const DEEP_STACK: usize = 255 << 20;

/// `work()` on a thread of its own with [`DEEP_STACK`], the caller waiting outside the
/// interpreter; what it raises is raised here without its traceback. `None` where no such
/// thread can be had. The stack size is this thread's alone (Python's `threading.stack_size`
/// is the process's, for every thread any library starts meanwhile).
#[pyfunction]
fn on_deep_stack(py: Python<'_>, work: Py<PyAny>) -> PyResult<Option<Py<PyAny>>> {
    let spawned = std::thread::Builder::new()
        .name("gotopy-tree".to_owned())
        .stack_size(DEEP_STACK)
        .spawn(move || Python::attach(|py| work.call0(py)));
    let Ok(thread) = spawned else {
        return Ok(None);
    };
    let done = py
        .detach(|| thread.join())
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    done.map(Some)
        .inspect_err(|error| error.set_traceback(py, None))
}

/// A digest of gotopy's own code, which names the import hook's cache files: the package's
/// Python files in `directory` and this native module's file (its size and time of change),
/// so that a new gotopy never takes an old one's cache. Only equality matters: the hash is
/// the standard library's, fixed for one build of this module.
#[pyfunction]
fn revision(py: Python<'_>, directory: std::path::PathBuf) -> PyResult<String> {
    use std::hash::{DefaultHasher, Hasher};
    let mut hasher = DefaultHasher::new();
    let mut files: Vec<_> = (std::fs::read_dir(&directory)
        .into_iter()
        .flatten()
        .flatten())
    .map(|entry| entry.path())
    .filter(|path| path.extension().is_some_and(|extension| extension == "py"))
    .collect();
    files.sort();
    for file in files {
        hasher.write(&std::fs::read(&file).unwrap_or_default());
    }
    let native = py.import("gotopy._gotopy")?.getattr("__file__");
    let native: Option<std::path::PathBuf> = native.ok().and_then(|file| file.extract().ok());
    if let Some(status) = native.and_then(|file| std::fs::metadata(file).ok()) {
        hasher.write_u64(status.len());
        let changed = status.modified().ok();
        let since = changed.and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok());
        hasher.write_u128(since.unwrap_or_default().as_nanos());
    }
    Ok(format!("{:012x}", hasher.finish() >> 16))
}

/// The shapes of the running interpreter's version.
fn shapes(py: Python<'_>) -> PyResult<&'static Shapes> {
    static FOUND: OnceLock<Option<&'static Shapes>> = OnceLock::new();
    let info = py.version_info();
    FOUND
        .get_or_init(|| Version::new(u32::from(info.major), u32::from(info.minor)).map(Shapes::of))
        .ok_or_else(|| {
            PyRuntimeError::new_err(format!(
                "gotopy supports CPython {}, not {}.{}",
                Version::SUPPORTED,
                info.major,
                info.minor
            ))
        })
}

/// A module the front end accepted, and its plan for CPython's compiler.
#[pyclass(frozen, module = "gotopy._gotopy")]
struct Plan {
    source: Source,
    plan: gotopy::cpython::plan::Plan,
    color: bool,
}

#[pymethods]
impl Plan {
    /// The plan as JSON, for the edits to the tree (`gotopy._prepare`).
    #[getter]
    fn json(&self) -> PyResult<String> {
        serde_json::to_string(&self.plan).map_err(|error| PyValueError::new_err(error.to_string()))
    }

    /// The warnings, rendered as `gotopy check` renders them (empty when there are none).
    #[getter]
    fn warnings(&self) -> String {
        gotopy::diagnostic::render_text(&self.plan.warnings, &self.source, self.color)
    }

    /// Whether some scope is rewritten.
    #[getter]
    fn rewrites(&self) -> bool {
        !self.plan.scopes.is_empty()
    }

    /// Whether the plan edits the tree (a guard, a trampoline or a switch); without, CPython
    /// compiles the source as it is.
    #[getter]
    fn edits_tree(&self) -> bool {
        self.plan.edits_tree()
    }

    /// Whether the module nests deeply enough for CPython's own limits to be near: its
    /// source is then compiled as it is before the edited tree (`_prepare.compiled`).
    #[getter]
    fn deep(&self) -> bool {
        self.plan.deep
    }

    /// The names the imports of `goto` and `gotopy` bind, which a standalone `.pyc` file
    /// leaves out (`still_needed` finds what still uses them).
    #[getter]
    fn imported(&self) -> Vec<String> {
        self.plan.standalone.names.clone()
    }

    /// The module's code object, compiled by CPython from the plan, with the code object of
    /// every scope the plan rewrites lowered; and the rewritten code objects as they are
    /// placed in it. `GotoSyntaxError` when a rewrite fails.
    fn lower<'py>(
        &self,
        module: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)> {
        let shapes = shapes(module.py())?;
        let tree = code::Tree::of(module)?;
        let mut failed = None;
        let result = lower_module(shapes, &self.plan, &tree.nodes, |index| {
            code::read(&tree.objects[index]).unwrap_or_else(|error| {
                failed = Some(error);
                Code::default()
            })
        });
        if let Some(error) = failed {
            return Err(error);
        }
        let lowered = result.map_err(|error| self.rejected(module.py(), &error))?;
        let mut new = HashMap::new();
        for (index, lowered) in lowered {
            new.insert(index, code::replace(&tree.objects[index], &lowered)?);
        }
        tree.rebuild(new)
    }

    /// The exception for an error found in the code CPython compiled from the plan: a
    /// construct refused by design (`G200`) when `help` says what to write instead, else a
    /// failure inside gotopy (`G900`); at `span`, a CPython position (`None` parts allowed).
    #[pyo3(signature = (message, span, help = None))]
    fn late_error(
        &self,
        py: Python<'_>,
        message: String,
        span: Option<[Option<i32>; 4]>,
        help: Option<String>,
    ) -> PyErr {
        let at = span.map(|span| span.map(|part| part.unwrap_or(-1)));
        let help = help.unwrap_or_default();
        self.rejected(py, &LateError::new(help.is_empty(), message, help, at))
    }
}

impl Plan {
    fn rejected(&self, py: Python<'_>, error: &LateError) -> PyErr {
        let rejection = late_rejection(&self.source, error, self.color);
        syntax_error(py, self.source.path(), &rejection)
    }
}

/// The exception of a module gotopy rejects: its first error as `GotoSyntaxError`, or a
/// plain `SyntaxError` saying what failed where no diagnostic does.
fn syntax_error(py: Python<'_>, path: &str, rejection: &Rejection) -> PyErr {
    let Some(first) = rejection.errors.first() else {
        let report = rejection.report.trim().to_owned();
        return PySyntaxError::new_err((report, (path.to_owned(), 1, 1, py.None())));
    };
    let error = GotoSyntaxError::new_err((
        format!("{}: {}", first.code, first.message),
        (
            path.to_owned(),
            first.line,
            first.column,
            first.text.clone(),
            first.end_line,
            first.end_column,
        ),
    ));
    let value = error.value(py);
    let details = || -> PyResult<()> {
        value.setattr("code", first.code)?;
        value.setattr("report", &rejection.report)?;
        if let Some(help) = &first.help {
            // As `check` prints it, under the caret.
            value.call_method1("add_note", (format!("help: {help}"),))?;
        }
        Ok(())
    };
    details().err().unwrap_or(error)
}

/// Decodes, checks and plans one module for CPython's compiler; `GotoSyntaxError` when the front
/// end rejects it, `ValueError` when it cannot be decoded. `scope_line` also rewrites the
/// function or class defined on that line (`f = goto(f)`).
#[pyfunction]
#[pyo3(signature = (path, data, *, all_scopes = false, color = false, scope_line = None))]
fn plan(
    py: Python<'_>,
    path: &str,
    data: &[u8],
    all_scopes: bool,
    color: bool,
    scope_line: Option<usize>,
) -> PyResult<Plan> {
    shapes(py)?;
    let source = source(path, data)?;
    let options = Options::new().all_scopes(all_scopes).scope_line(scope_line);
    let planned = plan_source(&source, options);
    answer(py, source, planned, color)
}

/// What [`plan`] answers for `source`, planned as `planned`.
fn answer(
    py: Python<'_>,
    source: Source,
    planned: Result<gotopy::cpython::plan::Plan, gotopy::compile::CompileError>,
    color: bool,
) -> PyResult<Plan> {
    match planned {
        Ok(plan) => Ok(Plan {
            source,
            plan,
            color,
        }),
        Err(error) => Err(syntax_error(
            py,
            source.path(),
            &Rejection::of(&error, &source, color),
        )),
    }
}

/// What [`plan`] does, on a thread of its own while `beside` (a callable without arguments)
/// runs on this one: CPython's compile of the source, which the plan mostly needs as it is.
/// Returns the plan and what `beside` returned; `GotoSyntaxError` when the front end rejects the
/// module, but first what `beside` raised (its callers raise only what must not be
/// swallowed, as `KeyboardInterrupt`). Without a thread to be had, the plan is made on this
/// one after `beside`.
#[pyfunction]
#[pyo3(signature = (path, data, beside, *, all_scopes = false, color = false, scope_line = None))]
fn plan_beside<'py>(
    py: Python<'py>,
    path: &str,
    data: &[u8],
    beside: &Bound<'py, PyAny>,
    all_scopes: bool,
    color: bool,
    scope_line: Option<usize>,
) -> PyResult<(Plan, Bound<'py, PyAny>)> {
    shapes(py)?;
    let decoded = source(path, data)?;
    let options = Options::new().all_scopes(all_scopes).scope_line(scope_line);
    let work = move || {
        let planned = plan_source(&decoded, options);
        (decoded, planned)
    };
    // The plan's own work on a module nested too deeply for a new thread's stack moves to a
    // thread of its own (`gotopy::depth`), as it does from the caller's thread.
    let spawned = std::thread::Builder::new()
        .name("gotopy-plan".to_owned())
        .spawn(work);
    let returned = beside.call0();
    let (source, planned) = match spawned {
        Ok(thread) => py
            .detach(|| thread.join())
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        // No thread to be had: the plan is made here, after all.
        Err(_) => {
            let source = source(path, data)?;
            let planned = plan_source(&source, options);
            (source, planned)
        }
    };
    let returned = returned?;
    Ok((answer(py, source, planned, color)?, returned))
}

/// From this size of source, the plan may be made beside CPython's compile of the source
/// ([`plan_beside`]): a module's plan costs a fifth of its compile, and a thread far less
/// than the plan of a module this size.
const PLAN_BESIDE: usize = 1 << 18;

/// Whether to make the plan of the module `data` beside CPython's compile of its source: a
/// big module whose plan needs that compile, as far as its bytes tell
/// (`gotopy::cpython::plan::may_edit_tree`), and no other thread running Python (holding the
/// compile's warnings takes the whole process's for its time).
#[pyfunction]
fn beside_pays(py: Python<'_>, data: &[u8]) -> PyResult<bool> {
    if data.len() < PLAN_BESIDE {
        return Ok(false);
    }
    let threads: usize = py
        .import("threading")?
        .call_method0("active_count")?
        .extract()?;
    Ok(threads == 1 && !gotopy::cpython::plan::may_edit_tree(data))
}

/// A CPython position as Python gives it: `(line, end_line, column, end_column)`.
type PyPosition = (Option<i32>, Option<i32>, Option<i32>, Option<i32>);

/// A CPython position as Python gives it, `None` where there is none.
fn position(at: Position) -> PyPosition {
    let one = |value: i32| (value >= 0).then_some(value);
    (one(at[0]), one(at[1]), one(at[2]), one(at[3]))
}

fn bytecode_error(error: impl std::fmt::Display) -> PyErr {
    BytecodeError::new_err(error.to_string())
}

/// Whether `code` (not its nested code objects) still holds a marker: false once gotopy has
/// lowered it, or when it never had one.
#[pyfunction]
fn has_markers(code: &Bound<'_, PyAny>) -> PyResult<bool> {
    let shapes = shapes(code.py())?;
    markers::has_markers(shapes, &code::read(code)?).map_err(bytecode_error)
}

/// A marker name misused in `code`, which has no marker, as the rewrite without source
/// refuses it: `(message, position, help)`, or `None`.
#[pyfunction]
fn misused_markers(
    code: &Bound<'_, PyAny>,
) -> PyResult<Option<(String, PyPosition, &'static str)>> {
    let shapes = shapes(code.py())?;
    let found = markers::misused_markers(shapes, &code::read(code)?).map_err(bytecode_error)?;
    Ok(found.map(|(message, at)| (message, position(at), rewrite::NO_SOURCE)))
}

/// `code` with its gotos and labels lowered from the bytecode alone (no source); `Refused`
/// with `(message, position, help)` for what the bytecode does not prove right.
#[pyfunction]
fn rewrite_without_source<'py>(code: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let shapes = shapes(code.py())?;
    match rewrite::lower(shapes, &code::read(code)?) {
        Ok(lowered) => code::replace(code, &lowered),
        Err(LowerError::Refused { message, at, help }) => {
            Err(Refused::new_err((message, position(at), help)))
        }
        Err(LowerError::Internal { message, .. }) => Err(bytecode_error(message)),
        Err(LowerError::Check(error)) => Err(bytecode_error(error)),
    }
}

/// The first load, in any code object of `module`, of one of `names` as a global or
/// module-level name, as the refusal of a standalone `.pyc`: `(message, position, help)`,
/// or `None`.
#[pyfunction]
fn still_needed(
    module: &Bound<'_, PyAny>,
    names: Vec<String>,
) -> PyResult<Option<(String, PyPosition, &'static str)>> {
    let shapes = shapes(module.py())?;
    let tree = code::Tree::of(module)?;
    for object in &tree.objects {
        let found =
            markers::still_needed(shapes, &code::read(object)?, &names).map_err(bytecode_error)?;
        if let Some((name, at)) = found {
            let (message, help) = markers::still_needed_refusal(&name);
            return Ok(Some((message, position(at), help)));
        }
    }
    Ok(None)
}

/// Whether a module asks for every scope to be rewritten (the line `# gotopy: all-scopes`
/// among its first five), as the import hook and `compile` honour it.
#[pyfunction]
fn asks_all_scopes(data: &[u8]) -> bool {
    gotopy::cpython::asks_all_scopes(data)
}

/// `code` decoded and assembled again with no edit: the same code object, for the tests and
/// benchmarks of the bytecode layer.
#[pyfunction]
fn reassemble<'py>(code: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let shapes = shapes(code.py())?;
    let read = code::read_tables(code)?;
    let assembled = Body::decode(shapes, read.raw())
        .and_then(|body| body.assemble())
        .map_err(bytecode_error)?;
    let lowered = gotopy::cpython::code::Lowered {
        code: assembled.code,
        locations: assembled.locations,
        exceptions: assembled.exceptions,
        stacksize: assembled.depth.max(read.stacksize),
        added: Vec::new(),
        names: Vec::new(),
    };
    code::replace(code, &lowered)
}

/// Free of the GIL (PEP 703): on a free-threaded CPython the module keeps the GIL off. Every
/// class is frozen (`Plan`, `Frameless`: their Rust fields set once when made, then
/// only read; `Frameless`'s `__dict__` is a Python dict, which CPython locks), the only
/// statics are `OnceLock`s (the shapes and opcode tables of a version) and thread-locals,
/// the front end forbids `unsafe` (this crate's one `unsafe` call, `embed::register`, runs
/// before any interpreter does), and `plan_beside` detaches from the interpreter while only
/// Rust runs. The Python modules' shared state has its own locks or none to need
/// (docs/python.md, "Threads").
#[pymodule(gil_used = false)]
mod _gotopy {
    #[pymodule_export]
    use super::compile::compile;
    #[pymodule_export]
    use super::frames::{Frameless, frameless};
    #[pymodule_export]
    use super::shell::main;
    #[pymodule_export]
    use super::{BytecodeError, GotoSyntaxError, Refused};
    #[pymodule_export]
    use super::{
        Plan, asks_all_scopes, beside_pays, has_markers, misused_markers, on_deep_stack, plan,
        plan_beside, reassemble, revision, rewrite_without_source, source_bytes, still_needed,
    };

    /// `VERSION`: the package's version (this crate's, which pyproject.toml takes as the
    /// package's); `REPORT`: the help of every internal error, the binary's words;
    /// `PLAN_BESIDE`: the size from which `beside_pays` may say yes.
    #[pymodule_init]
    fn init(module: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
        module.add("PLAN_BESIDE", super::PLAN_BESIDE)?;
        module.add("REPORT", gotopy::diagnostic::REPORT)
    }
}
