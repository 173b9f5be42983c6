//! `gotopy compile --python INTERPRETER`: standard `.pyc` files for a CPython on which gotopy
//! is not installed. The binary does all of gotopy's work (check, plan, lower, the check of
//! what a standalone file still needs) with the same Rust code as the extension; the named
//! interpreter only compiles what it is given and writes the files, through a small script
//! (`cpython.py`, with the package's edits to CPython's tree, `_prepare.py`), one interpreter
//! per core, one JSON object a line each way.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use gotopy::compile::CompileError;
use gotopy::cpython::code::{Code, Constant, Lowered, SEARCH_FILE, SEARCH_FUNCTION};
use gotopy::cpython::markers::{still_needed, still_needed_refusal};
use gotopy::cpython::module::{LateError, Node, late_error, lower_module};
use gotopy::cpython::plan::plan_source;
use gotopy::cpython::shapes::Shapes;
use gotopy::cpython::{Version, asks_all_scopes};
use gotopy::diagnostic::{REPORT, render_text};
use gotopy::{Options, Source};
use serde_json::{Value, json};

use super::{BAD_INPUT, Input, collect_inputs, exit_status, io_reason, progress_bar, shown};

/// The script the interpreter runs.
const SCRIPT: &str = include_str!("cpython.py");

/// The package's edits to CPython's tree, which the script imports.
const PREPARE: &str = include_str!("../../python/gotopy/_prepare.py");

/// What the interpreter runs first: the version check (the script needs a supported
/// version), then the script, from the directory given after it.
fn driver() -> String {
    let (first, last) = (Version::ALL[0], Version::ALL[Version::COUNT - 1]);
    format!(
        "import sys
if not (3, {}) <= sys.version_info[:2] <= (3, {}):
    sys.stderr.write(f'gotopy: error: {{sys.executable}} is Python {{sys.version.split()[0]}}; '
                     'gotopy compiles for CPython {}\\n')
    sys.exit(2)
sys.path.insert(0, sys.argv[1])
import gotopy_compile
gotopy_compile.main()
",
        first.minor(),
        last.minor(),
        Version::SUPPORTED
    )
}

/// `compile`'s options for `--python`.
pub(super) struct PycArgs<'a> {
    pub(super) python: &'a Path,
    pub(super) paths: &'a [PathBuf],
    pub(super) out_dir: Option<&'a Path>,
    pub(super) invalidation_mode: &'a str,
    pub(super) all_scopes: bool,
    pub(super) color: bool,
}

/// Compiles the inputs for the named interpreter; the exit status of `compile`.
pub(super) fn compile_pyc(args: &PycArgs<'_>) -> u8 {
    match run(args) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("gotopy: error: {message}");
            BAD_INPUT
        }
    }
}

/// One running interpreter with the script.
struct Interpreter {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    python: PathBuf,
}

impl Interpreter {
    fn start(python: &Path, directory: &Path) -> Result<(Interpreter, Value), String> {
        // Isolated: neither the user's site-packages nor PYTHONPATH comes before the script.
        let mut child = Command::new(python)
            .args(["-I", "-c", &driver()])
            .arg(directory)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot run {}: {}", python.display(), io_reason(&error)))?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("cannot talk to {}", python.display()));
        };
        let mut interpreter = Interpreter {
            child,
            input,
            output: BufReader::new(output),
            python: python.to_path_buf(),
        };
        let hello = interpreter.read()?;
        Ok((interpreter, hello))
    }

    /// The next answer; an interpreter that stopped answering ends the command.
    fn read(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        let read = self.output.read_line(&mut line);
        if matches!(read, Ok(0) | Err(_)) {
            let status = self.child.wait().map_err(|error| error.to_string())?;
            // The version check exits with `compile`'s own status for bad input.
            if status.code() == Some(i32::from(BAD_INPUT)) {
                return Err(String::new());
            }
            return Err(format!(
                "{} failed while compiling ({status})",
                self.python.display()
            ));
        }
        serde_json::from_str(&line).map_err(|error| {
            format!(
                "{} answered what gotopy cannot read: {error}",
                self.python.display()
            )
        })
    }

    fn ask(&mut self, request: &Value) -> Result<Value, String> {
        let sent = writeln!(self.input, "{request}").and_then(|()| self.input.flush());
        if sent.is_err() {
            return self.read();
        }
        self.read()
    }
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One file, and where its `.pyc` goes.
struct Job {
    source: PathBuf,
    target: PathBuf,
}

/// What compiling one file came to.
#[derive(Default)]
struct Outcome {
    report: String,
    failed: bool,
    problem: Option<String>,
}

fn run(args: &PycArgs<'_>) -> Result<u8, String> {
    if args.paths.iter().any(|path| path.as_os_str() == "-") {
        return Err("compile writes a .pyc beside its source: standard input has none".to_owned());
    }
    let directory = tempfile::tempdir()
        .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
    for (name, text) in [("gotopy_compile.py", SCRIPT), ("_prepare.py", PREPARE)] {
        let path = directory.path().join(name);
        std::fs::write(&path, text)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    let (first, hello) = match Interpreter::start(args.python, directory.path()) {
        Ok(started) => started,
        // The interpreter said why itself.
        Err(message) if message.is_empty() => return Ok(BAD_INPUT),
        Err(message) => return Err(message),
    };
    let version = hello["version"]
        .as_array()
        .and_then(|v| Version::new(v.first()?.as_u64()? as u32, v.get(1)?.as_u64()? as u32))
        .ok_or_else(|| {
            let supported = Version::SUPPORTED;
            format!("{} is no CPython {supported}", args.python.display())
        })?;
    let cache_tag = hello["cache_tag"].as_str().unwrap_or_default().to_owned();
    let (jobs, mut problems) = jobs(args, &cache_tag);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(jobs.len())
        .max(1);
    let mut interpreters = vec![first];
    for _ in 1..workers {
        interpreters.push(Interpreter::start(args.python, directory.path())?.0);
    }
    let progress = progress_bar(jobs.len());
    let compiler = Compiler {
        shapes: Shapes::of(version),
        all_scopes: args.all_scopes,
        color: args.color,
        mode: args.invalidation_mode,
    };
    let next = AtomicUsize::new(0);
    let outcomes: Vec<Mutex<Option<Outcome>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for mut interpreter in interpreters {
            let (next, outcomes, failure, jobs, compiler, progress) =
                (&next, &outcomes, &failure, &jobs, &compiler, &progress);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(index) else { break };
                    match compiler.compile(&mut interpreter, job) {
                        Ok(outcome) => {
                            *outcomes[index].lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(outcome)
                        }
                        Err(message) => {
                            *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
                            // Let the other workers stop too.
                            next.store(jobs.len(), Ordering::Relaxed);
                            break;
                        }
                    }
                    progress.inc(1);
                }
            });
        }
    });
    progress.finish_and_clear();
    if let Some(message) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(message);
    }
    let mut failed = false;
    for outcome in outcomes {
        let Some(outcome) = outcome.into_inner().unwrap_or_else(|e| e.into_inner()) else {
            continue;
        };
        eprint!("{}", outcome.report);
        failed |= outcome.failed;
        problems.extend(outcome.problem);
    }
    for message in &problems {
        eprintln!("gotopy: error: {message}");
    }
    Ok(exit_status(!problems.is_empty(), failed))
}

/// A job per input file: the cache file beside the source (`__pycache__/NAME.TAG.pyc`, as
/// `importlib.util.cache_from_source` names it), or `--out-dir`'s sourceless layout (the
/// path relative to the directory argument, or the file's name, `.py` replaced by `.pyc`).
fn jobs(args: &PycArgs<'_>, cache_tag: &str) -> (Vec<Job>, Vec<String>) {
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for path in args.paths {
        let (inputs, found) = if path.is_dir() {
            collect_inputs(std::slice::from_ref(path))
        } else {
            (vec![Input::from_path(path)], Vec::new())
        };
        problems.extend(found);
        for input in inputs {
            let Input::File(source) = input else { continue };
            let target = match args.out_dir {
                Some(dir) => {
                    let relative = if path.is_dir() {
                        source.strip_prefix(path).unwrap_or(&source).to_path_buf()
                    } else {
                        PathBuf::from(source.file_name().unwrap_or(source.as_os_str()))
                    };
                    dir.join(relative.with_extension("pyc"))
                }
                None => {
                    let stem = source.file_stem().unwrap_or_default().to_string_lossy();
                    let name = format!("{stem}.{cache_tag}.pyc");
                    source
                        .parent()
                        .unwrap_or(Path::new(""))
                        .join("__pycache__")
                        .join(name)
                }
            };
            jobs.push(Job { source, target });
        }
    }
    (jobs, problems)
}

/// What every job shares.
struct Compiler<'a> {
    shapes: &'static Shapes,
    all_scopes: bool,
    color: bool,
    mode: &'a str,
}

/// Why a file's compile stops early: with its outcome, or because the interpreter cannot go
/// on (which ends the command).
enum Stop {
    File(Outcome),
    Command(String),
}

impl From<String> for Stop {
    fn from(message: String) -> Stop {
        Stop::Command(message)
    }
}

/// An outcome that fails the file with `report`.
fn failed(report: String) -> Stop {
    Stop::File(Outcome {
        report,
        failed: true,
        problem: None,
    })
}

/// An outcome that makes the command exit 2 with `problem`, after `report`.
fn problem(report: String, problem: String) -> Stop {
    Stop::File(Outcome {
        report,
        failed: false,
        problem: Some(problem),
    })
}

impl Compiler<'_> {
    /// Compiles one file: its outcome, or why the interpreter could not go on.
    fn compile(&self, interpreter: &mut Interpreter, job: &Job) -> Result<Outcome, String> {
        match self.steps(interpreter, job) {
            Ok(outcome) | Err(Stop::File(outcome)) => Ok(outcome),
            Err(Stop::Command(message)) => Err(message),
        }
    }

    /// Read and plan; the interpreter compiles; lower; check what a standalone file still
    /// needs; the interpreter writes the file.
    fn steps(&self, interpreter: &mut Interpreter, job: &Job) -> Result<Outcome, Stop> {
        let shown_source = shown(&job.source);
        let data = std::fs::read(&job.source).map_err(|error| {
            problem(
                String::new(),
                format!("{shown_source}: cannot read: {}", io_reason(&error)),
            )
        })?;
        let source = Source::from_bytes(shown_source.as_str(), &data)
            .map_err(|error| problem(String::new(), format!("{shown_source}: {error}")))?;
        let options = Options::new().all_scopes(self.all_scopes || asks_all_scopes(&data));
        let plan = plan_source(&source, options).map_err(|error| match error {
            CompileError::Rejected { diagnostics, .. } => {
                failed(render_text(&diagnostics, &source, self.color))
            }
            other => failed(format!("{shown_source}: error: {other}\n")),
        })?;
        let late = |error: LateError| {
            failed(render_text(
                &[late_error(&source, &error)],
                &source,
                self.color,
            ))
        };
        let answer = interpreter.ask(&json!({"compile": {
            "path": shown_source,
            "data": hex(&data),
            "plan": if plan.edits_tree() { serde_json::to_value(&plan).map_err(|e| e.to_string())? } else { Value::Null },
            "deep": plan.deep,
            "functions": plan.scopes.iter().filter(|scope| scope.kind == "function").map(|scope| &scope.qualname).collect::<Vec<_>>(),
            "scopes": plan.scopes.iter().map(|scope| &scope.qualname).collect::<Vec<_>>(),
        }}))?;
        self.failure(&answer, &shown_source)?;
        if let Some(message) = answer["late"].as_str() {
            let help = answer["help"].as_str().unwrap_or_default().to_owned();
            return Err(late(LateError::new(
                help.is_empty(),
                message.to_owned(),
                help,
                None,
            )));
        }
        let described = answer["codes"].as_array().cloned().unwrap_or_default();
        let nodes: Vec<Node> = (described.iter())
            .map(|code| Node {
                parent: code["parent"].as_u64().map(|parent| parent as usize),
                qualname: code["qualname"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        let codes: Vec<Option<Code>> = described.iter().map(code_of).collect();
        let load = |index: usize| codes[index].clone().unwrap_or_default();
        let lowered = lower_module(self.shapes, &plan, &nodes, load).map_err(late)?;
        let removed: Vec<String> =
            serde_json::from_value(answer["removed"].clone()).unwrap_or_default();
        if let Some(error) = self.still_needed(&codes, &lowered, &removed)? {
            return Err(late(error));
        }
        let replace: Vec<Value> = (lowered.iter())
            .map(|(index, new)| {
                json!([index, {
                    "code": hex(&new.code),
                    "locations": hex(&new.locations),
                    "exceptions": hex(&new.exceptions),
                    "stacksize": new.stacksize,
                    "added": new.added.iter().map(constant_json).collect::<Vec<_>>(),
                    "names": new.names,
                }])
            })
            .collect();
        let answer = interpreter.ask(&json!({"write": {
            "replace": replace,
            "source": job.source,
            "target": job.target,
            "mode": self.mode,
        }}))?;
        let warnings = render_text(&plan.warnings, &source, self.color);
        if let Some(errno) = answer["errno"].as_i64() {
            let error = std::io::Error::from_raw_os_error(errno as i32);
            let why = format!(
                "{}: cannot write: {}",
                shown(&job.target),
                io_reason(&error)
            );
            return Err(problem(warnings, why));
        }
        self.failure(&answer, &shown_source)?;
        Ok(Outcome {
            report: warnings,
            failed: false,
            problem: None,
        })
    }

    /// The first load, in a code object of the module as it is after the rewrite, of a name
    /// that the imports a standalone file leaves out (`removed`) bound.
    fn still_needed(
        &self,
        codes: &[Option<Code>],
        lowered: &[(usize, Lowered)],
        removed: &[String],
    ) -> Result<Option<LateError>, String> {
        if removed.is_empty() {
            return Ok(None);
        }
        for (index, code) in codes.iter().enumerate() {
            let Some(code) = code else { continue };
            let code = match lowered.iter().find(|(at, _)| *at == index) {
                Some((_, new)) => rewritten(code, new),
                None => code.clone(),
            };
            let found =
                still_needed(self.shapes, &code, removed).map_err(|error| error.to_string())?;
            if let Some((name, at)) = found {
                let (message, help) = still_needed_refusal(&name);
                return Ok(Some(LateError::new(
                    false,
                    message,
                    help.to_owned(),
                    Some(at),
                )));
            }
        }
        Ok(None)
    }

    /// Stops on an answer that says the interpreter failed on this file: a syntax error of
    /// CPython's own, CPython's own error of a module it cannot compile (`RecursionError`,
    /// `MemoryError`), or an error inside the script (`G900`).
    fn failure(&self, answer: &Value, shown_source: &str) -> Result<(), Stop> {
        if let Some([line, message]) = answer["syntax_error"].as_array().map(Vec::as_slice) {
            let message = message.as_str().unwrap_or_default();
            return Err(failed(format!("{shown_source}:{line}: error: {message}\n")));
        }
        if let Some(error) = answer["raised"].as_str() {
            return Err(failed(format!("{shown_source}: error: {error}\n")));
        }
        if let Some(error) = answer["error"].as_str() {
            return Err(failed(format!(
                "{shown_source}: error[G900]: internal error: {error} ({REPORT})\n"
            )));
        }
        Ok(())
    }
}

/// A code object the script described in full, as the backend reads it.
fn code_of(described: &Value) -> Option<Code> {
    let bytes = |name: &str| unhex(described[name].as_str()?);
    let strings = |name: &str| -> Option<Vec<String>> {
        serde_json::from_value(described[name].clone()).ok()
    };
    let number = |name: &str| {
        described[name]
            .as_u64()
            .and_then(|value| u32::try_from(value).ok())
    };
    let mut code = Code {
        code: bytes("code")?,
        exceptions: bytes("exceptions")?,
        locations: bytes("locations")?,
        first_line: i32::try_from(described["first_line"].as_i64()?).ok()?,
        names: strings("names")?,
        constants: described["constants"]
            .as_array()?
            .iter()
            .map(constant_of)
            .collect(),
        flags: number("flags")?,
        argcount: number("argcount")?,
        kwonlyargcount: number("kwonlyargcount")?,
        stacksize: number("stacksize")?,
        qualname: described["qualname"].as_str()?.to_owned(),
        ..Code::default()
    };
    code.set_locals(
        strings("varnames")?,
        strings("cellvars")?,
        strings("freevars")?,
    );
    Some(code)
}

/// `code` with the tables, constants and names a rewrite gave it.
fn rewritten(code: &Code, new: &Lowered) -> Code {
    let mut code = code.clone();
    code.code.clone_from(&new.code);
    code.locations.clone_from(&new.locations);
    code.exceptions.clone_from(&new.exceptions);
    code.constants.extend(new.added.iter().cloned());
    code.names.extend(new.names.iter().cloned());
    code
}

fn constant_of(value: &Value) -> Constant {
    if value.is_null() {
        return Constant::None;
    }
    if let Some(hex) = value["int"].as_str() {
        return Constant::Int(hex.to_owned());
    }
    if let Some(text) = value["str"].as_str() {
        return Constant::Str(text.to_owned());
    }
    match value["bytes"].as_str().and_then(unhex) {
        Some(bytes) => Constant::Bytes(bytes),
        None => Constant::Other,
    }
}

fn constant_json(value: &Constant) -> Value {
    match value {
        Constant::Int(hex) => json!({ "int": hex }),
        Constant::Str(text) => json!({ "str": text }),
        Constant::Bytes(bytes) => json!({ "bytes": hex(bytes) }),
        Constant::Bool(value) => json!({ "bool": value }),
        Constant::Tuple(items) => {
            json!({ "tuple": items.iter().map(constant_json).collect::<Vec<_>>() })
        }
        Constant::SearchFunction(text) => {
            json!({ "search": text, "file": SEARCH_FILE, "name": SEARCH_FUNCTION })
        }
        Constant::None | Constant::Other => Value::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    let value = |digit: u8| char::from(digit).to_digit(16).map(|v| v as u8);
    digits
        .chunks(2)
        .map(|pair| Some(value(pair[0])? << 4 | value(pair[1])?))
        .collect()
}
