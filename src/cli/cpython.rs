//! `gotopy compile --python INTERPRETER`: standard `.pyc` files for a CPython on which gotopy
//! is not installed, by the package's own driver. The binary writes the package's modules
//! (`gotopy::cpython::package`) to a temporary directory, with a stand-in for the native
//! module (`standin.py`), and runs the package's `compile` there ([`compile_pyc`], with the
//! request the package's own command line makes, `gotopy::shell::PycRequest`): reading, the
//! plan's edits to CPython's tree, the compile, the `.pyc` files, every message and the exit
//! status are the package's. The stand-in asks this binary, run as `gotopy __native 3.X`
//! ([`serve_native`]), for what the native module computes, with the same Rust code: the
//! plan, the lowered code objects, late errors, and what a standalone file still needs. One
//! JSON object a line each way.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use gotopy::cpython::code::{Code, Constant, Lowered, SEARCH_FILE, SEARCH_FUNCTION};
use gotopy::cpython::markers::{still_needed, still_needed_refusal};
use gotopy::cpython::module::{LateError, Node, late_rejection, lower_module};
use gotopy::cpython::package;
use gotopy::cpython::plan::{Plan, Rejection, plan_source};
use gotopy::cpython::shapes::Shapes;
use gotopy::cpython::{Version, asks_all_scopes};
use gotopy::diagnostic::{REPORT, render_text};
use gotopy::{Options, Source};
use serde::Deserialize;
use serde_json::{Value, json};

use gotopy::inputs::io_reason;
use gotopy::shell::args::CompileArgs;
use gotopy::shell::{BAD_INPUT, PycRequest, SUCCESS, bad_input};

/// The native module's stand-in, after the lines [`stand_in`] writes.
const STAND_IN: &str = include_str!("standin.py");

/// What the interpreter runs: the version check (the package needs a supported version),
/// then the package's `compile`, from the directory given after it, with the request it
/// reads from standard input.
fn driver() -> String {
    let (first, last) = (Version::ALL[0], Version::ALL[Version::COUNT - 1]);
    format!(
        "import json, sys
if not (3, {}) <= sys.version_info[:2] <= (3, {}):
    sys.stderr.write(f'gotopy: error: {{sys.executable}} is Python {{sys.version.split()[0]}}; '
                     'gotopy compiles for CPython {}\\n')
    sys.exit(2)
sys.path.insert(0, sys.argv[1])
from gotopy import _cli
sys.exit(_cli.compile_files(**json.load(sys.stdin)))
",
        first.minor(),
        last.minor(),
        Version::SUPPORTED
    )
}

/// The stand-in's text: the native module's constants, the binary to ask, the file and
/// function names of a search function's code, then [`STAND_IN`].
fn stand_in(native: &Path) -> String {
    let literal = |value: Value| value.to_string();
    format!(
        "VERSION = {}\nREPORT = {}\nNATIVE = {}\nSEARCH = {}\n{STAND_IN}",
        literal(json!(env!("CARGO_PKG_VERSION"))),
        literal(json!(REPORT)),
        literal(json!(native.to_string_lossy())),
        literal(json!([SEARCH_FILE, SEARCH_FUNCTION])),
    )
}

/// Compiles the inputs of `compile --python` for the named interpreter; the exit status of
/// `compile`.
pub(super) fn compile_pyc(python: &Path, args: &CompileArgs, color: bool) -> u8 {
    run(python, args, color).unwrap_or_else(|message| bad_input(&message))
}

fn run(python: &Path, args: &CompileArgs, color: bool) -> Result<u8, String> {
    let request = PycRequest::new(args, color)?;
    let native = std::env::current_exe()
        .map_err(|error| format!("cannot find the gotopy binary: {}", io_reason(&error)))?;
    let directory = tempfile::tempdir()
        .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
    let stand_in = stand_in(&native);
    let files = (package::MODULES.iter())
        .map(|&(module, text)| (package::file_of(module), text))
        .chain([("gotopy/_gotopy.py".to_owned(), stand_in.as_str())]);
    for (file, text) in files {
        let path = directory.path().join(file);
        let written = (path.parent().map_or(Ok(()), std::fs::create_dir_all))
            .and_then(|()| std::fs::write(&path, text));
        written.map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    // Isolated: neither the user's site-packages nor PYTHONPATH comes before the package.
    let mut command = Command::new(python);
    command.args(["-I", "-c", &driver()]).arg(directory.path());
    let cannot_run =
        |error: std::io::Error| format!("cannot run {}: {}", python.display(), io_reason(&error));
    let mut child = (command.stdin(Stdio::piped()).spawn()).map_err(cannot_run)?;
    let request = serde_json::to_vec(&request.json()).map_err(|error| error.to_string())?;
    // A driver that ends early (an interpreter too old) leaves the request unread.
    let _ = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(&request));
    let status = child.wait().map_err(cannot_run)?;
    match status.code().and_then(|code| u8::try_from(code).ok()) {
        Some(code) => Ok(code),
        None => Err(format!(
            "{} failed while compiling ({status})",
            python.display()
        )),
    }
}

/// `gotopy __native 3.X`: answers the stand-in's requests, one a line, until its input ends.
pub(super) fn serve_native(version: &str) -> u8 {
    let version = version
        .split_once('.')
        .and_then(|(major, minor)| Version::new(major.parse().ok()?, minor.parse().ok()?));
    let Some(version) = version else {
        eprintln!(
            "gotopy: error: no CPython {} is {version:?}",
            Version::SUPPORTED
        );
        return BAD_INPUT;
    };
    let mut native = Native {
        shapes: Shapes::of(version),
        plans: HashMap::new(),
        next: 0,
    };
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let answer = serde_json::from_str::<Value>(&line)
            .map_err(|error| error.to_string())
            .and_then(|request| native.answer(&request))
            .unwrap_or_else(|error| json!({ "error": error }));
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
    SUCCESS
}

/// A module planned for the stand-in, which holds it by number.
struct Planned {
    source: Source,
    plan: Plan,
    color: bool,
}

/// What the helper keeps between requests.
struct Native {
    shapes: &'static Shapes,
    plans: HashMap<u64, Planned>,
    next: u64,
}

impl Native {
    fn answer(&mut self, request: &Value) -> Result<Value, String> {
        for id in request["drop"].as_array().into_iter().flatten() {
            self.plans.remove(&id.as_u64().unwrap_or(u64::MAX));
        }
        if let Some(asked) = request.get("plan") {
            return self.plan(asked);
        }
        if let Some(asked) = request.get("lower") {
            let planned = self.planned(&asked["plan"])?;
            let nodes = (asked["nodes"].as_array().ok_or("no nodes")?.iter())
                .map(|node| Node {
                    parent: node[0].as_u64().map(|parent| parent as usize),
                    qualname: node[1].as_str().unwrap_or_default().to_owned(),
                })
                .collect::<Vec<_>>();
            let mut codes = HashMap::new();
            for (index, described) in asked["codes"].as_object().ok_or("no codes")? {
                let index: usize = index.parse().map_err(|_| "a code object without index")?;
                codes.insert(index, code_of(described).ok_or("a code object unread")?);
            }
            let load = |index: usize| codes.remove(&index).unwrap_or_default();
            return Ok(
                match lower_module(self.shapes, &planned.plan, &nodes, load) {
                    Ok(lowered) => {
                        let lowered = (lowered.iter())
                            .map(|(index, new)| json!([index, lowered_json(new)]))
                            .collect::<Vec<_>>();
                        json!({ "lowered": lowered })
                    }
                    Err(error) => planned.rejected(&error),
                },
            );
        }
        if let Some(asked) = request.get("late_error") {
            let planned = self.planned(&asked["plan"])?;
            let at = asked["span"].as_array().map(|span| {
                let part = |at: usize| span.get(at).and_then(Value::as_i64).unwrap_or(-1) as i32;
                [part(0), part(1), part(2), part(3)]
            });
            let help = asked["help"].as_str().unwrap_or_default().to_owned();
            let message = asked["message"].as_str().unwrap_or_default().to_owned();
            return Ok(planned.rejected(&LateError::new(help.is_empty(), message, help, at)));
        }
        if let Some(asked) = request.get("still_needed") {
            let names: Vec<String> =
                serde_json::from_value(asked["names"].clone()).map_err(|e| e.to_string())?;
            for described in asked["codes"].as_array().into_iter().flatten() {
                let code = code_of(described).ok_or("a code object unread")?;
                let found = still_needed(self.shapes, &code, &names).map_err(|e| e.to_string())?;
                if let Some((name, at)) = found {
                    let (message, help) = still_needed_refusal(&name);
                    return Ok(json!({ "found": [message, at, help] }));
                }
            }
            return Ok(json!({ "found": null }));
        }
        if let Some(data) = request.get("asks_all_scopes") {
            return Ok(json!({ "asks": asks_all_scopes(&bytes(data)?) }));
        }
        Err(format!("gotopy cannot answer {request}"))
    }

    /// Decodes, checks and plans one module, as the native module's `plan`.
    fn plan(&mut self, asked: &Value) -> Result<Value, String> {
        let path = asked["path"].as_str().unwrap_or_default();
        let source = match Source::from_bytes(path, &bytes(&asked["data"])?) {
            Ok(source) => source,
            Err(error) => return Ok(json!({ "value_error": error.to_string() })),
        };
        let scope_line = asked["scope_line"].as_u64().map(|line| line as usize);
        let all_scopes = asked["all_scopes"].as_bool().unwrap_or_default();
        let options = Options::new().all_scopes(all_scopes).scope_line(scope_line);
        let color = asked["color"].as_bool().unwrap_or_default();
        let plan = match plan_source(&source, options) {
            Ok(plan) => plan,
            Err(error) => {
                let rejected = Rejection::of(&error, &source, color);
                return Ok(json!({ "rejected": rejected, "path": source.path() }));
            }
        };
        let id = self.next;
        self.next += 1;
        let answer = json!({ "plan": {
            "id": id,
            "json": serde_json::to_string(&plan).map_err(|error| error.to_string())?,
            "warnings": render_text(&plan.warnings, &source, color),
            "rewrites": !plan.scopes.is_empty(),
            "edits_tree": plan.edits_tree(),
            "deep": plan.deep,
            "imported": plan.standalone.names,
        }});
        self.plans.insert(
            id,
            Planned {
                source,
                plan,
                color,
            },
        );
        Ok(answer)
    }

    fn planned(&self, id: &Value) -> Result<&Planned, String> {
        (id.as_u64().and_then(|id| self.plans.get(&id))).ok_or_else(|| format!("no plan {id}"))
    }
}

impl Planned {
    fn rejected(&self, error: &LateError) -> Value {
        let rejected = late_rejection(&self.source, error, self.color);
        json!({ "rejected": rejected, "path": self.source.path() })
    }
}

fn bytes(hex: &Value) -> Result<Vec<u8>, String> {
    hex.as_str()
        .and_then(unhex)
        .ok_or_else(|| "bytes unread".to_owned())
}

fn lowered_json(new: &Lowered) -> Value {
    json!({
        "code": hex(&new.code),
        "locations": hex(&new.locations),
        "exceptions": hex(&new.exceptions),
        "stacksize": new.stacksize,
        "added": new.added,
        "names": new.names,
    })
}

/// A code object as the stand-in describes it: the attributes the backend reads, by their
/// names, bytes in hexadecimal.
#[derive(serde::Deserialize)]
struct Described {
    co_qualname: String,
    co_code: String,
    co_exceptiontable: String,
    co_linetable: String,
    co_firstlineno: i32,
    co_names: Vec<String>,
    co_varnames: Vec<String>,
    co_cellvars: Vec<String>,
    co_freevars: Vec<String>,
    co_consts: Vec<Constant>,
    co_flags: u32,
    co_argcount: u32,
    co_kwonlyargcount: u32,
    co_stacksize: u32,
}

/// A code object the stand-in described, as the backend reads it.
fn code_of(described: &Value) -> Option<Code> {
    let described = Described::deserialize(described).ok()?;
    let mut code = Code {
        code: unhex(&described.co_code)?,
        exceptions: unhex(&described.co_exceptiontable)?,
        locations: unhex(&described.co_linetable)?,
        first_line: described.co_firstlineno,
        names: described.co_names,
        constants: described.co_consts,
        flags: described.co_flags,
        argcount: described.co_argcount,
        kwonlyargcount: described.co_kwonlyargcount,
        stacksize: described.co_stacksize,
        qualname: described.co_qualname,
        ..Code::default()
    };
    code.set_locals(
        described.co_varnames,
        described.co_cellvars,
        described.co_freevars,
    );
    Some(code)
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
