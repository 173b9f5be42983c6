//! The arguments of the command line, as clap parses them: one definition for the `gotopy`
//! binary and the Python package's `python -m gotopy`, each adjusting the few words and
//! requirements that are its own ([`super::Interpreter::command_line`]).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::diagnostic::Format;
use crate::inputs::Input;

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "gotopy",
    version,
    about = "goto, label and switch for Python, by rewriting bytecode"
)]
pub struct Cli {
    /// When to colour diagnostics.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value_t = Color::Auto
    )]
    pub color: Color,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check Python files for goto, label and switch errors without running them.
    Check(CheckArgs),
    /// Compile Python files with goto to RustPython code objects (marshal format, `.rpyc`),
    /// or with `--python` to standard `.pyc` files for a CPython.
    Compile(CompileArgs),
    /// Print the rewritten bytecode of a Python file.
    Dis(DisArgs),
    /// Translate Python files with goto to plain structured Python that runs on any Python
    /// 3.8+ without gotopy.
    Translate(TranslateArgs),
    /// Run a Python program in the embedded RustPython interpreter, compiled with goto.
    #[command(
        after_help = "As with `python`, the program and ARGS come last: everything \
                            after FILE, `-`, CODE or MODULE is the program's, `sys.argv[1:]`."
    )]
    Run(RunArgs),
    /// Serve the Language Server Protocol over standard input and output, for editors:
    /// diagnostics as you type, labels as symbols (docs/editors.md).
    Server(ServerArgs),
}

/// `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files and directories to check (directories recursively, `*.py`); `-` reads stdin.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    pub all_scopes: bool,
    /// How diagnostics are printed.
    #[arg(long, value_enum, default_value = Format::ALL[0].name())]
    pub format: FormatArg,
}

/// `compile`.
#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// Files and directories to compile (directories recursively, `*.py`); `-` reads
    /// standard input, which has no name, so it needs `-o`.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Where to write the code object of a single input; `-` writes it to standard output.
    #[arg(short, long, value_name = "OUT", conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Directory for the outputs: `F.py` found under a directory argument goes to
    /// `DIR/<F relative to it>.rpyc`, a file argument to `DIR/<its name>.rpyc` (`.pyc` with
    /// `--python`).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    pub all_scopes: bool,
    /// Compile for this CPython (3.11 to 3.15; a path, or a name on `PATH`) instead: the
    /// standard `.pyc` files it runs without gotopy installed, in `__pycache__` beside each
    /// source, or sourceless under `--out-dir`. Nothing needs to be installed in it.
    #[arg(long, value_name = "INTERPRETER", conflicts_with = "output")]
    pub python: Option<PathBuf>,
    /// With `--python`: how CPython tells that a `.pyc` is stale, as `py_compile` does
    /// (default: timestamp, or checked-hash when `SOURCE_DATE_EPOCH` is set).
    #[arg(long, value_enum, value_name = "MODE")]
    pub invalidation_mode: Option<InvalidationMode>,
}

/// How CPython tells that a `.pyc` file is stale (`py_compile.PycInvalidationMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InvalidationMode {
    /// The source's modification time and size.
    Timestamp,
    /// A hash of the source, checked on import.
    CheckedHash,
    /// A hash of the source, not checked (the file is taken as it is).
    UncheckedHash,
}

impl InvalidationMode {
    /// The name on the command line, which the package's driver takes.
    pub fn name(self) -> &'static str {
        match self {
            InvalidationMode::Timestamp => "timestamp",
            InvalidationMode::CheckedHash => "checked-hash",
            InvalidationMode::UncheckedHash => "unchecked-hash",
        }
    }

    /// `py_compile`'s default: hash-checked when `SOURCE_DATE_EPOCH` is set (for
    /// reproducible builds), else the source's timestamp.
    pub fn by_default() -> Self {
        match std::env::var_os("SOURCE_DATE_EPOCH") {
            Some(epoch) if !epoch.is_empty() => InvalidationMode::CheckedHash,
            _ => InvalidationMode::Timestamp,
        }
    }
}

/// `dis`.
#[derive(Debug, clap::Args)]
pub struct DisArgs {
    /// The Python file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub path: PathBuf,
    /// Show only the code objects with this name or qualified name (`f`, `C.m`,
    /// `outer.<locals>.inner`, `<module>`).
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    pub all_scopes: bool,
    /// A listing, or a Graphviz control-flow graph of the one code object `--function`
    /// names.
    #[arg(long, value_enum, default_value_t = DisFormat::Text)]
    pub format: DisFormat,
}

/// How `dis` shows code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DisFormat {
    /// Offsets, opcodes, resolved arguments, jump targets, lines, exception table.
    Text,
    /// Graphviz DOT: basic blocks, jump and fall-through edges, dashed handler edges.
    Dot,
}

/// `translate`.
#[derive(Debug, clap::Args)]
pub struct TranslateArgs {
    /// Files and directories to translate (directories recursively, `*.py`); `-` reads
    /// standard input, which has no name, so it needs `-o`.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Where to write the translation of a single input; `-` writes it to standard output.
    #[arg(short, long, value_name = "OUT", conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Directory for the outputs: `F.py` found under a directory argument goes to
    /// `DIR/<F relative to it>`, a file argument to `DIR/<its name>`. A source is never
    /// overwritten.
    #[arg(long, value_name = "DIR", required_unless_present = "output")]
    pub out_dir: Option<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    pub all_scopes: bool,
    /// Write the program's new source, to leave goto behind: no "generated" header, and no
    /// `# gotopy: all-scopes` line (the imports of gotopy go in every translation).
    #[arg(long)]
    pub migrate: bool,
}

/// `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    pub all_scopes: bool,
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
    // Positions given, not taken from the order of definition: a shell that adjusts an
    // argument (`Command::mut_arg`) moves it to the end of that order.
    #[arg(
        index = 1,
        value_name = "FILE",
        required_unless_present_any = ["command", "module"],
        conflicts_with_all = ["command", "module"]
    )]
    path: Option<PathBuf>,
    /// Arguments for the program: `sys.argv[1:]`.
    #[arg(
        index = 2,
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
}

/// The program `run` runs, named as `python` names it.
pub enum Program {
    /// A file, or standard input.
    Input(Input),
    /// `-c CODE`.
    Code(String),
    /// `-m MODULE`.
    Module(String),
}

impl RunArgs {
    /// The program and its arguments, `sys.argv[1:]`.
    pub fn program(self) -> (Program, Vec<String>) {
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

/// `server`.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Rewrite every scope that contains markers, module and class bodies included, in
    /// every document (a file's `# gotopy: all-scopes` line asks for it too, as does the
    /// client's initialization option `allScopes`).
    #[arg(long)]
    pub all_scopes: bool,
}

/// A report format of the library's list ([`Format::ALL`]), as clap offers it.
#[derive(Clone, Copy, Debug)]
pub struct FormatArg(pub Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ARGS: [FormatArg; Format::ALL.len()] = {
            let mut args = [FormatArg(Format::ALL[0]); Format::ALL.len()];
            let mut at = 0;
            while at < Format::ALL.len() {
                args[at] = FormatArg(Format::ALL[at]);
                at += 1;
            }
            args
        };
        &ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// Colour each stream that is a terminal, unless `NO_COLOR` is set; `CLICOLOR_FORCE`
    /// colours any stream.
    Auto,
    /// Colour, whatever the streams and the environment.
    Always,
    /// Never colour.
    Never,
}

/// Whether diagnostics written to each standard stream are coloured; each stream decides
/// for itself whether it is a terminal.
#[derive(Clone, Copy, Debug)]
pub struct Styles {
    /// Colour what goes to standard output.
    pub stdout: bool,
    /// Colour what goes to standard error.
    pub stderr: bool,
}

impl Styles {
    /// The styles `--color` asks for: anstream's rule for `auto` (whether the stream is a
    /// terminal, `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR` and `TERM`).
    pub fn new(color: Color) -> Self {
        let styled = |auto: anstream::ColorChoice| match color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => auto != anstream::ColorChoice::Never,
        };
        Self {
            stdout: styled(anstream::AutoStream::choice(&std::io::stdout())),
            stderr: styled(anstream::AutoStream::choice(&std::io::stderr())),
        }
    }
}
