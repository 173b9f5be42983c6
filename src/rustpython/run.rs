//! Running a module in an embedded RustPython interpreter, compiled through gotopy.
//!
//! The interpreter has RustPython's native modules and its pure-Python standard library
//! frozen in (no `Lib` directory is needed), and a module `goto` (`src/rustpython/goto.py`,
//! itself compiled by gotopy) with the names markers and decorators use.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode, PyInt, PyStr, PyTupleRef};
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, TryFromObject, VirtualMachine};

use crate::plan::CompileError;
use crate::rustpython::compile::compile_source;
use crate::{Options, Source};

/// How `python` was told which program to run, which decides `sys.path[0]` and `__file__`
/// as `python` decides them.
#[derive(Clone, Copy, Debug)]
pub enum Main<'a> {
    /// `python FILE`: the file's directory comes first on `sys.path`; `__file__` is the path,
    /// made absolute.
    File(&'a str),
    /// `python -c CODE`: `''` (the current directory) comes first on `sys.path`; there is no
    /// `__file__`.
    Command,
    /// `python -`, the program read from standard input: `''` comes first on `sys.path`;
    /// `__file__` is `<stdin>`.
    Stdin,
}

/// Runs a compiled module as `__main__` with `sys.argv` set to `argv` and returns the
/// process exit status: 0, 1 after an uncaught exception (its traceback printed to stderr),
/// or the code of a `SystemExit` as the operating system reports it, modulo 256 (so
/// `SystemExit(256)` is 0 and `SystemExit(-1)` is 255, as under CPython).
pub fn run_main(code: rustpython_compiler::CodeObject, main: Main<'_>, argv: Vec<String>) -> u8 {
    let (first_on_path, file) = match main {
        Main::File(path) => script_places(path),
        Main::Command => (String::new(), None),
        Main::Stdin => (String::new(), Some("<stdin>".to_owned())),
    };
    let status = interpreter(argv).run(|vm| {
        put_first_on_path(&first_on_path, vm)?;
        let scope = vm.new_scope_with_main()?;
        if let Some(file) = file {
            scope
                .globals
                .set_item("__file__", vm.ctx.new_str(file.as_str()).into(), vm)?;
        }
        vm.run_code_obj(vm.ctx.new_code(code), scope)
            .map(drop)
            .map_err(|exception| c_exit_code(exception, vm))
    });
    exit_status(status)
}

/// Where `python FILE` looks for imports first and what it calls the file: the directory
/// of the file with symbolic links resolved, and the path made absolute (as given, not
/// normalised).
fn script_places(path: &str) -> (String, Option<String>) {
    let shown = |path: &std::path::Path| path.to_string_lossy().into_owned();
    let directory = std::fs::canonicalize(path)
        .ok()
        .and_then(|real| real.parent().map(shown))
        .or_else(|| std::path::Path::new(path).parent().map(shown))
        .unwrap_or_default();
    let absolute =
        std::env::current_dir().map_or_else(|_| path.to_owned(), |dir| shown(&dir.join(path)));
    (directory, Some(absolute))
}

/// [`run_main`] for a file: `python FILE` with `sys.argv` set to `argv`.
pub fn run_code(code: rustpython_compiler::CodeObject, path: &str, argv: Vec<String>) -> u8 {
    run_main(code, Main::File(path), argv)
}

/// Why `python -m` would not run a module: it is not found, or is not something that runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModuleNotRun(pub String);

/// Runs module `name` as `__main__`, as `python -m name ARGS...` does: the current
/// directory first on `sys.path`; the module found there as an import would find it, after
/// importing its parent packages; a package runs its `__main__` submodule; `sys.argv` is
/// the module's path followed by `args`. A module in a `.py` file is compiled by `compile`,
/// given the file's path, which gives its code or the exit status to stop with (the caller
/// reports why); other modules (frozen ones of the standard library) run as they are.
/// Returns the exit status as [`run_main`] does, or why nothing ran.
pub fn run_module(
    name: &str,
    args: Vec<String>,
    compile: impl FnOnce(&str) -> Result<rustpython_compiler::CodeObject, u8>,
) -> Result<u8, ModuleNotRun> {
    // While the module is searched for, `sys.argv[0]` is `-m`, as under `python`.
    let argv = std::iter::once("-m".to_owned()).chain(args).collect();
    let current = std::env::current_dir()
        .map_or_else(|_| String::new(), |dir| dir.to_string_lossy().into_owned());
    let mut stopped = None;
    let status = interpreter(argv).run(|vm| {
        put_first_on_path(&current, vm)?;
        let helper = vm.new_scope_with_builtins();
        vm.run_string(helper.clone(), MAIN_MODULE, "<gotopy run -m>".to_owned())?;
        let find = helper.globals.get_item("find", vm)?;
        let found = find.call((name,), vm)?;
        if let Some(reason) = found.downcast_ref::<PyStr>() {
            stopped = Some(Err(ModuleNotRun(reason.to_string_lossy().into_owned())));
            return Ok(());
        }
        let (spec, code): (PyObjectRef, PyObjectRef) =
            PyTupleRef::try_from_object(vm, found)?.extract_tuple(vm)?;
        let code = if vm.is_none(&code) {
            let origin = spec.get_attr("origin", vm)?.str(vm)?;
            match compile(&origin.to_string_lossy()) {
                Ok(code) => vm.ctx.new_code(code),
                Err(status) => {
                    stopped = Some(Ok(status));
                    return Ok(());
                }
            }
        } else {
            code.downcast::<PyCode>()
                .map_err(|_| vm.new_type_error("the module's loader gave no code object"))?
        };
        let scope = vm.new_scope_with_main()?;
        let become_main = helper.globals.get_item("become_main", vm)?;
        become_main.call((spec, scope.globals.clone()), vm)?;
        vm.run_code_obj(code, scope)
            .map(drop)
            .map_err(|exception| c_exit_code(exception, vm))
    });
    stopped.unwrap_or(Ok(exit_status(status)))
}

/// How `python -m` finds a module and makes it `__main__`: the Python package's own
/// module, which this interpreter runs too, so that both commands find the same modules.
const MAIN_MODULE: &str = include_str!("../../python/gotopy/_main.py");

/// Puts `directory` first on `sys.path`, unless the safe-path setting (`PYTHONSAFEPATH`)
/// says to leave the script's directory and the current directory off, as `python` does.
fn put_first_on_path(directory: &str, vm: &VirtualMachine) -> PyResult<()> {
    if vm.state.config.settings.safe_path {
        return Ok(());
    }
    let sys_path = vm.sys_module.get_attr("path", vm)?;
    vm.call_method(&sys_path, "insert", (0, vm.ctx.new_str(directory)))
        .map(drop)
}

/// The interpreter's exit status as a process exit status.
fn exit_status(status: u32) -> u8 {
    // The status is a C `int` (RustPython gives its bits as `u32`); a process exit status
    // keeps its low eight bits.
    (status & 0xFF) as u8
}

/// A `SystemExit` whose code is an integer becomes one whose code is what CPython passes
/// to `exit()`: the integer truncated to a C `int` when it fits in 64 bits, else -1.
/// RustPython would give -1 for anything beyond 32 bits. Other exceptions are unchanged.
fn c_exit_code(exception: PyBaseExceptionRef, vm: &VirtualMachine) -> PyBaseExceptionRef {
    if !exception.fast_isinstance(vm.ctx.exceptions.system_exit) {
        return exception;
    }
    let args = exception.args();
    let [code] = args.as_slice() else {
        return exception;
    };
    let Some(code) = code.downcast_ref::<PyInt>() else {
        return exception;
    };
    // Truncation to 32 bits is the point: CPython casts the `long long` to `int`.
    let code = code
        .try_to_primitive::<i64>(vm)
        .map_or(-1, |code| code as i32);
    vm.new_exception(
        vm.ctx.exceptions.system_exit.to_owned(),
        vec![vm.ctx.new_int(code).into()],
    )
}

/// Compiles and runs `source` (see [`run_code`]).
pub fn run_source(
    source: &Source,
    options: Options,
    argv: Vec<String>,
) -> Result<u8, CompileError> {
    let compiled = compile_source(source, options)?;
    Ok(run_code(compiled.code, source.path(), argv))
}

/// An interpreter with the native modules, the frozen standard library, gotopy's modules
/// and its import hook.
fn interpreter(argv: Vec<String>) -> Interpreter {
    let mut settings = rustpython_vm::Settings::default();
    settings.argv = argv;
    from_environment(&mut settings);
    // RustPython would take the standard streams' encoding from a C locale it never sets
    // up, that is ASCII, and fail on the first non-ASCII `print`. CPython on a UTF-8 or C
    // locale (PEP 538, PEP 540) uses UTF-8 with `surrogateescape`, unless
    // `PYTHONIOENCODING=encoding[:errors]` says otherwise.
    let (encoding, errors) = stdio_encoding(std::env::var("PYTHONIOENCODING").ok().as_deref());
    settings.stdio_encoding = Some(encoding);
    settings.stdio_errors = errors;
    let builder = Interpreter::builder(settings);
    let natives = rustpython_stdlib::stdlib_module_defs(&builder.ctx);
    let builder = builder
        .add_native_modules(&natives)
        .add_frozen_modules(rustpython_pylib::FROZEN_STDLIB);
    let interpreter = crate::rustpython::embed::install(builder).build();
    if let Err(error) = crate::rustpython::embed::install_import_hook(&interpreter) {
        interpreter.enter(|vm| vm.print_exception(error));
    }
    interpreter
}

/// The settings `python` takes from its environment: `PYTHONPATH`'s directories after the
/// script's on `sys.path`, `PYTHONSAFEPATH`, `PYTHONDONTWRITEBYTECODE`, `PYTHONHASHSEED`
/// (a number; `random` is the default) and `PYTHONWARNINGS`. Set to the empty string, each
/// is unset, as for `python`.
fn from_environment(settings: &mut rustpython_vm::Settings) {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(value) = set("PYTHONPATH") {
        settings.path_list = python_path(&value);
    }
    settings.safe_path = set("PYTHONSAFEPATH").is_some();
    if set("PYTHONDONTWRITEBYTECODE").is_some() {
        settings.write_bytecode = false;
    }
    if let Some(seed) = set("PYTHONHASHSEED").and_then(|seed| seed.to_str()?.parse().ok()) {
        settings.hash_seed = Some(seed);
    }
    if let Some(warnings) = set("PYTHONWARNINGS") {
        let warnings = warnings.to_string_lossy();
        settings.warnoptions.extend(
            warnings
                .split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
        );
    }
}

/// `PYTHONPATH`'s entries as `python` puts them on `sys.path`: each made absolute as
/// `os.path.abspath` does (lexically; an empty entry is the current directory), the first
/// of equal entries kept (as `site` removes the later ones).
fn python_path(value: &std::ffi::OsStr) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for entry in std::env::split_paths(value) {
        let absolute = if entry.as_os_str().is_empty() {
            std::env::current_dir()
        } else {
            std::path::absolute(&entry)
        };
        let Ok(absolute) = absolute else { continue };
        let mut normal = std::path::PathBuf::new();
        for part in absolute.components() {
            match part {
                std::path::Component::ParentDir => {
                    normal.pop();
                }
                part => normal.push(part),
            }
        }
        let normal = normal.to_string_lossy().into_owned();
        if !entries.contains(&normal) {
            entries.push(normal);
        }
    }
    entries
}

/// The standard streams' encoding and error handler, given `PYTHONIOENCODING`: either part
/// may be left out (`latin-1`, `:replace`); an encoding without a handler is `strict`.
fn stdio_encoding(variable: Option<&str>) -> (String, Option<String>) {
    let (encoding, errors) = match variable {
        Some(variable) => match variable.split_once(':') {
            Some((encoding, errors)) => (encoding, Some(errors)),
            None => (variable, None),
        },
        None => ("", None),
    };
    let errors = errors.filter(|errors| !errors.is_empty());
    if encoding.is_empty() {
        let errors = errors.unwrap_or("surrogateescape");
        ("utf-8".to_owned(), Some(errors.to_owned()))
    } else {
        (encoding.to_owned(), errors.map(str::to_owned))
    }
}
