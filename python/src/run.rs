//! `run` and `dis` of the package's command line: a program compiled with goto by the running
//! CPython (`gotopy._compile`), then run as `python` runs the same command line, or listed as
//! the `dis` module lists it. Their messages and exit statuses are the binary's
//! (`gotopy::shell`); the interpreter's own objects (the main module, `sys.argv`, the import
//! hook, `sys.excepthook`) are set up here as `python` sets them up.

use std::ffi::{OsStr, OsString};

use gotopy::inputs::{Input, io_reason, read_bytes};
use gotopy::shell::{BAD_INPUT, FOUND_ERRORS, SUCCESS};
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyRecursionError, PySyntaxError, PySystemExit, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice, PyString};

/// How a command ends: with its exit status (its messages printed), or with what the
/// program or the driver raised, which the command line raises again.
pub(crate) enum Ended {
    Status(u8),
    Raised(PyErr),
}

impl From<PyErr> for Ended {
    fn from(error: PyErr) -> Ended {
        Ended::Raised(error)
    }
}

type Ends<T> = Result<T, Ended>;

/// Writes `text` to `sys.stdout` or `sys.stderr` (`stream`) as UTF-8 bytes, as the binary
/// writes whatever the locale's encoding, after what Python wrote there.
fn write(py: Python<'_>, stream: &str, text: &Bound<'_, PyAny>) -> PyResult<()> {
    let stream = py.import("sys")?.getattr(stream)?;
    stream.call_method0("flush")?;
    let buffer = stream.getattr("buffer")?;
    buffer.call_method1(
        "write",
        (text.call_method1("encode", ("utf-8", "surrogateescape"))?,),
    )?;
    buffer.call_method0("flush")?;
    Ok(())
}

/// Ends the command with `gotopy: error: MESSAGE` and [`BAD_INPUT`].
fn stop(py: Python<'_>, message: &str) -> Ended {
    let line = PyString::new(py, &format!("gotopy: error: {message}\n"));
    match write(py, "stderr", &line) {
        Ok(()) => Ended::Status(BAD_INPUT),
        Err(error) => Ended::Raised(error),
    }
}

/// The program `data` (read from `shown`) compiled with goto, its errors printed (its
/// warnings too when `warnings`, as for a build step): status 1 when it has errors, 2 when it
/// cannot be decoded.
fn compiled<'py>(
    py: Python<'py>,
    data: &[u8],
    shown: &str,
    all_scopes: bool,
    color: bool,
    warnings: bool,
) -> Ends<Bound<'py, PyAny>> {
    let all_scopes = all_scopes || gotopy::cpython::asks_all_scopes(data);
    let code = (|| {
        let plan = crate::plan(py, shown, data, all_scopes, color, None)?;
        if warnings {
            write(py, "stderr", &PyString::new(py, &plan.warnings()))?;
        }
        let keywords = PyDict::new(py);
        keywords.set_item("the_plan", plan)?;
        (py.import("gotopy._compile")?.getattr("compile_source")?)
            .call((PyBytes::new(py, data), shown), Some(&keywords))
    })();
    code.map_err(|error| {
        if error.is_instance_of::<PyValueError>(py) {
            // Bytes the file's encoding cannot decode.
            return stop(py, &format!("{shown}: {}", error.value(py)));
        }
        let cpython = error.is_instance_of::<PySyntaxError>(py)
            || error.is_instance_of::<PyRecursionError>(py)
            || error.is_instance_of::<PyMemoryError>(py);
        if !cpython {
            return Ended::Raised(error);
        }
        let value = error.value(py);
        let report =
            (value.getattr("report").ok()).filter(|report| report.is_truthy().unwrap_or(false));
        let shown = match report {
            Some(report) => write(py, "stderr", &report),
            // CPython's own (a module it cannot compile too), shown as `python` shows it.
            None => (|| {
                let value = value.call_method1("with_traceback", (py.None(),))?;
                let hook = py.import("sys")?.getattr("excepthook")?;
                hook.call1((error.get_type(py), value, py.None())).map(drop)
            })(),
        };
        shown.map_or_else(Ended::Raised, |()| Ended::Status(FOUND_ERRORS))
    })
}

/// `gotopy dis`: the rewritten code of a file (`data`, read from `shown`) as the `dis`
/// module lists it: every code object (`dis.dis` of the module's), or each one `function`
/// names alone.
pub(crate) fn dis(
    py: Python<'_>,
    shown: &str,
    data: &[u8],
    function: Option<&str>,
    all_scopes: bool,
    color: bool,
) -> Ends<u8> {
    let code = compiled(py, data, shown, all_scopes, color, true)?;
    let dis = py.import("dis")?.getattr("dis")?;
    let out = py.import("io")?.getattr("StringIO")?.call0()?;
    let keywords = PyDict::new(py);
    keywords.set_item("file", &out)?;
    match function {
        None => drop(dis.call((&code,), Some(&keywords))?),
        Some(function) => {
            keywords.set_item("depth", 0)?;
            for one in crate::code::Tree::of(&code)?.objects {
                let name: String = one.getattr("co_qualname")?.extract()?;
                if function == name || Some(function) == name.rsplit('.').next() {
                    out.call_method1("write", (format!("Disassembly of {}:\n", one.repr()?),))?;
                    dis.call((&one,), Some(&keywords))?;
                }
            }
        }
    }
    if out.call_method0("tell")?.extract::<usize>()? == 0 {
        let function = function.unwrap_or_default();
        return Err(stop(
            py,
            &format!("{shown}: no code object named `{function}`"),
        ));
    }
    let listed = out.call_method0("getvalue")?;
    match write(py, "stdout", &listed) {
        Err(error) if error.is_instance_of::<pyo3::exceptions::PyOSError>(py) => {
            let number = error.value(py).getattr("errno")?.extract::<Option<i32>>()?;
            let words = number.map_or_else(
                || error.value(py).to_string(),
                |number| io_reason(&std::io::Error::from_raw_os_error(number)),
            );
            Err(stop(
                py,
                &format!("cannot write to standard output: {words}"),
            ))
        }
        written => written.map(|()| SUCCESS).map_err(Ended::Raised),
    }
}

/// What `run` runs.
pub(crate) enum Program<'a> {
    /// A file's bytes, read from `shown` by the command line, given as `given` (`-` for
    /// standard input).
    File {
        given: OsString,
        shown: &'a str,
        data: &'a [u8],
    },
    /// `-c CODE`.
    Code(String),
    /// `-m MODULE`.
    Module(String),
}

/// The code `run` runs, or the module whose code `-m` finds once the hook is installed.
enum Main<'py, 'a> {
    Code(Bound<'py, PyAny>),
    Module(&'a str),
}

/// `gotopy run`: the program run as `python` runs the same command line, compiled with goto
/// and with the import hook installed: `sys.argv`, `sys.path[0]` and the main module's
/// globals as `python` sets them for a FILE (a CPython `.pyc` too, told by its extension or
/// its magic number, as `python` tells it), `-`, `-c CODE` or `-m MODULE`; an uncaught
/// exception printed by `sys.excepthook` from the program's own frames, exit status 1.
pub(crate) fn run(
    py: Python<'_>,
    program: Program<'_>,
    args: Vec<String>,
    all_scopes: bool,
    color: bool,
) -> Ends<u8> {
    let os = py.import("os")?;
    let path = os.getattr("path")?;
    let windows = os.getattr("name")?.extract::<String>()? == "nt";
    let cwd = || os.call_method0("getcwd");
    let version = py.version_info();
    let machinery = py.import("importlib.machinery")?;
    // `sys.path[0]`, `__file__`, the code (none yet for `-m`) and its loader.
    let mut first = PyString::new(py, "").into_any();
    let (mut file, mut loader) = (None, None);
    let code;
    let argv0 = match &program {
        Program::Code(_) => OsString::from("-c"),
        Program::Module(_) => OsString::from("-m"),
        Program::File { given, .. } => given.clone(),
    };
    match &program {
        Program::Code(text) => {
            let text = PyString::new(py, text);
            let data = crate::source_bytes(&text, "<string>")?;
            let data = data.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes();
            let compiled = compiled(py, data, "<string>", all_scopes, color, false)?;
            // From 3.13 `python -c` gives tracebacks the code's lines, as each version keeps them.
            let linecache = py.import("linecache")?;
            if version >= (3, 14) {
                linecache.call_method1("_register_code", (&compiled, &text, "<string>"))?;
            } else if version >= (3, 13) {
                let lines = PyList::empty(py);
                for line in text.call_method0("splitlines")?.try_iter()? {
                    lines.append(format!("{}\n", line?.extract::<String>()?))?;
                }
                let entry = (text.len()?, py.None(), lines, "<string>");
                linecache.getattr("cache")?.set_item("<string>", entry)?;
            }
            code = Main::Code(compiled);
        }
        Program::Module(name) => {
            first = cwd()?;
            code = Main::Module(name);
        }
        Program::File { given, shown, data } if given.as_os_str() == OsStr::new("-") => {
            file = Some(PyString::new(py, shown).into_any());
            code = Main::Code(compiled(py, data, shown, all_scopes, color, false)?);
            // sys.path[0] as CPython computes it (_PyPathConfig_ComputeSysPath0): the
            // directory of "-", '' on POSIX, and on Windows that of its full path, the
            // working directory.
            if windows {
                first = cwd()?;
            }
        }
        Program::File { given, shown, data } => {
            let absolute = path.call_method1("abspath", (given,))?;
            // The script's directory, its links resolved where CPython resolves them
            // (readlink; not on Windows).
            let resolved = if windows {
                absolute.clone()
            } else {
                path.call_method1("realpath", (&absolute,))?
            };
            first = path.call_method1("dirname", (resolved,))?;
            let magic: Vec<u8> = py
                .import("importlib.util")?
                .getattr("MAGIC_NUMBER")?
                .extract()?;
            if given.as_encoded_bytes().ends_with(b".pyc") || data.get(..2) == magic.get(..2) {
                if data.get(..4) != Some(&magic[..]) {
                    let message =
                        format!("{shown}: not a .pyc file of this Python (bad magic number)");
                    return Err(stop(py, &message));
                }
                let body = PyBytes::new(py, data.get(16..).unwrap_or_default());
                code = Main::Code(py.import("marshal")?.call_method1("loads", (body,))?);
                loader = Some(
                    machinery
                        .getattr("SourcelessFileLoader")?
                        .call1(("__main__", &absolute))?,
                );
            } else {
                let compiled = compiled(py, data, shown, all_scopes, color, false)?;
                loader = Some(
                    machinery
                        .getattr("SourceFileLoader")?
                        .call1(("__main__", &absolute))?,
                );
                // Named as CPython names a main script's code (absolute); the diagnostics
                // showed the path as given, as the binary shows it.
                py.import("_imp")?
                    .call_method1("_fix_co_filename", (&compiled, &absolute))?;
                code = Main::Code(compiled);
            }
            file = Some(absolute);
        }
    }
    let main = main_module(py, file.as_ref(), loader)?;
    let sys = py.import("sys")?;
    let argv = PyList::new(py, [argv0])?;
    for arg in args {
        argv.append(arg)?;
    }
    sys.getattr("argv")?.set_item(PySlice::full(py), argv)?;
    if !sys.getattr("flags")?.getattr("safe_path")?.is_truthy()? {
        sys.getattr("path")?.set_item(0, first)?;
    }
    py.import("gotopy._hook")?.call_method0("install")?;
    let code = match code {
        Main::Code(code) => code,
        // `-m`: found as `python -m` finds it, once the hook is there.
        Main::Module(name) => {
            let finder = py.import("gotopy._main")?;
            let found = finder.call_method1("find", (name,))?;
            if let Ok(message) = found.extract::<String>() {
                return Err(stop(py, &message));
            }
            let (spec, code): (Bound<'_, PyAny>, Bound<'_, PyAny>) = found.extract()?;
            let code = if code.is_none() {
                let origin: String = spec.getattr("origin")?.extract()?;
                let read = read_bytes(&Input::File(origin.clone().into()));
                let (_, data) = read.map_err(|message| stop(py, &message))?;
                compiled(py, &data, &origin, all_scopes, color, false)?
            } else {
                code
            };
            finder.call_method1("become_main", (spec, main.getattr("__dict__")?))?;
            code
        }
    };
    let globals = main.getattr("__dict__")?;
    let Err(error) = py.import("builtins")?.call_method1("exec", (code, globals)) else {
        return Ok(SUCCESS);
    };
    if error.is_instance_of::<PySystemExit>(py) {
        return Err(Ended::Raised(error));
    }
    let interrupted = error.is_instance_of::<PyKeyboardInterrupt>(py);
    // Printed as the interpreter prints it: exec is native, so the traceback holds the
    // program's own frames only. The value carries the whole traceback (on 3.11 the one
    // fetched with the error is longer than the value's own until it is set).
    let value = error.into_value(py).into_bound(py);
    let hook = sys.getattr("excepthook")?;
    hook.call1((value.get_type(), &value, value.getattr("__traceback__")?))?;
    if interrupted {
        die_of_interrupt(py)?;
    }
    Ok(FOUND_ERRORS)
}

/// A new `__main__` with the globals `python` gives it on this version, for a program from
/// `file` (none for `-c` and `-m`) loaded by `loader` (none: `BuiltinImporter`, as for `-c`
/// and `-`).
fn main_module<'py>(
    py: Python<'py>,
    file: Option<&Bound<'py, PyAny>>,
    loader: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let main = pyo3::types::PyModule::new(py, "__main__")?;
    let namespace = main.dict();
    let version = py.version_info();
    if version < (3, 14) {
        namespace.set_item("__annotations__", PyDict::new(py))?;
    }
    namespace.set_item("__builtins__", py.import("builtins")?)?;
    if let Some(file) = file {
        if version < (3, 15) {
            namespace.set_item("__cached__", py.None())?;
        }
        namespace.set_item("__file__", file)?;
    }
    let loader = match loader {
        Some(loader) => loader,
        None => py
            .import("importlib.machinery")?
            .getattr("BuiltinImporter")?,
    };
    namespace.set_item("__loader__", loader)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("__main__", &main)?;
    Ok(main.into_any())
}

/// Ends the process by SIGINT, as CPython does after an uncaught `KeyboardInterrupt`, so
/// that a shell sees the interrupt.
fn die_of_interrupt(py: Python<'_>) -> PyResult<()> {
    let sys = py.import("sys")?;
    sys.getattr("stdout")?.call_method0("flush")?;
    sys.getattr("stderr")?.call_method0("flush")?;
    let signal = py.import("signal")?;
    let interrupt = signal.getattr("SIGINT")?;
    signal.call_method1("signal", (&interrupt, signal.getattr("SIG_DFL")?))?;
    let os = py.import("os")?;
    os.call_method1("kill", (os.call_method0("getpid")?, interrupt))?;
    Ok(())
}
