//! `gotopy run`: a program (a file, standard input, `-c CODE` or `-m MODULE`) compiled with
//! goto and run in the embedded RustPython interpreter, named and given its arguments as
//! `python` does.

use std::path::PathBuf;

use gotopy::{Options, Source};

use super::{BAD_INPUT, Input, Styles, Warnings, compile_input, compiled_or_reported};

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
    /// The Python file; `-` reads the program from standard input.
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
        Program::Input(input) => match compile(&input) {
            Ok((source, compiled)) => {
                let (main, first) = match input {
                    Input::Stdin => (Main::Stdin, "-"),
                    Input::File(_) => (Main::File(source.path()), source.path()),
                };
                run_main(compiled.code, main, argv(first))
            }
            Err(status) => status,
        },
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
