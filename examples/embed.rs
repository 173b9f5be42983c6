//! Embedding gotopy: build a RustPython interpreter with gotopy installed, then run a script
//! (compiled by RustPython itself) that imports a module using goto (compiled by gotopy's
//! import hook) and applies the run-time decorator to code it compiles with `exec`.
//!
//! Run: `cargo run --example embed`

use std::process::ExitCode;

use gotopy::embed::InterpreterBuilderExt as _;
use rustpython_vm::{Interpreter, Settings};

/// The script, shared with `examples/embed_cpython`.
const SCRIPT: &str = include_str!("embed/script.py");

fn main() -> ExitCode {
    let modules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/embed");
    let builder = Interpreter::builder(Settings::default());
    let natives = rustpython_stdlib::stdlib_module_defs(&builder.ctx);
    let builder = builder
        .add_native_modules(&natives)
        .add_frozen_modules(rustpython_pylib::FROZEN_STDLIB)
        .init_gotopy();
    let interpreter = builder.build();
    if let Err(error) = gotopy::embed::install_import_hook(&interpreter) {
        interpreter.enter(|vm| vm.print_exception(error));
        return ExitCode::FAILURE;
    }
    let status = interpreter.run(|vm| {
        let sys_path = vm.sys_module.get_attr("path", vm)?;
        let directory = vm.ctx.new_str(modules.to_string_lossy().as_ref());
        vm.call_method(&sys_path, "insert", (0, directory))?;
        let scope = vm.new_scope_with_builtins();
        vm.run_string(scope, SCRIPT, "<embedded script>".to_owned())
            .map(drop)
    });
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
