//! Embedding gotopy in a RustPython 0.5 interpreter.
//!
//! [`InterpreterBuilderExt::init_gotopy`] (or the function [`install`]) adds two modules to
//! an interpreter being built: `goto` (the names markers and decorators use, and the
//! run-time decorator) and the native `_gotopy` (gotopy's compiler and run-time rewriter,
//! for `goto`'s use). Once built, [`install_import_hook`] makes
//! every `.py` module the interpreter imports from a path go through gotopy's compiler.
//! `gotopy run` does exactly this.
//!
//! ```no_run
//! use gotopy::embed::InterpreterBuilderExt as _;
//! use rustpython_vm::Interpreter;
//!
//! let builder = Interpreter::builder(rustpython_vm::Settings::default());
//! let natives = rustpython_stdlib::stdlib_module_defs(&builder.ctx);
//! let builder = builder
//!     .add_native_modules(&natives)
//!     .add_frozen_modules(rustpython_pylib::FROZEN_STDLIB)
//!     .init_gotopy();
//! let interpreter = builder.build();
//! gotopy::embed::install_import_hook(&interpreter).expect("the hook installs");
//! interpreter.enter(|vm| {
//!     let scope = vm.new_scope_with_builtins();
//!     vm.run_string(scope, "import goto", "<embedded>".to_owned())
//!         .map(drop)
//!         .unwrap_or_else(|error| vm.print_exception(error));
//! });
//! ```

use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode};
use rustpython_vm::frozen::{FrozenCodeObject, FrozenModule};
use rustpython_vm::{Interpreter, InterpreterBuilder, PyRef, PyResult, VirtualMachine};

use crate::front::diagnostic::Diagnostic;
use crate::plan::CompileError;
use crate::rustpython::compile::compile_source;
use crate::{Options, Source};

/// The source of the run-time module `goto`: the markers the CPython package has too (one
/// class for both runtimes), then what only this interpreter's module holds.
const GOTO_MODULE: &str = concat!(
    include_str!("../../python/gotopy/_marker.py"),
    "\n",
    include_str!("goto.py")
);

/// gotopy's set-up as an extension of RustPython's interpreter builder, the form
/// RustPython's own `rustpython::InterpreterBuilderExt::init_stdlib` takes:
///
/// ```no_run
/// use gotopy::embed::InterpreterBuilderExt as _;
///
/// let builder = rustpython_vm::Interpreter::builder(Default::default());
/// let interpreter = builder.init_gotopy().build();
/// gotopy::embed::install_import_hook(&interpreter).expect("the hook installs");
/// ```
///
/// The import hook cannot be part of it: a builder's hooks run before the interpreter has
/// initialised its import system, and the hook is a finder on `sys.meta_path` that needs it.
/// So it is a second step, [`install_import_hook`], on the built interpreter.
pub trait InterpreterBuilderExt {
    /// Adds the modules `goto` and `_gotopy` ([`install`]).
    #[must_use]
    fn init_gotopy(self) -> Self;
}

impl InterpreterBuilderExt for InterpreterBuilder {
    fn init_gotopy(self) -> Self {
        install(self)
    }
}

/// Adds the modules `goto` and `_gotopy` to an interpreter being built.
pub fn install(builder: InterpreterBuilder) -> InterpreterBuilder {
    let native = _gotopy::module_def(&builder.ctx);
    builder
        .add_native_module(native)
        .add_frozen_modules([("goto", goto_module())])
}

/// Puts gotopy's finder on `sys.meta_path`, just before the path finder: from then on the
/// interpreter compiles every `.py` module it imports from `sys.path` (and packages' paths)
/// through gotopy, with the default options. Built-in and frozen modules are found first,
/// as usual. No bytecode cache is read or written for these modules, so a `.pyc` written by
/// a plain interpreter can never stand in for a rewritten module.
pub fn install_import_hook(interpreter: &Interpreter) -> PyResult<()> {
    interpreter.enter(|vm| {
        let goto = vm.import("goto", 0)?;
        let install = goto.get_attr("_install_import_hook", vm)?;
        install.call((), vm).map(drop)
    })
}

/// Compiles with gotopy; a rejection becomes a `SyntaxError` at its first error.
fn compile_for_python(
    text: &str,
    path: &str,
    options: Options,
    vm: &VirtualMachine,
) -> PyResult<PyRef<PyCode>> {
    let source = Source::new(path, text);
    match compile_source(&source, options) {
        Ok(compiled) => Ok(vm.ctx.new_code(compiled.code)),
        Err(CompileError::Rejected { diagnostics, .. }) => {
            let first = diagnostics
                .iter()
                .find(|d| d.is_error())
                .unwrap_or(&diagnostics[0]);
            Err(diagnostic_error(vm, first, &source))
        }
        Err(CompileError::Codegen(message)) => Err(syntax_error(vm, &message, path, 0, 0, None)),
    }
}

/// The `SyntaxError` for a diagnostic: its message and code, where it starts, and the line.
fn diagnostic_error(
    vm: &VirtualMachine,
    diagnostic: &Diagnostic,
    source: &Source,
) -> PyBaseExceptionRef {
    let at = source.location(diagnostic.range.start());
    let text = source.text().lines().nth(at.line - 1);
    let message = format!("{} [{}]", diagnostic.message, diagnostic.code.as_str());
    syntax_error(vm, &message, source.path(), at.line, at.column, text)
}

/// `SyntaxError(message, (path, line, column, text))`, lines and columns 1-based.
fn syntax_error(
    vm: &VirtualMachine,
    message: &str,
    path: &str,
    line: usize,
    column: usize,
    text: Option<&str>,
) -> PyBaseExceptionRef {
    let details = vm.ctx.new_tuple(vec![
        vm.ctx.new_str(path).into(),
        vm.ctx.new_int(line).into(),
        vm.ctx.new_int(column).into(),
        text.map_or_else(|| vm.ctx.none(), |t| vm.ctx.new_str(t).into()),
    ]);
    vm.invoke_exception(
        vm.ctx.exceptions.syntax_error.to_owned(),
        vec![vm.ctx.new_str(message).into(), details.into()],
    )
    .unwrap_or_else(|error| error)
}

#[rustpython_vm::pymodule]
mod _gotopy {
    use rustpython_vm::builtins::PyCode;
    use rustpython_vm::{PyRef, PyResult, VirtualMachine};

    use crate::Options;

    /// `compile(source, path, all_scopes=False)`: the module compiled with goto.
    #[pyfunction]
    fn compile(
        source: String,
        path: String,
        all_scopes: rustpython_vm::function::OptionalArg<bool>,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<PyCode>> {
        let options = Options::new().all_scopes(all_scopes.unwrap_or(false));
        super::compile_for_python(&source, &path, options, vm)
    }

    /// `rewrite(code)`: `code` with its markers rewritten, or `code` itself when it has none.
    #[pyfunction]
    fn rewrite(code: PyRef<PyCode>, vm: &VirtualMachine) -> PyResult<PyRef<PyCode>> {
        let mut bytes = Vec::new();
        rustpython_compiler::core::marshal::serialize_code(&mut bytes, &code.code);
        match crate::rustpython::rewrite::rewrite_marshalled(&bytes) {
            Err(error) => Err(vm.new_value_error(format!("cannot read the code object: {error}"))),
            Ok(Ok(None)) => Ok(code),
            Ok(Ok(Some(owned))) => Ok(vm.ctx.new_code(owned)),
            Ok(Err(error)) => Err(super::syntax_error(
                vm,
                &error.message,
                &error.path,
                error.line.unwrap_or(0) as usize,
                0,
                None,
            )),
        }
    }
}

/// `goto`, compiled once per process and kept for the interpreters that follow.
fn goto_module() -> FrozenModule {
    static BYTES: std::sync::OnceLock<&'static [u8]> = std::sync::OnceLock::new();
    let bytes = BYTES.get_or_init(|| {
        let source = Source::new("<frozen goto>", GOTO_MODULE);
        let compiled = compile_source(&source, Options::default())
            .unwrap_or_else(|error| panic!("the bundled goto module compiles: {error}"));
        Box::leak(
            FrozenCodeObject::encode(&compiled.code)
                .bytes
                .into_boxed_slice(),
        )
    });
    FrozenModule {
        code: FrozenCodeObject { bytes },
        package: false,
    }
}
