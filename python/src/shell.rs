//! The Python package's `gotopy` command (`python -m gotopy`): gotopy's own command line
//! (`gotopy::shell`, the binary's), with the CPython the package runs in as its interpreter.
//! `check`, `translate` and `server` run here in Rust as in the binary, `dis` and `run` in
//! `run.rs`; `compile` is the package's driver's (`gotopy._cli.compile_files`, which
//! `gotopy compile --python` runs too), called with the parsed arguments.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::PathBuf;

use gotopy::inputs::{Input, read_bytes};
use gotopy::shell::args::{CompileArgs, DisArgs, DisFormat, Program, RunArgs, Styles};
use gotopy::shell::clap::{Arg, Command};
use gotopy::shell::{BAD_INPUT, Interpreter, PycRequest, bad_input};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::run::{self, Ended};

/// Runs the command line `argv` (without the program's name) as the command `prog` and
/// returns its exit status; what the driver's functions raise (a program's `SystemExit`,
/// say) is raised here.
#[pyfunction]
#[pyo3(signature = (argv, prog = "gotopy"))]
pub(crate) fn main(py: Python<'_>, argv: Vec<OsString>, prog: &str) -> PyResult<u8> {
    let package = Package {
        py,
        prog,
        raised: RefCell::new(None),
    };
    let args = std::iter::once(OsString::from(prog)).chain(argv);
    let status = gotopy::shell::main(args, &package);
    match package.raised.into_inner() {
        Some(error) => Err(error),
        None => Ok(status),
    }
}

/// The running CPython, through the package's driver.
struct Package<'py, 'a> {
    py: Python<'py>,
    prog: &'a str,
    /// What a function of the driver raised, raised again by [`main`].
    raised: RefCell<Option<PyErr>>,
}

impl<'py> Package<'py, '_> {
    /// The exit status of a command that ended so; what it raised is kept for [`main`].
    fn ended(&self, ended: Result<u8, Ended>) -> u8 {
        match ended {
            Ok(status) | Err(Ended::Status(status)) => status,
            Err(Ended::Raised(error)) => {
                self.raised.replace(Some(error));
                BAD_INPUT
            }
        }
    }
}

impl Interpreter for Package<'_, '_> {
    fn command_line(&self, command: Command) -> Command {
        let hidden = |arg: Arg| arg.hide(true);
        command
            .bin_name(self.prog.to_owned())
            .version(env!("CARGO_PKG_VERSION"))
            .about("goto, label and switch for Python")
            .mut_subcommand("compile", |compile| {
                compile
                    .about(
                        "Compile Python files with goto into standard .pyc files that need no \
                         gotopy to run: the cache files of this interpreter \
                         (__pycache__/NAME.cpython-3XY.pyc), which a plain CPython of the \
                         same version runs without gotopy installed",
                    )
                    .mut_arg("paths", |paths| {
                        paths.help(
                            "Files and directories to compile (directories recursively, `*.py`)",
                        )
                    })
                    .mut_arg("output", hidden)
                    .mut_arg("python", hidden)
                    .mut_arg("out_dir", |dir| {
                        dir.help("Sourceless DIR/<path>.pyc, not __pycache__ beside sources")
                    })
                    .mut_arg("invalidation_mode", |mode| {
                        mode.help(
                            "How CPython tells that a .pyc is stale, as py_compile does \
                             (default: timestamp, or checked-hash when SOURCE_DATE_EPOCH is set)",
                        )
                    })
            })
            .mut_subcommand("dis", |dis| {
                dis.about(
                    "Print the rewritten code of a Python file for this interpreter, as the \
                     dis module lists it",
                )
                .mut_arg("format", hidden)
            })
            .mut_subcommand("run", |run| {
                run.about("Run a Python program with goto, as `python` runs the same command line")
                    .mut_arg("path", |path| {
                        path.help("The program (a .py or .pyc file); `-` reads standard input")
                    })
            })
    }

    fn compile(&self, args: CompileArgs, styles: Styles) -> u8 {
        if args.output.is_some() || args.python.is_some() {
            return bad_input(
                "`-o` and `--python` are the gotopy binary's: the package compiles for the \
                 interpreter it runs in",
            );
        }
        let request = match PycRequest::new(&args, styles.stderr) {
            Ok(request) => request,
            Err(message) => return bad_input(&message),
        };
        let called = (|| {
            let keywords = PyDict::new(self.py);
            // As text: the driver names its files with the paths given (`str`, not `Path`).
            let sources: Vec<_> = (request.sources.into_iter())
                .map(|(path, root)| (path.into_os_string(), root.map(PathBuf::into_os_string)))
                .collect();
            keywords.set_item("sources", sources)?;
            keywords.set_item("problems", request.problems)?;
            keywords.set_item("out_dir", request.out_dir.map(PathBuf::into_os_string))?;
            keywords.set_item("mode", request.mode)?;
            keywords.set_item("all_scopes", request.all_scopes)?;
            keywords.set_item("color", request.color)?;
            let driver = self.py.import("gotopy._cli")?.getattr("compile_files")?;
            driver.call((), Some(&keywords))?.extract::<u8>()
        })();
        self.ended(called.map_err(Ended::Raised))
    }

    fn dis(&self, args: DisArgs, styles: Styles) -> u8 {
        if args.format == DisFormat::Dot {
            return bad_input(
                "--format dot draws RustPython's code, with the gotopy binary; the package \
                 lists CPython's code as the dis module does (--format text)",
            );
        }
        let (shown, data) = match read_bytes(&Input::from_path(&args.path)) {
            Ok(read) => read,
            Err(message) => return bad_input(&message),
        };
        let function = args.function.as_deref();
        self.ended(run::dis(
            self.py,
            &shown,
            &data,
            function,
            args.all_scopes,
            styles.stderr,
        ))
    }

    fn run(&self, args: RunArgs, styles: Styles) -> u8 {
        let all_scopes = args.all_scopes;
        let (program, argv) = args.program();
        // A program file is read here, as the binary reads it (the same messages).
        let read: (String, Vec<u8>);
        let program = match program {
            Program::Input(input) => {
                read = match read_bytes(&input) {
                    Ok(read) => read,
                    Err(message) => return bad_input(&message),
                };
                let given = match input {
                    Input::File(path) => path.into_os_string(),
                    Input::Stdin => "-".into(),
                };
                let (shown, data) = (&read.0, &read.1);
                run::Program::File { given, shown, data }
            }
            Program::Code(code) => run::Program::Code(code),
            Program::Module(module) => run::Program::Module(module),
        };
        self.ended(run::run(self.py, program, argv, all_scopes, styles.stderr))
    }
}
