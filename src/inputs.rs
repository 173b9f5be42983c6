//! What the command lines read: the inputs their paths name (a file, standard input, the
//! Python files under a directory), their bytes, and an I/O error in words. Shared by the
//! `gotopy` binary and the Python package's command line (through its native module), so
//! that both walk directories alike and word their messages alike.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::front::source::Source;

/// Where source text comes from.
pub enum Input {
    /// `-`.
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Input {
    /// A command-line path: `-` is standard input.
    pub fn from_path(path: &Path) -> Self {
        if path.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::File(path.to_path_buf())
        }
    }
}

/// Expands the command-line paths into inputs, in a stable order; paths that cannot be
/// expanded come back as messages.
pub fn collect_inputs(paths: &[PathBuf]) -> (Vec<Input>, Vec<String>) {
    let (found, problems) = collect_sources(paths);
    (
        found.into_iter().map(|(input, _)| input).collect(),
        problems,
    )
}

/// [`collect_inputs`], each input with the directory argument it was found under (`None`
/// for a path given as it is): a directory's Python files depth first, each directory's
/// entries in byte order of their names, symbolic links not followed.
pub fn collect_sources(paths: &[PathBuf]) -> (Vec<(Input, Option<&Path>)>, Vec<String>) {
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        if path.as_os_str() != "-" && path.is_dir() {
            let before = inputs.len();
            for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                match entry {
                    Ok(entry) if entry.file_type().is_file() && is_python(entry.path()) => {
                        inputs.push((Input::File(entry.into_path()), Some(path.as_path())));
                    }
                    Ok(_) => {}
                    Err(error) => problems.push(format!("{}: {}", shown(path), walk_error(&error))),
                }
            }
            if inputs.len() == before {
                problems.push(format!("{}: no Python files (`*.py`) found", shown(path)));
            }
        } else {
            inputs.push((Input::from_path(path), None));
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

/// A path as messages show it.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// The input decoded as a module's source; why it cannot be read or decoded.
pub fn read_source(input: &Input) -> Result<Source, String> {
    let (path, bytes) = read_bytes(input)?;
    Source::from_bytes(path.as_str(), &bytes).map_err(|error| format!("{path}: {error}"))
}

/// The path an input is shown under, and its bytes; why it cannot be read.
pub fn read_bytes(input: &Input) -> Result<(String, Vec<u8>), String> {
    Ok(match input {
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
    })
}

/// An I/O error in words, without the OS error number.
pub fn io_reason(error: &std::io::Error) -> String {
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
