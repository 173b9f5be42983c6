//! `gotopy run`: a program (a file, standard input, `-c CODE` or `-m MODULE`) compiled with
//! goto and run in the embedded RustPython interpreter, named and given its arguments as
//! `python` does.

use std::path::PathBuf;

use gotopy::{Options, Source};

use super::{BAD_INPUT, Input, Styles, Warnings, compile_input, compiled_or_reported, read_bytes};

#[derive(Debug, clap::Args)]
pub(super) struct RunArgs {
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// Run CODE as the main module (`python -c`): `sys.argv[0]` is `-c`, and the current
    /// directory comes first on `sys.path`.
    #[arg(
        short = 'c',
        value_names = ["CODE", "ARGS"],
        num_args = 1..,
        allow_hyphen_values = true,
        conflicts_with = "module"
    )]
    command: Option<Vec<String>>,
    /// Find MODULE on `sys.path` and run it as `__main__` (`python -m`), compiled with goto;
    /// a package runs its `__main__` module. `sys.argv[0]` is the module's path, and the
    /// current directory comes first on `sys.path`.
    #[arg(
        short = 'm',
        value_names = ["MODULE", "ARGS"],
        num_args = 1..,
        allow_hyphen_values = true
    )]
    module: Option<Vec<String>>,
    /// The Python file, or a code object `gotopy compile` wrote (`.rpyc`); `-` reads the
    /// program from standard input.
    #[arg(
        value_name = "FILE",
        required_unless_present_any = ["command", "module"],
        conflicts_with_all = ["command", "module"]
    )]
    path: Option<PathBuf>,
    /// Arguments for the program: `sys.argv[1:]`.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
}

/// The program `run` runs, named as `python` names it.
enum Program {
    /// A file, or standard input.
    Input(Input),
    /// `-c CODE`.
    Code(String),
    /// `-m MODULE`.
    Module(String),
}

impl RunArgs {
    /// The program and its arguments, `sys.argv[1:]`.
    fn program(self) -> (Program, Vec<String>) {
        let split = |mut values: Vec<String>| {
            let rest = values.split_off(1.min(values.len()));
            (values.pop().unwrap_or_default(), rest)
        };
        if let Some(values) = self.command {
            let (code, args) = split(values);
            (Program::Code(code), args)
        } else if let Some(values) = self.module {
            let (module, args) = split(values);
            (Program::Module(module), args)
        } else {
            let path = self.path.unwrap_or_else(|| PathBuf::from("-"));
            (Program::Input(Input::from_path(&path)), self.args)
        }
    }
}

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
            gotopy::run::run_module(&name, args, compile).unwrap_or_else(|reason| {
                eprintln!("gotopy: error: {reason}");
                BAD_INPUT
            })
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
    let bad = |message: String| {
        eprintln!("gotopy: error: {message}");
        BAD_INPUT
    };
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
