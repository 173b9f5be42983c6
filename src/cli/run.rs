//! `gotopy run`: a program (a file, standard input, `-c CODE` or `-m MODULE`) compiled with
//! goto and run in the embedded RustPython interpreter, named and given its arguments as
//! `python` does.

use std::path::PathBuf;

use gotopy::inputs::{Input, read_bytes};
use gotopy::shell::args::{Program, RunArgs, Styles};
use gotopy::shell::bad_input;
use gotopy::{Options, Source};

use super::{Warnings, compile_input, compiled_or_reported};

pub(super) fn run_program(args: RunArgs, styles: Styles) -> u8 {
    use gotopy::run::{Main, run_main};
    let options = Options::new().all_scopes(args.all_scopes);
    // Running a program prints errors only, as `python` does not lint (SPEC section 7).
    let compile = |input: &Input| compile_input(input, options, Warnings::Hidden, styles);
    let (program, args) = args.program();
    let argv = |first: &str| {
        std::iter::once(first.to_owned())
            .chain(args.clone())
            .collect()
    };
    match program {
        Program::Input(input) => {
            let (path, code) = match program_code(&input, options, styles) {
                Ok(found) => found,
                Err(status) => return status,
            };
            let (main, first) = match input {
                Input::Stdin => (Main::Stdin, "-"),
                Input::File(_) => (Main::File(&path), path.as_str()),
            };
            run_main(code, main, argv(first))
        }
        Program::Code(code) => {
            // `python -c` names its code `<string>`.
            let source = Source::new("<string>", code);
            match compiled_or_reported(&source, options, Warnings::Hidden, styles) {
                Ok(compiled) => run_main(compiled.code, Main::Command, argv("-c")),
                Err(status) => status,
            }
        }
        Program::Module(name) => {
            let compile = |origin: &str| {
                compile(&Input::File(PathBuf::from(origin))).map(|(_, compiled)| compiled.code)
            };
            gotopy::run::run_module(&name, args, compile)
                .unwrap_or_else(|reason| bad_input(&reason.to_string()))
        }
    }
}

/// The code a file (or standard input) holds, with the path it is shown under: a code
/// object `gotopy compile` wrote, told by its first byte, a NUL (the marshalled module's
/// argument count is a zero `u32`, and no Python source holds a NUL byte: CPython refuses
/// it), else source compiled with goto. The exit status when it cannot be read (2), is no
/// code object though it starts like one (2), or has errors (1).
fn program_code(
    input: &Input,
    options: Options,
    styles: Styles,
) -> Result<(String, rustpython_compiler::CodeObject), u8> {
    let bad = |message: String| bad_input(&message);
    let (path, bytes) = read_bytes(input).map_err(bad)?;
    if bytes.first() == Some(&0) {
        return match gotopy::bytecode::unmarshal(&bytes) {
            Some(code) => Ok((path, code)),
            None => Err(bad(format!(
                "{path}: not a code object `gotopy compile` wrote, though it starts with a \
                 NUL byte as one does (no Python source does): cut short, or written by \
                 another version of gotopy"
            ))),
        };
    }
    let source = Source::from_bytes(path.as_str(), &bytes)
        .map_err(|error| bad(format!("{path}: {error}")))?;
    let compiled = compiled_or_reported(&source, options, Warnings::Hidden, styles)?;
    Ok((path, compiled.code))
}
