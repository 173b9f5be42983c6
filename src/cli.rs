//! The `gotopy` binary's interpreter for the command line ([`gotopy::shell`]): `compile`,
//! `dis` and `run` in the embedded RustPython, and `compile --python` for a CPython
//! ([`cpython`]).

use std::ffi::OsString;

use gotopy::diagnostic::render_text;
use gotopy::inputs::{Input, read_source};
use gotopy::shell::args::{CompileArgs, DisArgs, DisFormat, RunArgs, Styles};
use gotopy::shell::{
    FOUND_ERRORS, Interpreter, Job, Outcome, SUCCESS, bad_input, plan_jobs, print_stdout,
    run_batch, write_output,
};
use gotopy::{Diagnostic, Options, Source};

mod cpython;
mod run;

/// Runs the command line and returns the process exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    // What `gotopy compile --python` runs beside the package's driver (hidden: no user asks
    // for it): the native module's answers for a CPython of version `3.X`.
    if let [_, native, version] = args.as_slice()
        && native == "__native"
    {
        return cpython::serve_native(&version.to_string_lossy()).into();
    }
    gotopy::shell::main(args, &RustPython).into()
}

/// The embedded RustPython, with a CPython for `compile --python`.
struct RustPython;

impl Interpreter for RustPython {
    /// The requirements that are the binary's alone: the package writes `.pyc` files beside
    /// their sources and draws no graph.
    fn command_line(&self, command: clap::Command) -> clap::Command {
        command
            .mut_subcommand("compile", |compile| {
                compile
                    .mut_arg("out_dir", |dir| {
                        dir.required_unless_present_any(["output", "python"])
                    })
                    .mut_arg("invalidation_mode", |mode| mode.requires("python"))
            })
            .mut_subcommand("dis", |dis| {
                dis.mut_arg("function", |function| {
                    function.required_if_eq("format", "dot")
                })
            })
    }

    fn compile(&self, args: CompileArgs, styles: Styles) -> u8 {
        if let Some(python) = &args.python {
            return cpython::compile_pyc(python, &args, styles.stderr);
        }
        let options = Options::new().all_scopes(args.all_scopes);
        let planned = plan_jobs(
            &args.paths,
            args.output.as_deref(),
            args.out_dir.as_deref(),
            "rpyc",
        );
        run_batch(planned, |job| compile_job(job, options, styles.stderr))
    }

    fn dis(&self, args: DisArgs, styles: Styles) -> u8 {
        dis(&args, styles)
    }

    fn run(&self, args: RunArgs, styles: Styles) -> u8 {
        run::run_program(args, styles)
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
    let source = read_source(input).map_err(|message| bad_input(&message))?;
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
    match compile_reporting(source, options, warnings, styles.stderr) {
        Ok((compiled, report)) => {
            eprint!("{report}");
            Ok(compiled)
        }
        Err(outcome) => {
            eprint!("{}", outcome.report);
            Err(FOUND_ERRORS)
        }
    }
}

/// Compiles one input, with its diagnostics as text for stderr (its errors, or its
/// warnings too where `warnings` shows them); what it came to when it does not compile.
fn compile_reporting(
    source: &Source,
    options: Options,
    warnings: Warnings,
    color: bool,
) -> Result<(gotopy::compile::Compiled, String), Outcome> {
    let render = |diagnostics: &[Diagnostic]| {
        let shown: Vec<Diagnostic> = (diagnostics.iter())
            .filter(|diagnostic| warnings == Warnings::Shown || diagnostic.is_error())
            .cloned()
            .collect();
        render_text(&shown, source, color)
    };
    match gotopy::compile::compile_source(source, options) {
        Ok(compiled) => {
            let report = render(&compiled.warnings);
            Ok((compiled, report))
        }
        Err(gotopy::compile::CompileError::Rejected { diagnostics, .. }) => Err(Outcome {
            report: render(&diagnostics),
            failed: true,
            problem: None,
        }),
        Err(error) => Err(Outcome::failed(source, &error, color)),
    }
}

fn compile_job(job: &Job, options: Options, color: bool) -> Outcome {
    let source = match read_source(&job.input) {
        Ok(source) => source,
        Err(message) => return Outcome::problem(message),
    };
    match compile_reporting(&source, options, Warnings::Shown, color) {
        Ok((compiled, report)) => Outcome {
            report,
            failed: false,
            problem: write_output(&job.output, &gotopy::bytecode::marshal(&compiled.code)),
        },
        Err(outcome) => outcome,
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
        return bad_input(&format!("{}: no code object named `{name}`", source.path()));
    }
    let shown = match args.format {
        DisFormat::Text => chosen.into_iter().map(disassemble_one).collect(),
        DisFormat::Dot => match chosen.as_slice() {
            [code] => control_flow_dot(code),
            several => {
                let names: Vec<&str> = several.iter().map(|c| c.qualname.as_str()).collect();
                return bad_input(&format!(
                    "{}: `{name}` names {} code objects ({}); a graph shows one, name it by \
                     its qualified name",
                    source.path(),
                    several.len(),
                    names.join(", ")
                ));
            }
        },
    };
    match shown {
        Ok(shown) => match print_stdout(shown.as_bytes()) {
            Ok(()) => SUCCESS,
            Err(message) => bad_input(&message),
        },
        Err(error) => {
            eprintln!("gotopy: error: {}: {error}", source.path());
            FOUND_ERRORS
        }
    }
}
