//! Invariants of the tree that no compiler checks (rust-analyzer's `tidy.rs` is the model):
//! read from the files themselves, so that breaking one fails `cargo test`.
//!
//! - The direction of imports: neither backend uses the other, and nothing below them (the
//!   front end, the planning they share in `src/plan/`, the shared bytecode helpers) nor
//!   `translate` uses the RustPython backend, under its own path or the crate's re-exports
//!   of it (`crate::compile`, `crate::bytecode`, ...). Only the shells (`src/cli/`,
//!   `cli.rs`, `main.rs`, `lib.rs`) see both. A file's unit tests (`mod tests` under
//!   `#[cfg(test)]`) may use either backend as a harness.
//! - ARCHITECTURE.md's code map names every source file (by its path, or by its name under
//!   its folder's path), and every path it names exists.
//! - Only the per-version tables (`src/cpython/opcodes.rs`, `src/cpython/shapes.rs`) tell
//!   one CPython version from another, and the supported versions are written once
//!   (`Version::SUPPORTED`, held to the table by a unit test), not in messages elsewhere.
//! - The language reference is `docs/language.md`: every "SPEC section N" the repository
//!   cites is a section of it, and nothing points at the specification it started from,
//!   outside the repository.
//! - The crate's features only add modules, so the front end's code is the same without
//!   them (`.ci/run` tests it once).
//! - The integration tests make their scratch directories through `common::Scratch` alone,
//!   which removes them when the test passes, so that a run leaves nothing in the system's
//!   temporary directory.

use std::path::Path;

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

/// Every file under `dir`, recursively, relative to the repository root, sorted.
fn files(dir: &str) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, found);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = common::root();
    let mut found = Vec::new();
    walk(&root, &root.join(dir), &mut found);
    found.sort();
    found
}

/// The text of a source file without its unit tests.
fn without_tests(path: &str) -> String {
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The part of the crate a source file belongs to.
#[derive(Debug, PartialEq)]
enum Part {
    RustPython,
    CPython,
    Shell,
    /// The front end, the shared planning and bytecode helpers, `translate`, the language
    /// server.
    Below,
}

fn part(path: &str) -> Part {
    if path.starts_with("src/rustpython/") {
        Part::RustPython
    } else if path.starts_with("src/cpython/") {
        Part::CPython
    } else if path.starts_with("src/cli/")
        || ["src/cli.rs", "src/main.rs", "src/lib.rs"].contains(&path)
    {
        Part::Shell
    } else {
        Part::Below
    }
}

/// The paths of the RustPython backend as the crate's code can name them: its own, and the
/// crate root's re-exports of its modules.
const RUSTPYTHON_PATHS: [&str; 8] = [
    "rustpython",
    "compile",
    "bytecode",
    "rewrite",
    "embed",
    "run",
    "shapes",
    "goto.py",
];

/// `text` with its line comments blanked out, its lines kept: a comment may name anything.
fn code_only(text: &str) -> String {
    let lines: Vec<&str> = (text.lines())
        .map(|line| line.find("//").map_or(line, |comment| &line[..comment]))
        .collect();
    lines.join("\n")
}

/// Where `text` names `crate::<module>` for one of `modules`, directly or in a `use crate::{...}`
/// group: the line numbers.
fn naming(text: &str, modules: &[&str]) -> Vec<usize> {
    let names = |segment: &str| {
        let segment = segment.trim_start();
        modules.iter().any(|module| {
            segment.starts_with(module)
                && !segment[module.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    };
    let code = code_only(text);
    (code.match_indices("crate::"))
        .filter_map(|(at, _)| {
            let rest = &code[at + "crate::".len()..];
            let named = match rest.strip_prefix('{') {
                // A group, possibly over several lines: up to its closing brace.
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .any(names),
                None => names(rest),
            };
            named.then(|| code[..at].matches('\n').count() + 1)
        })
        .collect()
}

#[test]
fn neither_backend_nor_what_is_below_them_uses_the_other_backend() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for path in files("src") {
        if !path.ends_with(".rs") {
            continue;
        }
        let forbidden: &[&str] = match part(&path) {
            Part::RustPython => &["cpython", "translate", "cli"],
            Part::CPython => &RUSTPYTHON_PATHS,
            Part::Below => &RUSTPYTHON_PATHS,
            Part::Shell => continue,
        };
        let text = without_tests(&path);
        for line in naming(&text, forbidden) {
            wrong.push(format!(
                "{path}:{line}: {}",
                text.lines().nth(line - 1).unwrap().trim()
            ));
        }
        checked += 1;
    }
    assert!(checked > 50, "only {checked} files checked");
    assert!(
        wrong.is_empty(),
        "imports against the direction:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_rule_sees_paths_and_groups() {
    let text = "use crate::plan::checked;\nuse crate::{\n    diagnostic::Code,\n    compile::X,\n};\nlet x = crate::bytecode::Body::new();\nuse crate::compiled;\n";
    assert_eq!(naming(text, &RUSTPYTHON_PATHS), [2, 6]);
    assert_eq!(naming("crate::cpython::plan", &["cpython"]), [1]);
    assert!(naming("crate::cpython_like", &["cpython"]).is_empty());
}

/// `path` with a CPython version in it (`3.11`, ...) written `3.X`.
fn per_version(path: &str) -> String {
    let mut written = path.to_owned();
    for minor in 11..=15 {
        written = written.replace(&format!("3.{minor}."), "3.X.");
    }
    written
}

/// The paths ARCHITECTURE.md names in backquotes, as `src/...` or `tests/...`.
fn named_paths(map: &str) -> Vec<&str> {
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            [
                "src/",
                "tests/",
                "python/src/",
                "python/gotopy/",
                "benches/",
                "examples/",
            ]
            .iter()
            .any(|prefix| quoted.starts_with(prefix))
        })
        .filter(|quoted| !quoted.contains(['*', ' ', '{', '<']))
        .collect()
}

#[test]
fn the_code_map_names_every_source_file_and_nothing_that_is_gone() {
    let map = std::fs::read_to_string(common::root().join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&map);
    let mut missing = Vec::new();
    for path in files("src") {
        let (dir, name) = path.rsplit_once('/').unwrap();
        let by_folder =
            named.contains(&format!("{dir}/").as_str()) && map.contains(&format!("`{name}`"));
        // A file per CPython version is named once for all, as `3.X`.
        let by_version = named.contains(&per_version(&path).as_str());
        if !named.contains(&path.as_str()) && !by_folder && !by_version {
            missing.push(path);
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name these files (by path, or by name with \
         their folder's path):\n{}",
        missing.join("\n")
    );
    let gone: Vec<&&str> = (named.iter())
        .filter(|path| !path.contains("3.X") && !common::root().join(path).exists())
        .collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {gone:?}"
    );
}

/// The repository's text files (Rust, Python, Markdown, TOML, YAML, shell), without the
/// build directories and this file.
fn text_files() -> Vec<String> {
    let root = common::root();
    let mut found = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let hidden = name.starts_with('.') && name != ".ci";
                if !hidden && name != "target" && name != "__pycache__" {
                    dirs.push(path);
                }
                continue;
            }
            let text = ["rs", "py", "md", "toml", "yaml", "yml", "sh"]
                .iter()
                .any(|ext| name.ends_with(&format!(".{ext}")))
                || path.parent() == Some(&root.join(".ci"))
                || path.parent() == Some(&root.join("tools"));
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if text && relative != "tests/tidy.rs" {
                found.push(relative);
            }
        }
    }
    found.sort();
    found
}

/// The section numbers `text` cites as "SPEC section N", "SPEC sections N" or "SPEC N".
fn cited_sections(text: &str) -> Vec<u32> {
    let mut cited = Vec::new();
    for (at, _) in text.match_indices("SPEC ") {
        let rest = &text[at + "SPEC ".len()..];
        let rest = (rest
            .strip_prefix("sections ")
            .or_else(|| rest.strip_prefix("section ")))
        .unwrap_or(rest);
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(number) = digits.parse() {
            cited.push(number);
        }
    }
    cited
}

#[test]
fn every_cited_section_is_in_the_language_reference_and_nothing_points_outside() {
    let reference = std::fs::read_to_string(common::root().join("docs/language.md")).unwrap();
    let outside = concat!("..", "/shared");
    let (mut missing, mut pointing, mut citations) = (Vec::new(), Vec::new(), 0);
    for path in text_files() {
        let Ok(text) = std::fs::read_to_string(common::root().join(&path)) else {
            continue;
        };
        if text.contains(outside) {
            pointing.push(path.clone());
        }
        for section in cited_sections(&text) {
            citations += 1;
            if !reference.contains(&format!("\n## {section}. ")) {
                missing.push(format!("{path}: SPEC section {section}"));
            }
        }
    }
    assert!(citations > 20, "only {citations} citations found");
    assert!(
        missing.is_empty(),
        "cited, and not in docs/language.md:\n{}",
        missing.join("\n")
    );
    assert!(
        pointing.is_empty(),
        "these point outside the repository: {pointing:?}"
    );
}

#[test]
fn citations_are_read_in_each_form() {
    assert_eq!(
        cited_sections("SPEC section 4, SPEC sections 2 and SPEC 5; SPECS 9"),
        [4, 2, 5]
    );
}

#[test]
fn only_the_version_tables_tell_versions_apart() {
    const TABLES: [&str; 2] = ["src/cpython/opcodes.rs", "src/cpython/shapes.rs"];
    let mut wrong = Vec::new();
    for path in files("src").into_iter().chain(files("python/src")) {
        if !path.ends_with(".rs") || TABLES.contains(&path.as_str()) {
            continue;
        }
        let text = without_tests(&path);
        for (index, (line, code)) in text.lines().zip(code_only(&text).lines()).enumerate() {
            if code.contains("at_least(") || code.contains("3.11 to 3.15") {
                wrong.push(format!("{path}:{}: {}", index + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a version check or the supported versions outside the tables:\n{}",
        wrong.join("\n")
    );
}

/// The `version = "..."` of a manifest's `[package]` table (its first line of that form).
fn package_version(path: &str) -> String {
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    let package = (text.split("[package]\n").nth(1))
        .unwrap_or_else(|| panic!("{path} has no [package] table"));
    (package.lines())
        .take_while(|line| !line.starts_with('['))
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{path}'s [package] has no version"))
        .to_owned()
}

/// One version for the crate, the extension and the Python package: pyproject.toml takes
/// the extension's (`dynamic = ["version"]`, which maturin fills from python/Cargo.toml), and
/// the extension's is the crate's (cargo cannot inherit it outside a workspace, so this test
/// holds the two equal). `gotopy --version` of the binary and of the package then agree.
#[test]
fn the_crate_the_extension_and_the_package_have_one_version() {
    assert_eq!(
        package_version("python/Cargo.toml"),
        package_version("Cargo.toml"),
        "python/Cargo.toml's version must be Cargo.toml's"
    );
    let pyproject = std::fs::read_to_string(common::root().join("pyproject.toml")).unwrap();
    assert!(
        pyproject.contains("\ndynamic = [\"version\"]\n"),
        "pyproject.toml must take its version from python/Cargo.toml (dynamic = [\"version\"])"
    );
    assert!(
        !pyproject.lines().any(|line| line.starts_with("version =")),
        "pyproject.toml must not write a version of its own"
    );
}

/// The crate's features (`vm`, `cli`, `server`) only add modules: under `src/`, a feature's
/// `cfg` stands on a module, a `use` or a re-export (or sets a lint's level), never inside a
/// function or on an item the front end runs. So the front end's code is the same with and
/// without them, and `.ci/run` tests it once, with the default features (its
/// no-default-features pass only builds and documents it).
#[test]
fn features_only_add_modules() {
    let mut misplaced = Vec::new();
    for path in files("src")
        .into_iter()
        .filter(|path| path.ends_with(".rs"))
    {
        let text = std::fs::read_to_string(common::root().join(&path)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            // An attribute or a `cfg!` in any form: `cfg(feature`, `cfg(not(feature`,
            // `cfg(all(feature`, `cfg_attr(feature`; not a comment that names them.
            let names_feature = (trimmed.starts_with("#[") || trimmed.contains("cfg!("))
                && trimmed.contains("cfg")
                && trimmed.contains("feature");
            if !names_feature {
                continue;
            }
            // The item the attribute stands on: the next line that is not an attribute or a
            // comment.
            let item = lines[index + 1..]
                .iter()
                .map(|line| line.trim_start())
                .find(|line| !line.starts_with("#[") && !line.starts_with("//"));
            let on_module = trimmed.starts_with("#[cfg(")
                && item.is_some_and(|item| {
                    ["mod ", "pub mod ", "pub(crate) mod ", "use ", "pub use "]
                        .iter()
                        .any(|start| item.starts_with(start))
                });
            // A lint's level changes no code: `#[cfg_attr(not(feature = ...), allow(dead_code))]`.
            let lint_only = trimmed.starts_with("#[cfg_attr(")
                && (trimmed.contains(", allow(") || trimmed.contains(", expect("));
            if !on_module && !lint_only {
                misplaced.push(format!("{path}:{}: {trimmed}", index + 1));
            }
        }
    }
    assert!(
        misplaced.is_empty(),
        "a feature may only add a module, a `use` or a re-export, or set a lint's level \
         (.ci/run tests the front end once, with the default features):\n{}",
        misplaced.join("\n")
    );
}

#[test]
fn scratch_directories_come_from_one_helper() {
    let mut elsewhere = Vec::new();
    for path in files("tests")
        .into_iter()
        .filter(|path| path.ends_with(".rs") && path != "tests/common/mod.rs")
    {
        let text = std::fs::read_to_string(common::root().join(&path)).unwrap();
        for (index, line) in code_only(&text).lines().enumerate() {
            // Spelled in two halves, so that this line does not find itself.
            if line.contains(concat!("temp_dir", "()")) {
                elsewhere.push(format!("{path}:{}: {}", index + 1, line.trim()));
            }
        }
    }
    assert!(
        elsewhere.is_empty(),
        "a test's scratch directory comes from `common::Scratch`, which removes it when the \
         test passes:\n{}",
        elsewhere.join("\n")
    );
}
