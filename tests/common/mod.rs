//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use gotopy::Options;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path as snapshots show it: relative to the repository, with forward slashes.
pub fn shown(path: &Path) -> String {
    let relative = path.strip_prefix(root()).unwrap_or(path);
    relative.to_string_lossy().replace('\\', "/")
}

/// The header of a fixture: its leading docstring or comment lines.
pub fn header(text: &str) -> String {
    let mut lines = text.lines().map(str::trim);
    let mut header = String::new();
    if let Some(first) = lines.next() {
        header.push_str(first);
        header.push('\n');
        let docstring = first.starts_with("\"\"\"") || first.starts_with("'''");
        let closed = docstring && first.len() > 3 && first.ends_with(&first[..3]);
        if docstring && !closed {
            for line in lines.by_ref() {
                header.push_str(line);
                header.push('\n');
                if line.contains("\"\"\"") || line.contains("'''") {
                    break;
                }
            }
        }
    }
    for line in lines.take_while(|line| line.starts_with('#')) {
        header.push_str(line);
        header.push('\n');
    }
    header
}

/// Options a fixture asks for with a `# gotopy: all-scopes` line among its first lines.
pub fn fixture_options(text: &str) -> Options {
    Options {
        all_scopes: text
            .lines()
            .take(5)
            .any(|line| line.trim() == "# gotopy: all-scopes"),
    }
}
