//! The command line: argument parsing, reading inputs, printing results, exit codes.
//!
//! This is the only place that touches the file system, standard streams or the process
//! exit status; the library below it takes text and returns values.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gotopy::diagnostic::{Format, render_text, report_as};
use gotopy::inputs::{Input, collect_inputs, io_reason, read_bytes, read_source, shown};
use gotopy::{Diagnostic, Options, Source, check_source};

mod cpython;
mod run;

/// Exit status when there is no error (warnings allowed).
const SUCCESS: u8 = 0;
/// Exit status when some input has an error.
const FOUND_ERRORS: u8 = 1;
/// Exit status for usage errors, unreadable input and output that cannot be written.
const BAD_INPUT: u8 = 2;
/// Exit status of `gotopy server` when the session did not end with `shutdown` and then
/// `exit` (LSP asks for 1), or its connection failed.
const SESSION_FAILED: u8 = 1;

#[derive(Debug, Parser)]
#[command(
    name = "gotopy",
    version,
    about = "goto, label and switch for Python, by rewriting bytecode"
)]
struct Cli {
    /// When to colour diagnostics.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value_t = Color::Auto
    )]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
        override_usage = "gotopy run [OPTIONS] <FILE | - | -c CODE | -m MODULE> [ARGS]...",
        after_help = "As with `python`, the program and ARGS come last: everything after FILE, \
                      `-`, CODE or MODULE is the program's, `sys.argv[1:]`."
    )]
    Run(run::RunArgs),
    /// Serve the Language Server Protocol over standard input and output, for editors:
    /// diagnostics as you type, labels as symbols (docs/editors.md).
    Server(ServerArgs),
    /// What `gotopy compile --python` runs beside the package's driver: the native module's
    /// answers for a CPython of this version (`3.X`), over standard input and output.
    #[command(name = "__native", hide = true)]
    Native { version: String },
}

#[derive(Debug, clap::Args)]
struct ServerArgs {
    /// Rewrite every scope that contains markers, module and class bodies included, in
    /// every document (a file's `# gotopy: all-scopes` line asks for it too, as does the
    /// client's initialization option `allScopes`).
    #[arg(long)]
    all_scopes: bool,
}

#[derive(Debug, clap::Args)]
struct CompileArgs {
    /// Files and directories to compile (directories recursively, `*.py`); `-` reads
    /// standard input, which has no name, so it needs `-o`.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Where to write the code object of a single input; `-` writes it to standard output.
    #[arg(short, long, value_name = "OUT", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Directory for the outputs: `F.py` found under a directory argument goes to
    /// DIR/<F relative to it>.rpyc, a file argument to DIR/<its name>.rpyc (`.pyc` with
    /// `--python`).
    #[arg(long, value_name = "DIR", required_unless_present_any = ["output", "python"])]
    out_dir: Option<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// Compile for this CPython (3.11 to 3.15; a path, or a name on `PATH`) instead: the
    /// standard `.pyc` files it runs without gotopy installed, in `__pycache__` beside each
    /// source, or sourceless under `--out-dir`. Nothing needs to be installed in it.
    #[arg(long, value_name = "INTERPRETER", conflicts_with = "output")]
    python: Option<PathBuf>,
    /// With `--python`: how CPython tells that a `.pyc` is stale, as `py_compile` does
    /// (default: timestamp, or checked-hash when `SOURCE_DATE_EPOCH` is set).
    #[arg(long, value_enum, value_name = "MODE", requires = "python")]
    invalidation_mode: Option<InvalidationMode>,
}

#[derive(Debug, clap::Args)]
struct TranslateArgs {
    /// Files and directories to translate (directories recursively, `*.py`); `-` reads
    /// standard input, which has no name, so it needs `-o`.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Where to write the translation of a single input; `-` writes it to standard output.
    #[arg(short, long, value_name = "OUT", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Directory for the outputs: `F.py` found under a directory argument goes to
    /// DIR/<F relative to it>, a file argument to DIR/<its name>. A source is never
    /// overwritten.
    #[arg(long, value_name = "DIR", required_unless_present = "output")]
    out_dir: Option<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// Write the program's new source, to leave goto behind: no "generated" header, and no
    /// `# gotopy: all-scopes` line (the imports of gotopy go in every translation).
    #[arg(long)]
    migrate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum InvalidationMode {
    /// The source's modification time and size.
    Timestamp,
    /// A hash of the source, checked on import.
    CheckedHash,
    /// A hash of the source, not checked (the file is taken as it is).
    UncheckedHash,
}

#[derive(Debug, clap::Args)]
struct DisArgs {
    /// The Python file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    path: PathBuf,
    /// Show only the code objects with this name or qualified name (`f`, `C.m`,
    /// `outer.<locals>.inner`, `<module>`).
    #[arg(long, value_name = "NAME", required_if_eq("format", "dot"))]
    function: Option<String>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// A listing, or a Graphviz control-flow graph of the one code object `--function`
    /// names.
    #[arg(long, value_enum, default_value_t = DisFormat::Text)]
    format: DisFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DisFormat {
    /// Offsets, opcodes, resolved arguments, jump targets, lines, exception table.
    Text,
    /// Graphviz DOT: basic blocks, jump and fall-through edges, dashed handler edges.
    Dot,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Files and directories to check (directories recursively, `*.py`); `-` reads stdin.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// How diagnostics are printed.
    #[arg(long, value_enum, default_value = Format::ALL[0].name())]
    format: FormatArg,
}

/// A report format of the library's list ([`Format::ALL`]), as clap offers it.
#[derive(Clone, Copy, Debug)]
struct FormatArg(Format);

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Color {
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
struct Styles {
    stdout: bool,
    stderr: bool,
}

impl Styles {
    fn new(color: Color) -> Self {
        // anstream resolves `auto` for a stream from whether it is a terminal, `NO_COLOR`,
        // `CLICOLOR_FORCE`, `CLICOLOR` and `TERM`.
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

/// Runs the command line and returns the process exit status.
pub fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` land here too, with their own exit status.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                BAD_INPUT
            } else {
                SUCCESS
            });
        }
    };
    let styles = Styles::new(cli.color);
    ExitCode::from(match cli.command {
        Command::Check(args) => check(&args, styles),
        Command::Compile(args) => match &args.python {
            Some(python) => cpython::compile_pyc(&cpython::PycArgs {
                python,
                paths: &args.paths,
                out_dir: args.out_dir.as_deref(),
                invalidation_mode: args.invalidation_mode.map(invalidation_mode),
                all_scopes: args.all_scopes,
                color: styles.stderr,
            }),
            None => compile(&args, styles),
        },
        Command::Dis(args) => dis(&args, styles),
        Command::Translate(args) => translate(&args, styles),
        Command::Run(args) => run::run_program(args, styles),
        Command::Native { version } => cpython::serve_native(&version),
        Command::Server(args) => {
            match gotopy::server::serve_stdio(Options::new().all_scopes(args.all_scopes)) {
                Ok(()) => SUCCESS,
                Err(error) => {
                    eprintln!("gotopy server: {error}");
                    SESSION_FAILED
                }
            }
        }
    })
}

/// The name of the invalidation mode asked for; without, the package's driver takes
/// `py_compile`'s default.
fn invalidation_mode(asked: InvalidationMode) -> &'static str {
    match asked {
        InvalidationMode::Timestamp => "timestamp",
        InvalidationMode::CheckedHash => "checked-hash",
        InvalidationMode::UncheckedHash => "unchecked-hash",
    }
}

/// Whether a command prints warnings beside errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Warnings {
    /// `check`, and the build steps `compile` and `dis`.
    Shown,
    /// `run`: only what keeps the program from running.
    Hidden,
}

/// Reads and compiles one input for `run` and `dis`, printing its diagnostics; the exit
/// status when it cannot be read (2) or has errors (1).
fn compile_input(
    input: &Input,
    options: Options,
    warnings: Warnings,
    styles: Styles,
) -> Result<(Source, gotopy::compile::Compiled), u8> {
    let source = read_source(input).map_err(|message| {
        eprintln!("gotopy: error: {message}");
        BAD_INPUT
    })?;
    let compiled = compiled_or_reported(&source, options, warnings, styles)?;
    Ok((source, compiled))
}

/// Compiles `source`, printing its diagnostics; exit status 1 when it has errors.
fn compiled_or_reported(
    source: &Source,
    options: Options,
    warnings: Warnings,
    styles: Styles,
) -> Result<gotopy::compile::Compiled, u8> {
    let (compiled, report) = compile_reporting(source, options, warnings, styles.stderr);
    eprint!("{report}");
    compiled.ok_or(FOUND_ERRORS)
}

/// Compiles one input; also gives its diagnostics as text for stderr.
fn compile_reporting(
    source: &Source,
    options: Options,
    warnings: Warnings,
    color: bool,
) -> (Option<gotopy::compile::Compiled>, String) {
    let render = |diagnostics: &[Diagnostic]| match warnings {
        Warnings::Shown => render_text(diagnostics, source, color),
        Warnings::Hidden => {
            let errors: Vec<Diagnostic> = diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.is_error())
                .cloned()
                .collect();
            render_text(&errors, source, color)
        }
    };
    match gotopy::compile::compile_source(source, options) {
        Ok(compiled) => {
            let report = render(&compiled.warnings);
            (Some(compiled), report)
        }
        Err(gotopy::compile::CompileError::Rejected { diagnostics, .. }) => {
            (None, render(&diagnostics))
        }
        Err(error) => (None, format!("gotopy: error: {}: {error}\n", source.path())),
    }
}

/// Batches at least this large show a progress bar on a terminal.
const PROGRESS_FROM: usize = 32;

fn compile(args: &CompileArgs, styles: Styles) -> u8 {
    let options = Options::new().all_scopes(args.all_scopes);
    let planned = plan_jobs(
        &args.paths,
        args.output.as_deref(),
        args.out_dir.as_deref(),
        "rpyc",
    );
    run_batch(planned, |job| compile_job(job, options, styles.stderr))
}

/// Runs planned jobs (in parallel), reporting each one's diagnostics and every input that
/// could not be read or written; the batch's exit status.
fn run_batch(
    planned: Result<(Vec<Job>, Vec<String>), String>,
    work: impl Fn(&Job) -> Compiling + Sync,
) -> u8 {
    let (jobs, mut problems) = match planned {
        Ok(planned) => planned,
        Err(message) => {
            eprintln!("gotopy: error: {message}");
            return BAD_INPUT;
        }
    };
    let mut failed = false;
    for outcome in run_all(&jobs, work) {
        eprint!("{}", outcome.report);
        failed |= outcome.failed;
        problems.extend(outcome.problem);
    }
    for message in &problems {
        eprintln!("gotopy: error: {message}");
    }
    exit_status(!problems.is_empty(), failed)
}

/// The status a batch exits with: inputs it could not read or write win over errors.
fn exit_status(problems: bool, errors: bool) -> u8 {
    if problems {
        BAD_INPUT
    } else if errors {
        FOUND_ERRORS
    } else {
        SUCCESS
    }
}

/// One input to compile, and where its code object goes.
struct Job {
    input: Input,
    output: Output,
}

/// Where a code object is written.
enum Output {
    File(PathBuf),
    Stdout,
}

/// What `compile` or `translate` is asked to do (outputs named with `extension`), with the
/// paths that could not be expanded; a usage error instead when the outputs cannot be named.
fn plan_jobs(
    paths: &[PathBuf],
    output: Option<&Path>,
    out_dir: Option<&Path>,
    extension: &str,
) -> Result<(Vec<Job>, Vec<String>), String> {
    // Each input with its output's path under `--out-dir`; standard input has no name.
    let mut named: Vec<(Input, Option<PathBuf>)> = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        match Input::from_path(path) {
            Input::Stdin => named.push((Input::Stdin, None)),
            Input::File(_) if path.is_dir() => {
                let (inputs, found) = collect_inputs(std::slice::from_ref(path));
                problems.extend(found);
                for input in inputs {
                    if let Input::File(file) = &input {
                        let relative = file.strip_prefix(path).unwrap_or(file);
                        let name = relative.with_extension(extension);
                        named.push((input, Some(name)));
                    }
                }
            }
            file => {
                let name = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
                named.push((file, Some(name.with_extension(extension))));
            }
        }
    }
    if let Some(output) = output {
        let (Ok([(input, _)]), true) = (<[_; 1]>::try_from(named), problems.is_empty()) else {
            return Err("`-o` takes exactly one input file; use `--out-dir`".to_owned());
        };
        let output = match Input::from_path(output) {
            Input::Stdin => Output::Stdout,
            Input::File(path) => Output::File(path),
        };
        return Ok((vec![Job { input, output }], problems));
    }
    // Without `-o`, clap requires `--out-dir`.
    let dir = out_dir.map(Path::to_path_buf).unwrap_or_default();
    let jobs = named
        .into_iter()
        .map(|(input, name)| match name {
            Some(name) => Ok(Job {
                input,
                output: Output::File(dir.join(name)),
            }),
            None => Err(
                "standard input (`-`) has no name to write under `--out-dir`; \
                         give its output with `-o`"
                    .to_owned(),
            ),
        })
        .collect::<Result<_, _>>()?;
    Ok((jobs, problems))
}

/// A progress bar on standard error for a batch of `files`, if it is large enough and a
/// terminal shows it; else a hidden one.
fn progress_bar(files: usize) -> indicatif::ProgressBar {
    if files >= PROGRESS_FROM && std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(files as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}")
                .expect("the template is valid"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// Runs the jobs in parallel; their outcomes come back in input order.
fn run_all(jobs: &[Job], work: impl Fn(&Job) -> Compiling + Sync) -> Vec<Compiling> {
    use rayon::prelude::*;
    let progress = progress_bar(jobs.len());
    let outcomes = jobs
        .par_iter()
        .map(|job| {
            let outcome = work(job);
            progress.inc(1);
            outcome
        })
        .collect();
    progress.finish_and_clear();
    outcomes
}

/// What compiling one file came to.
struct Compiling {
    /// Its diagnostics, rendered.
    report: String,
    /// It had errors.
    failed: bool,
    /// It could not be read or written.
    problem: Option<String>,
}

fn compile_job(job: &Job, options: Options, color: bool) -> Compiling {
    let source = match read_source(&job.input) {
        Ok(source) => source,
        Err(message) => {
            return Compiling {
                report: String::new(),
                failed: false,
                problem: Some(message),
            };
        }
    };
    let (compiled, report) = compile_reporting(&source, options, Warnings::Shown, color);
    let Some(compiled) = compiled else {
        return Compiling {
            report,
            failed: true,
            problem: None,
        };
    };
    let bytes = gotopy::bytecode::marshal(&compiled.code);
    Compiling {
        report,
        failed: false,
        problem: write_output(&job.output, &bytes),
    }
}

/// Writes an output file (making its directory) or standard output; why it could not.
fn write_output(output: &Output, bytes: &[u8]) -> Option<String> {
    match output {
        Output::File(path) => path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(path, bytes))
            .err()
            .map(|error| format!("{}: cannot write: {}", shown(path), io_reason(&error))),
        Output::Stdout => print_stdout(bytes).err(),
    }
}

fn translate(args: &TranslateArgs, styles: Styles) -> u8 {
    let options = Options::new().all_scopes(args.all_scopes);
    let purpose = if args.migrate {
        gotopy::translate::Purpose::Migration
    } else {
        gotopy::translate::Purpose::Generated
    };
    let planned = plan_jobs(
        &args.paths,
        args.output.as_deref(),
        args.out_dir.as_deref(),
        "py",
    );
    run_batch(planned, |job| {
        translate_job(job, options, purpose, styles.stderr)
    })
}

fn translate_job(
    job: &Job,
    options: Options,
    purpose: gotopy::translate::Purpose,
    color: bool,
) -> Compiling {
    let problem = |message: String| Compiling {
        report: String::new(),
        failed: false,
        problem: Some(message),
    };
    if let (Input::File(input), Output::File(output)) = (&job.input, &job.output)
        && let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize())
        && a == b
    {
        return problem(format!(
            "{}: the output would overwrite its source",
            shown(output)
        ));
    }
    let source = match read_source(&job.input) {
        Ok(source) => source,
        Err(message) => return problem(message),
    };
    match gotopy::translate::translate_for(&source, options, purpose) {
        Ok(translated) => Compiling {
            report: render_text(&translated.warnings, &source, color),
            failed: false,
            problem: write_output(&job.output, translated.text.as_bytes()),
        },
        Err(gotopy::compile::CompileError::Rejected { diagnostics, .. }) => Compiling {
            report: render_text(&diagnostics, &source, color),
            failed: true,
            problem: None,
        },
        Err(error) => Compiling {
            report: format!("gotopy: error: {}: {error}\n", source.path()),
            failed: true,
            problem: None,
        },
    }
}

fn dis(args: &DisArgs, styles: Styles) -> u8 {
    use gotopy::bytecode::{code_objects, control_flow_dot, disassemble_one};
    use rustpython_compiler::CodeObject;
    let options = Options::new().all_scopes(args.all_scopes);
    let input = Input::from_path(&args.path);
    let (source, compiled) = match compile_input(&input, options, Warnings::Shown, styles) {
        Ok(compiled) => compiled,
        Err(status) => return status,
    };
    let chosen: Vec<&CodeObject> = code_objects(&compiled.code)
        .into_iter()
        .filter(|code| match &args.function {
            None => true,
            Some(name) => {
                let qualname = code.qualname.as_str();
                qualname == name || qualname.rsplit('.').next() == Some(name.as_str())
            }
        })
        .collect();
    let name = args.function.as_deref().unwrap_or_default();
    if chosen.is_empty() {
        eprintln!(
            "gotopy: error: {}: no code object named `{name}`",
            source.path()
        );
        return BAD_INPUT;
    }
    let shown = match args.format {
        DisFormat::Text => chosen.into_iter().map(disassemble_one).collect(),
        DisFormat::Dot => match chosen.as_slice() {
            [code] => control_flow_dot(code),
            several => {
                let names: Vec<&str> = several.iter().map(|c| c.qualname.as_str()).collect();
                eprintln!(
                    "gotopy: error: {}: `{name}` names {} code objects ({}); a graph shows one, \
                     name it by its qualified name",
                    source.path(),
                    several.len(),
                    names.join(", ")
                );
                return BAD_INPUT;
            }
        },
    };
    match shown {
        Ok(shown) => match print_stdout(shown.as_bytes()) {
            Ok(()) => SUCCESS,
            Err(message) => {
                eprintln!("gotopy: error: {message}");
                BAD_INPUT
            }
        },
        Err(error) => {
            eprintln!("gotopy: error: {}: {error}", source.path());
            FOUND_ERRORS
        }
    }
}

fn check(args: &CheckArgs, styles: Styles) -> u8 {
    let options = Options::new().all_scopes(args.all_scopes);
    let (inputs, mut problems) = collect_inputs(&args.paths);
    let mut checked = Vec::new();
    for input in inputs {
        match read_source(&input) {
            Ok(source) => {
                let diagnostics = check_source(&source, options);
                checked.push((source, diagnostics));
            }
            Err(message) => problems.push(message),
        }
    }
    let output = report_as(args.format.0, pairs(&checked), styles.stdout)
        .map_err(|error| format!("cannot write the diagnostics as JSON: {error}"));
    // A report that cannot be made or written is a failure, never an empty result.
    if let Err(message) = output.and_then(|output| print_stdout(output.as_bytes())) {
        problems.push(message);
    }
    for message in &problems {
        eprintln!("gotopy: error: {message}");
    }
    let has_errors = checked
        .iter()
        .any(|(_, diagnostics)| diagnostics.iter().any(Diagnostic::is_error));
    exit_status(!problems.is_empty(), has_errors)
}

/// Each checked source with its diagnostics, as the reports take them.
fn pairs(checked: &[(Source, Vec<Diagnostic>)]) -> impl Iterator<Item = (&Source, &[Diagnostic])> {
    checked
        .iter()
        .map(|(source, diagnostics)| (source, diagnostics.as_slice()))
}

/// Writes `bytes` to standard output; why it could not.
fn print_stdout(bytes: &[u8]) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to standard output: {}", io_reason(&error)))
}
