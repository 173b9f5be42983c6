//! The command line (feature `shell`), one for both shells: the `gotopy` binary and the
//! Python package's `gotopy` command (`python -m gotopy`, through its native module). Both
//! parse the same arguments ([`args`]), and run `check`, `translate` and `server` with the
//! same code here, so their help, messages, reports and exit statuses are the same; `compile`,
//! `dis` and `run` need an interpreter, and each shell brings its own ([`Interpreter`]:
//! RustPython in the binary, the CPython the package runs in).
//!
//! This module and [`crate::inputs`] are the only parts of the library that touch the file
//! system, the standard streams or the process's exit status.

pub mod args;

/// The parser the command line is made with, for a shell to adjust it.
pub use clap;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches};

use crate::diagnostic::{render_text, report_as};
use crate::inputs::{Input, collect_inputs, io_reason, read_source, shown};
use crate::{Diagnostic, Options, Source, check_source};
use args::{CheckArgs, Cli, Command, CompileArgs, DisArgs, RunArgs, Styles, TranslateArgs};

/// Exit status when there is no error (warnings allowed).
pub const SUCCESS: u8 = 0;
/// Exit status when some input has an error.
pub const FOUND_ERRORS: u8 = 1;
/// Exit status for usage errors, unreadable input and output that cannot be written.
pub const BAD_INPUT: u8 = 2;
/// Exit status of `gotopy server` when the session did not end with `shutdown` and then
/// `exit` (LSP asks for 1), or its connection failed.
pub const SESSION_FAILED: u8 = 1;

/// What a shell runs code in: the commands that need an interpreter.
pub trait Interpreter {
    /// The command line as this shell's users see it: `command` with this shell's name,
    /// words and requirements.
    fn command_line(&self, command: clap::Command) -> clap::Command;
    /// `compile`; its exit status.
    fn compile(&self, args: CompileArgs, styles: Styles) -> u8;
    /// `dis`; its exit status.
    fn dis(&self, args: DisArgs, styles: Styles) -> u8;
    /// `run`; its exit status.
    fn run(&self, args: RunArgs, styles: Styles) -> u8;
}

/// Runs the command line `args` (the program's name first) and returns the exit status.
pub fn main(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    interpreter: &impl Interpreter,
) -> u8 {
    let command = interpreter.command_line(Cli::command());
    let name = (command.get_bin_name())
        .unwrap_or(command.get_name())
        .to_owned();
    let command = command.mut_subcommand("run", |run| {
        run.override_usage(format!(
            "{name} run [OPTIONS] <FILE | - | -c CODE | -m MODULE> [ARGS]..."
        ))
    });
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` land here too, with their own exit status.
            let _ = error.print();
            return if error.use_stderr() {
                BAD_INPUT
            } else {
                SUCCESS
            };
        }
    };
    let styles = Styles::new(cli.color);
    match cli.command {
        Command::Check(args) => check(&args, styles),
        Command::Compile(args) => interpreter.compile(args, styles),
        Command::Dis(args) => interpreter.dis(args, styles),
        Command::Translate(args) => translate(&args, styles),
        Command::Run(args) => interpreter.run(args, styles),
        Command::Server(args) => {
            match crate::server::serve_stdio(Options::new().all_scopes(args.all_scopes)) {
                Ok(()) => SUCCESS,
                Err(error) => {
                    eprintln!("gotopy server: {error}");
                    SESSION_FAILED
                }
            }
        }
    }
}

/// Prints `gotopy: error: MESSAGE`; [`BAD_INPUT`], the status it ends with.
pub fn bad_input(message: &str) -> u8 {
    eprintln!("gotopy: error: {message}");
    BAD_INPUT
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
    let pairs = (checked.iter()).map(|(source, diagnostics)| (source, diagnostics.as_slice()));
    let output = report_as(args.format.0, pairs, styles.stdout)
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

fn translate(args: &TranslateArgs, styles: Styles) -> u8 {
    let options = Options::new().all_scopes(args.all_scopes);
    let purpose = if args.migrate {
        crate::translate::Purpose::Migration
    } else {
        crate::translate::Purpose::Generated
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
    purpose: crate::translate::Purpose,
    color: bool,
) -> Outcome {
    if let (Input::File(input), Output::File(output)) = (&job.input, &job.output)
        && let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize())
        && a == b
    {
        return Outcome::problem(format!(
            "{}: the output would overwrite its source",
            shown(output)
        ));
    }
    let source = match read_source(&job.input) {
        Ok(source) => source,
        Err(message) => return Outcome::problem(message),
    };
    match crate::translate::translate_for(&source, options, purpose) {
        Ok(translated) => Outcome {
            report: render_text(&translated.warnings, &source, color),
            failed: false,
            problem: write_output(&job.output, translated.text.as_bytes()),
        },
        Err(error) => Outcome::failed(&source, &error, color),
    }
}

/// The status a batch exits with: inputs it could not read or write win over errors.
pub fn exit_status(problems: bool, errors: bool) -> u8 {
    if problems {
        BAD_INPUT
    } else if errors {
        FOUND_ERRORS
    } else {
        SUCCESS
    }
}

/// One input of a batch, and where its output goes.
pub struct Job {
    /// The input.
    pub input: Input,
    /// Where what it gives is written.
    pub output: Output,
}

/// Where an output is written.
pub enum Output {
    /// A file, its directory made if need be.
    File(PathBuf),
    /// Standard output (`-`).
    Stdout,
}

/// What a batch is asked to do (outputs named with `extension`), with the paths that could
/// not be expanded; a usage error instead when the outputs cannot be named. Without
/// `output`, outputs go under `out_dir` (the working directory without).
pub fn plan_jobs(
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

/// What one job of a batch came to.
pub struct Outcome {
    /// Its diagnostics, rendered.
    pub report: String,
    /// It had errors.
    pub failed: bool,
    /// It could not be read or written.
    pub problem: Option<String>,
}

impl Outcome {
    /// An input that could not be read, or an output that could not be written.
    pub fn problem(message: String) -> Self {
        Outcome {
            report: String::new(),
            failed: false,
            problem: Some(message),
        }
    }

    /// A source that did not compile: its diagnostics (a rejection), or the error.
    pub fn failed(source: &Source, error: &crate::compile::CompileError, color: bool) -> Self {
        let report = match error {
            crate::compile::CompileError::Rejected { diagnostics, .. } => {
                render_text(diagnostics, source, color)
            }
            error => format!("gotopy: error: {}: {error}\n", source.path()),
        };
        Outcome {
            report,
            failed: true,
            problem: None,
        }
    }
}

/// Runs planned jobs (in parallel), reporting each one's diagnostics and every input that
/// could not be read or written; the batch's exit status.
pub fn run_batch(
    planned: Result<(Vec<Job>, Vec<String>), String>,
    work: impl Fn(&Job) -> Outcome + Sync,
) -> u8 {
    let (jobs, mut problems) = match planned {
        Ok(planned) => planned,
        Err(message) => return bad_input(&message),
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

/// Batches at least this large show a progress bar on a terminal.
const PROGRESS_FROM: usize = 32;

/// Runs the jobs in parallel; their outcomes come back in input order.
fn run_all(jobs: &[Job], work: impl Fn(&Job) -> Outcome + Sync) -> Vec<Outcome> {
    use rayon::prelude::*;
    let progress = if jobs.len() >= PROGRESS_FROM && std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(jobs.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}")
                .expect("the template is valid"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
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

/// Writes an output file (making its directory) or standard output; why it could not.
pub fn write_output(output: &Output, bytes: &[u8]) -> Option<String> {
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

/// Writes `bytes` to standard output; why it could not.
pub fn print_stdout(bytes: &[u8]) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to standard output: {}", io_reason(&error)))
}

/// What `compile` for a CPython hands the package's driver, `gotopy._cli.compile_files`
/// (its arguments, by name): the Python package's own `compile`, and the binary's
/// `compile --python`, which runs that driver in the interpreter it names.
pub struct PycRequest {
    /// Each source with the directory argument it was found under (`None`: given as it is).
    pub sources: Vec<(PathBuf, Option<PathBuf>)>,
    /// The paths that could not be expanded, as messages.
    pub problems: Vec<String>,
    /// `--out-dir`: sourceless files there, not in `__pycache__` beside each source.
    pub out_dir: Option<PathBuf>,
    /// `--invalidation-mode`; without, `py_compile`'s default.
    pub mode: &'static str,
    /// `--all-scopes`.
    pub all_scopes: bool,
    /// Colour the diagnostics (written to standard error).
    pub color: bool,
}

impl PycRequest {
    /// The request for `compile`'s arguments; a usage error when it has none.
    pub fn new(args: &CompileArgs, color: bool) -> Result<Self, String> {
        if args.paths.iter().any(|path| path.as_os_str() == "-") {
            return Err(
                "compile writes a .pyc beside its source: standard input has none".to_owned(),
            );
        }
        let (found, problems) = crate::inputs::collect_sources(&args.paths);
        let sources = (found.into_iter())
            .filter_map(|(input, root)| match input {
                Input::File(path) => Some((path, root.map(Path::to_path_buf))),
                Input::Stdin => None,
            })
            .collect();
        Ok(PycRequest {
            sources,
            problems,
            out_dir: args.out_dir.clone(),
            mode: (args.invalidation_mode)
                .unwrap_or_else(args::InvalidationMode::by_default)
                .name(),
            all_scopes: args.all_scopes,
            color,
        })
    }

    /// The request as JSON, for a driver that reads it (paths as text).
    pub fn json(&self) -> serde_json::Value {
        let text = |path: &Path| path.to_string_lossy().into_owned();
        let sources: Vec<_> = (self.sources.iter())
            .map(|(path, root)| serde_json::json!([text(path), root.as_deref().map(text)]))
            .collect();
        serde_json::json!({
            "sources": sources,
            "problems": self.problems,
            "out_dir": self.out_dir.as_deref().map(text),
            "mode": self.mode,
            "all_scopes": self.all_scopes,
            "color": self.color,
        })
    }
}
