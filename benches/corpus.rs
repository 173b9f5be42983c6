//! CPython's standard library as a corpus of real code no one here wrote, shared by the
//! benchmark and the corpus test.

use std::path::PathBuf;
use std::process::Command;

/// The directory `python3` reports as its standard library.
pub fn stdlib_dir() -> PathBuf {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 is on every machine");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// Every UTF-8 `*.py` file below the standard library (site-packages excluded), as
/// (path relative to the library, text), in a stable order.
pub fn stdlib_sources() -> Vec<(String, String)> {
    let root = stdlib_dir();
    let mut files: Vec<_> = walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| entry.file_name() != "site-packages")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "py"))
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            let relative = entry.path().strip_prefix(&root).ok()?;
            Some((relative.display().to_string(), text))
        })
        .collect();
    files.sort();
    files
}
