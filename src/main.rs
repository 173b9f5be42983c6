//! The `gotopy` command: a thin shell around the library. Everything happens in `cli::run`.

mod cli;

fn main() -> std::process::ExitCode {
    // RustPython's code generator panics on some valid files; gotopy reports those as errors
    // of the file, so their panic message would only be noise.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !gotopy::compile::in_codegen() {
            report(info);
        }
    }));
    cli::run(std::env::args_os())
}
