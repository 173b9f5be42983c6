//! `gotopy compile --python INTERPRETER`: standard `.pyc` files for a CPython on which gotopy
//! is not installed. The Python package's own modules (the tree edits and the lowering,
//! which read every opcode fact from the interpreter they run in) are embedded in the
//! binary; they are written to a temporary directory and run by the named interpreter as
//! `python -m gotopy compile` would run, with a stand-in for the native module that asks
//! this binary for each module's plan (`gotopy plan`, hidden). So the diagnostics are the
//! front end's, and the exit statuses those of `compile`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::BAD_INPUT;

/// The package's modules, by file name, and the stand-in for its native module.
const PACKAGE: [(&str, &str); 12] = [
    (
        "__init__.py",
        include_str!("../../python/gotopy/__init__.py"),
    ),
    (
        "__main__.py",
        include_str!("../../python/gotopy/__main__.py"),
    ),
    (
        "_bytecode.py",
        include_str!("../../python/gotopy/_bytecode.py"),
    ),
    ("_cli.py", include_str!("../../python/gotopy/_cli.py")),
    (
        "_compile.py",
        include_str!("../../python/gotopy/_compile.py"),
    ),
    ("_hook.py", include_str!("../../python/gotopy/_hook.py")),
    ("_lower.py", include_str!("../../python/gotopy/_lower.py")),
    (
        "_prepare.py",
        include_str!("../../python/gotopy/_prepare.py"),
    ),
    ("_pyc.py", include_str!("../../python/gotopy/_pyc.py")),
    (
        "_runtime.py",
        include_str!("../../python/gotopy/_runtime.py"),
    ),
    (
        "_versions.py",
        include_str!("../../python/gotopy/_versions.py"),
    ),
    ("_gotopy.py", include_str!("_gotopy.py")),
];

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
    let package = directory.path().join("gotopy");
    std::fs::create_dir(&package)
        .and_then(|()| {
            PACKAGE
                .iter()
                .try_for_each(|(name, text)| std::fs::write(package.join(name), text))
        })
        .map_err(|error| format!("cannot write the package to {}: {error}", package.display()))?;
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
