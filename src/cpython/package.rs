//! The Python package's own modules (`python/gotopy`, `python/goto`), for programs that run
//! them in a CPython where the package is not installed: `gotopy compile --python` (with a
//! stand-in for the native module, `src/cli/standin.py`) and `gotopy-python`'s embedding
//! (with the native module built in). One list, so that a module added to the package is
//! added to both.

/// Each module's qualified name and source, packages first.
pub const MODULES: [(&str, &str); 11] = [
    ("gotopy", include_str!("../../python/gotopy/__init__.py")),
    ("goto", include_str!("../../python/goto/__init__.py")),
    (
        "gotopy.__main__",
        include_str!("../../python/gotopy/__main__.py"),
    ),
    ("gotopy._cli", include_str!("../../python/gotopy/_cli.py")),
    (
        "gotopy._compile",
        include_str!("../../python/gotopy/_compile.py"),
    ),
    ("gotopy._hook", include_str!("../../python/gotopy/_hook.py")),
    ("gotopy._main", include_str!("../../python/gotopy/_main.py")),
    (
        "gotopy._marker",
        include_str!("../../python/gotopy/_marker.py"),
    ),
    (
        "gotopy._prepare",
        include_str!("../../python/gotopy/_prepare.py"),
    ),
    ("gotopy._pyc", include_str!("../../python/gotopy/_pyc.py")),
    (
        "gotopy._runtime",
        include_str!("../../python/gotopy/_runtime.py"),
    ),
];

/// Where a module of [`MODULES`] goes in a directory on `sys.path`:
/// `gotopy._compile` in `gotopy/_compile.py`, a package in its `__init__.py`.
pub fn file_of(module: &str) -> String {
    match module.split_once('.') {
        Some((package, name)) => format!("{package}/{name}.py"),
        None => format!("{module}/__init__.py"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Python file of the package's two directories is in the list, so that a module
    /// added to the package cannot be missing where the package is not installed.
    #[test]
    fn every_module_of_the_package_is_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
        let mut files = Vec::new();
        for package in ["gotopy", "goto"] {
            for entry in std::fs::read_dir(root.join(package)).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                if name.ends_with(".py") {
                    files.push(format!("{package}/{name}"));
                }
            }
        }
        files.sort();
        let mut listed: Vec<String> = MODULES.iter().map(|(module, _)| file_of(module)).collect();
        listed.sort();
        assert_eq!(listed, files);
    }
}
