//! The `gotopy` command: a thin shell around the library. Everything happens in `cli::run`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run(std::env::args_os())
}
