//! `gotopy compile --python INTERPRETER`: standard `.pyc` files for a CPython on which gotopy
//! is not installed. The Python package's own modules (the tree edits and the lowering,
//! which read every opcode fact from the interpreter they run in) are embedded in the
//! binary; they are written to a temporary directory and run by the named interpreter as
//! `python -m gotopy compile` would run, with a stand-in for the native module that asks
//! this binary for each module's plan (`gotopy plan`, hidden). So the diagnostics are the
//! front end's, and the exit statuses those of `compile`.

use std::path::{Path, PathBuf};
use std::process::Command;

use gotopy::compile::package::{MODULES, file_of};

use super::BAD_INPUT;

/// The stand-in for the package's native module.
const NATIVE_STAND_IN: &str = include_str!("_gotopy.py");

/// What the interpreter runs: the version check first (the package needs 3.11), then the
/// package's `compile` command with the arguments that follow the directory.
const DRIVER: &str = "import sys
if not (3, 11) <= sys.version_info[:2] <= (3, 15):
    sys.stderr.write(f'gotopy: error: {sys.executable} is Python {sys.version.split()[0]}; '
                     'gotopy compiles for CPython 3.11 to 3.15\\n')
    sys.exit(2)
sys.path.insert(0, sys.argv.pop(1))
from gotopy._cli import main
sys.exit(main(sys.argv[1:]))
";

/// `compile`'s options that the package's command takes as they are.
pub(super) struct PycArgs<'a> {
    pub(super) python: &'a Path,
    pub(super) paths: &'a [PathBuf],
    pub(super) out_dir: Option<&'a Path>,
    pub(super) invalidation_mode: Option<&'a str>,
    pub(super) all_scopes: bool,
    pub(super) color: bool,
}

/// Runs the package's `compile` in the named interpreter; its exit status.
pub(super) fn compile_pyc(args: &PycArgs<'_>) -> u8 {
    match run(args) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("gotopy: error: {message}");
            BAD_INPUT
        }
    }
}

fn run(args: &PycArgs<'_>) -> Result<u8, String> {
    let binary = std::env::current_exe()
        .map_err(|error| format!("cannot find the gotopy binary itself: {error}"))?;
    let directory = tempfile::tempdir()
        .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
    let files = MODULES
        .iter()
        .map(|&(module, text)| (file_of(module), text))
        .chain([("gotopy/_gotopy.py".to_owned(), NATIVE_STAND_IN)]);
    for (file, text) in files {
        let path = directory.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap_or(directory.path()))
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    let mut command = Command::new(args.python);
    // Isolated: neither the user's site-packages nor PYTHONPATH (an installed gotopy of
    // another version) comes before the embedded package.
    command
        .args(["-I", "-c", DRIVER])
        .arg(directory.path())
        .args(["--color", if args.color { "always" } else { "never" }])
        .arg("compile")
        .env("GOTOPY_BIN", binary);
    if args.all_scopes {
        command.arg("--all-scopes");
    }
    if let Some(out_dir) = args.out_dir {
        command.arg("--out-dir").arg(out_dir);
    }
    if let Some(mode) = args.invalidation_mode {
        command.args(["--invalidation-mode", mode]);
    }
    command.arg("--").args(args.paths);
    let status = command
        .status()
        .map_err(|error| format!("cannot run {}: {error}", args.python.display()))?;
    // A signal, or a status that is not one of `compile`'s, is the interpreter failing.
    match status.code() {
        Some(code @ 0..=2) => Ok(u8::try_from(code).unwrap_or(BAD_INPUT)),
        _ => Err(format!(
            "{} failed while compiling ({status})",
            args.python.display()
        )),
    }
}
