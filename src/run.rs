//! Running a module in an embedded RustPython interpreter, compiled through gotopy.
//!
//! The interpreter has RustPython's native modules and its pure-Python standard library
//! frozen in (no `Lib` directory is needed), and a module `goto` (`src/python/goto.py`,
//! itself compiled by gotopy) with the names markers and decorators use.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyInt};
use rustpython_vm::{AsObject, Interpreter, VirtualMachine};

use crate::compile::{CompileError, compile_source};
use crate::{Options, Source};

/// Runs a compiled module as `__main__` with `sys.argv` set to `argv` and returns the
/// process exit status: 0, 1 after an uncaught exception (its traceback printed to stderr),
/// or the code of a `SystemExit` as the operating system reports it, modulo 256 (so
/// `SystemExit(256)` is 0 and `SystemExit(-1)` is 255, as under CPython).
pub fn run_code(code: rustpython_compiler::CodeObject, path: &str, argv: Vec<String>) -> u8 {
    let interpreter = interpreter(argv);
    let status = interpreter.run(|vm| {
        // As `python FILE` does: the script's directory comes first on the module path.
        let directory = std::path::Path::new(path)
            .parent()
            .map_or_else(String::new, |dir| dir.to_string_lossy().into_owned());
        let sys_path = vm.sys_module.get_attr("path", vm)?;
        vm.call_method(&sys_path, "insert", (0, vm.ctx.new_str(directory)))?;
        let scope = vm.new_scope_with_main()?;
        scope
            .globals
            .set_item("__file__", vm.ctx.new_str(path).into(), vm)?;
        vm.run_code_obj(vm.ctx.new_code(code), scope)
            .map(drop)
            .map_err(|exception| c_exit_code(exception, vm))
    });
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
    let interpreter = crate::embed::install(builder).build();
    if let Err(error) = crate::embed::install_import_hook(&interpreter) {
        interpreter.enter(|vm| vm.print_exception(error));
    }
    interpreter
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
