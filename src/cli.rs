//! The command line: argument parsing, reading inputs, printing results, exit codes.
//!
//! This is the only place that touches the file system, standard streams or the process
//! exit status; the library below it takes text and returns values.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gotopy::diagnostic::{JsonDiagnostic, render_text};
use gotopy::{Diagnostic, Options, Source, check_source};

/// Exit status when there is no error (warnings allowed).
const SUCCESS: u8 = 0;
/// Exit status when some input has an error.
const FOUND_ERRORS: u8 = 1;
/// Exit status for usage errors, unreadable input and output that cannot be written.
const BAD_INPUT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "gotopy",
    version,
    about = "goto, label and switch for Python, by rewriting bytecode"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check Python files for goto, label and switch errors without running them.
    Check(CheckArgs),
    /// Compile Python files with goto to RustPython code objects (marshal format, `.rpyc`).
    Compile(CompileArgs),
    /// Print the rewritten bytecode of a Python file.
    Dis(DisArgs),
    /// Run a Python file in the embedded RustPython interpreter, compiled with goto.
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
    /// The Python file.
    #[arg(value_name = "FILE")]
    path: PathBuf,
    /// Arguments for the program: `sys.argv[1:]`.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct CompileArgs {
    /// Files and directories to compile (directories recursively, `*.py`).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Where to write the code object of a single input file.
    #[arg(short, long, value_name = "OUT", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Directory for the outputs: `F.py` found under a directory argument goes to
    /// DIR/<F relative to it>.rpyc, a file argument to DIR/<its name>.rpyc.
    #[arg(long, value_name = "DIR", required_unless_present = "output")]
    out_dir: Option<PathBuf>,
    /// Rewrite every scope that contains markers, module and class bodies included.
    #[arg(long)]
    all_scopes: bool,
}

#[derive(Debug, clap::Args)]
struct DisArgs {
    /// The Python file.
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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// When text output is coloured.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    /// rustc/ruff style diagnostics with source snippets.
    Text,
    /// One JSON array of diagnostics.
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Color {
    /// Colour when standard output is a terminal and NO_COLOR is unset.
    Auto,
    Always,
    Never,
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
    match cli.command {
        Command::Check(args) => check(&args),
        Command::Compile(args) => compile(&args),
        Command::Dis(args) => dis(&args),
        Command::Run(args) => run_file(&args),
    }
}

fn run_file(args: &RunArgs) -> ExitCode {
    // Running a program prints errors only, as `python` does not lint (SPEC section 7).
    let (source, compiled) = match compile_file(&args.path, args.all_scopes, Warnings::Hidden) {
        Ok(compiled) => compiled,
        Err(status) => return status,
    };
    let argv = std::iter::once(source.path().to_owned())
        .chain(args.args.iter().cloned())
        .collect();
    ExitCode::from(gotopy::run::run_code(compiled.code, source.path(), argv))
}

/// Whether a command prints warnings beside errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Warnings {
    /// `check`, and the build steps `compile` and `dis`.
    Shown,
    /// `run`: only what keeps the program from running.
    Hidden,
}

/// Reads and compiles one file for `run` and `dis`, printing its diagnostics; the exit
/// status when it cannot be read (2) or has errors (1).
fn compile_file(
    path: &Path,
    all_scopes: bool,
    warnings: Warnings,
) -> Result<(Source, gotopy::compile::Compiled), ExitCode> {
    let source = read_source(&Input::File(path.to_path_buf())).map_err(|message| {
        eprintln!("gotopy: error: {message}");
        ExitCode::from(BAD_INPUT)
    })?;
    let options = Options::new().all_scopes(all_scopes);
    let (compiled, report) = compile_reporting(&source, options, warnings);
    eprint!("{report}");
    match compiled {
        Some(compiled) => Ok((source, compiled)),
        None => Err(ExitCode::from(FOUND_ERRORS)),
    }
}

/// Compiles one input; also gives its diagnostics as text for stderr.
fn compile_reporting(
    source: &Source,
    options: Options,
    warnings: Warnings,
) -> (Option<gotopy::compile::Compiled>, String) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
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

fn compile(args: &CompileArgs) -> ExitCode {
    use rayon::prelude::*;
    let options = Options::new().all_scopes(args.all_scopes);
    let (mut jobs, mut problems) = (Vec::new(), Vec::new());
    for path in &args.paths {
        if path.is_dir() {
            let (inputs, found) = collect_inputs(std::slice::from_ref(path));
            problems.extend(found);
            for input in inputs {
                if let Input::File(file) = input {
                    let relative = file.strip_prefix(path).unwrap_or(&file).to_path_buf();
                    jobs.push((file, relative.with_extension("rpyc")));
                }
            }
        } else {
            let name = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
            jobs.push((path.clone(), name.with_extension("rpyc")));
        }
    }
    if let Some(output) = &args.output {
        if jobs.len() != 1 || !problems.is_empty() {
            eprintln!("gotopy: error: `-o` takes exactly one input file; use `--out-dir`");
            return ExitCode::from(BAD_INPUT);
        }
        jobs[0].1 = output.clone();
    } else if let Some(dir) = &args.out_dir {
        for job in &mut jobs {
            job.1 = dir.join(&job.1);
        }
    }
    let progress = if jobs.len() >= PROGRESS_FROM && std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(jobs.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}")
                .expect("the template is valid"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    // Files compile in parallel; what each reports is printed in input order.
    let outcomes: Vec<Compiling> = jobs
        .par_iter()
        .map(|(input, output)| {
            let outcome = compile_to_file(input, output, options);
            progress.inc(1);
            outcome
        })
        .collect();
    progress.finish_and_clear();
    let mut failed = false;
    for outcome in outcomes {
        eprint!("{}", outcome.report);
        failed |= outcome.failed;
        problems.extend(outcome.problem);
    }
    for message in &problems {
        eprintln!("gotopy: error: {message}");
    }
    ExitCode::from(if !problems.is_empty() {
        BAD_INPUT
    } else if failed {
        FOUND_ERRORS
    } else {
        SUCCESS
    })
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

fn compile_to_file(input: &Path, output: &Path, options: Options) -> Compiling {
    let source = match read_source(&Input::File(input.to_path_buf())) {
        Ok(source) => source,
        Err(message) => {
            return Compiling {
                report: String::new(),
                failed: false,
                problem: Some(message),
            };
        }
    };
    let (compiled, report) = compile_reporting(&source, options, Warnings::Shown);
    let Some(compiled) = compiled else {
        return Compiling {
            report,
            failed: true,
            problem: None,
        };
    };
    let bytes = gotopy::bytecode::marshal(&compiled.code);
    let written = output
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(output, bytes));
    Compiling {
        report,
        failed: false,
        problem: written
            .err()
            .map(|error| format!("{}: cannot write: {}", shown(output), io_reason(&error))),
    }
}

fn dis(args: &DisArgs) -> ExitCode {
    use gotopy::bytecode::{code_objects, control_flow_dot, disassemble_one};
    use rustpython_compiler::CodeObject;
    let (source, compiled) = match compile_file(&args.path, args.all_scopes, Warnings::Shown) {
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
        return ExitCode::from(BAD_INPUT);
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
                return ExitCode::from(BAD_INPUT);
            }
        },
    };
    match shown {
        Ok(shown) => match print_stdout(&shown) {
            Ok(()) => ExitCode::from(SUCCESS),
            Err(message) => {
                eprintln!("gotopy: error: {message}");
                ExitCode::from(BAD_INPUT)
            }
        },
        Err(error) => {
            eprintln!("gotopy: error: {}: {error}", source.path());
            ExitCode::from(FOUND_ERRORS)
        }
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let options = Options::new().all_scopes(args.all_scopes);
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
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
    let output = match args.format {
        Format::Text => Ok(text_report(&checked, color)),
        Format::Json => json_report(&checked),
    };
    // A report that cannot be made or written is a failure, never an empty result.
    if let Err(message) = output.and_then(|output| print_stdout(&output)) {
        problems.push(message);
    }
    for message in &problems {
        eprintln!("gotopy: error: {message}");
    }
    let has_errors = checked
        .iter()
        .any(|(_, diagnostics)| diagnostics.iter().any(Diagnostic::is_error));
    ExitCode::from(if !problems.is_empty() {
        BAD_INPUT
    } else if has_errors {
        FOUND_ERRORS
    } else {
        SUCCESS
    })
}

fn text_report(checked: &[(Source, Vec<Diagnostic>)], color: bool) -> String {
    let mut out = String::new();
    let (mut errors, mut warnings) = (0, 0);
    for (source, diagnostics) in checked {
        out.push_str(&render_text(diagnostics, source, color));
        errors += diagnostics.iter().filter(|d| d.is_error()).count();
        warnings += diagnostics.len() - diagnostics.iter().filter(|d| d.is_error()).count();
    }
    out.push_str(&format!(
        "checked {}: {}, {}\n",
        plural(checked.len(), "file"),
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    out
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Writes `text` to standard output; why it could not.
fn print_stdout(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to standard output: {}", io_reason(&error)))
}

fn json_report(checked: &[(Source, Vec<Diagnostic>)]) -> Result<String, String> {
    let all: Vec<JsonDiagnostic> = checked
        .iter()
        .flat_map(|(source, diagnostics)| {
            diagnostics
                .iter()
                .map(move |diagnostic| JsonDiagnostic::new(diagnostic, source))
        })
        .collect();
    let mut json = serde_json::to_string_pretty(&all)
        .map_err(|error| format!("cannot write the diagnostics as JSON: {error}"))?;
    json.push('\n');
    Ok(json)
}

/// Where source text comes from.
enum Input {
    Stdin,
    File(PathBuf),
}

/// Expands the command-line paths into inputs, in a stable order; paths that cannot be
/// expanded come back as messages.
fn collect_inputs(paths: &[PathBuf]) -> (Vec<Input>, Vec<String>) {
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            let before = inputs.len();
            for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                match entry {
                    Ok(entry) if entry.file_type().is_file() && is_python(entry.path()) => {
                        inputs.push(Input::File(entry.into_path()));
                    }
                    Ok(_) => {}
                    Err(error) => problems.push(format!("{}: {}", shown(path), walk_error(&error))),
                }
            }
            if inputs.len() == before {
                problems.push(format!("{}: no Python files (`*.py`) found", shown(path)));
            }
        } else {
            inputs.push(Input::File(path.clone()));
        }
    }
    (inputs, problems)
}

fn walk_error(error: &walkdir::Error) -> String {
    match (error.path(), error.io_error()) {
        (Some(path), Some(io)) => format!("cannot read {}: {}", shown(path), io_reason(io)),
        _ => error.to_string(),
    }
}

fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "py")
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn read_source(input: &Input) -> Result<Source, String> {
    let (path, bytes) = match input {
        Input::Stdin => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|error| format!("<stdin>: cannot read: {}", io_reason(&error)))?;
            ("<stdin>".to_owned(), bytes)
        }
        Input::File(path) => {
            let bytes = std::fs::read(path)
                .map_err(|error| format!("{}: cannot read: {}", shown(path), io_reason(&error)))?;
            (shown(path), bytes)
        }
    };
    Source::from_bytes(path.as_str(), &bytes).map_err(|error| format!("{path}: {error}"))
}

/// An I/O error in words, without the OS error number.
fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(end) => text[..end].to_lowercase(),
                None => text,
            }
        }
    }
}
