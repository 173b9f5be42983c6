//! Invariants of the tree that no compiler checks (rust-analyzer's `tidy.rs` is the model):
//! read from the files themselves, so that breaking one fails `cargo test`.
//!
//! - The direction of imports: the crate's modules form layers (the front end, the helpers
//!   both backends share, the backends with `translate` and the server, the shells), and a
//!   module uses only its own top-level module and the layers below its own, by any form of
//!   path (`crate::`, `super::` up to the crate root, groups, the crate root's re-exports);
//!   neither backend uses the other, `translate` or the server. A file's unit tests (a
//!   `#[cfg(test)]` module at its end) may use any layer as a harness. Inside the layers,
//!   no module takes part in a cycle of imports (a module and the modules inside it count
//!   as one), nor any module of the Python package.
//! - The invariants ARCHITECTURE.md states that the words of the code can show
//!   ([`INVARIANTS`]): the front end does no I/O, only `parse` calls the parser, `scan`
//!   makes no diagnostic, `check` never reads the syntax tree, the CPython backend never
//!   calls an interpreter; and the Python package reads no instruction.
//! - ARCHITECTURE.md's code map names every file of `src/`, `tests/`, `python/`,
//!   `benches/` and `examples/` (code by its path, data by its path or its own folder's), and
//!   every path it names exists.
//! - Only the per-version tables (`src/cpython/opcodes.rs`, `src/cpython/shapes.rs`) tell
//!   one CPython version from another, and the supported versions are written once
//!   (`Version::SUPPORTED`, held to the table by a unit test), not in messages elsewhere.
//! - The language reference is `docs/language.md`: every "SPEC section N" the repository
//!   cites is a section of it, and nothing points at the specification it started from,
//!   outside the repository.
//! - The crate's features only add modules, so the front end's code is the same without
//!   them (`.ci/run` tests it once).
//! - No file of the code (`src/`, `python/src/`, `python/gotopy/`) is over [`LONGEST`] lines,
//!   and the package's Python, which is glue, is at most [`MOST_GLUE`] lines in all.
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
    match text.find("#[cfg(test)]\nmod ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The crate's layers, bottom first, by their top-level modules (`src/NAME.rs` or
/// `src/NAME/`): a module uses only its own top-level module and those of the layers below
/// its own; in a layer whose members are apart (`true`), none uses another (neither backend
/// uses the other, `translate` or the server). ARCHITECTURE.md states this rule; a module that is in no
/// layer fails the test until it is placed in one.
const LAYERS: [(&str, bool, &[&str]); 4] = [
    ("the front end", false, &["front"]),
    (
        "the helpers both backends share",
        false,
        &[
            "tables",
            "literal",
            "dominators",
            "locals",
            "copies",
            "search",
            "splice",
            "symbolic",
            "plan",
        ],
    ),
    (
        "the backends, translate and the language server",
        true,
        &["cpython", "rustpython", "translate", "server"],
    ),
    (
        "the shells",
        false,
        &["shell", "cli", "main", "lib", "inputs"],
    ),
];

/// The crate root's re-exports, by the module each comes from (`None`: from a dependency):
/// a path through one of them names that module.
const REEXPORTS: [(&str, Option<&str>); 15] = [
    ("check_source", Some("front")),
    ("diagnostic", Some("front::diagnostic")),
    ("source", Some("front::source")),
    ("Code", Some("front")),
    ("Diagnostic", Some("front")),
    ("Severity", Some("front")),
    ("Options", Some("front")),
    ("Source", Some("front")),
    ("TextRange", None),
    ("TextSize", None),
    ("bytecode", Some("rustpython::bytecode")),
    ("compile", Some("rustpython::compile")),
    ("rewrite", Some("rustpython::rewrite")),
    ("embed", Some("rustpython::embed")),
    ("run", Some("rustpython::run")),
];

/// The module path of a source file under `src/`: `src/a/b.rs` and `src/a/b/mod.rs` are
/// `[a, b]`; `src/lib.rs` is the crate root, `[]`.
fn module_path(path: &str) -> Vec<&str> {
    let inside = path
        .strip_prefix("src/")
        .unwrap()
        .strip_suffix(".rs")
        .unwrap();
    let mut segments: Vec<&str> = inside.split('/').collect();
    if segments.last() == Some(&"mod") || inside == "lib" {
        segments.pop();
    }
    segments
}

/// The top-level module a source file belongs to (`main` and `lib` for those two files).
fn top_level(path: &str) -> &str {
    let inside = path.strip_prefix("src/").unwrap();
    let first = inside.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// `text` with its comments and the contents of its string, raw string and character
/// literals blanked out, its lines kept: a comment or a message may name anything.
fn code_only(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut in_string, mut block_comments) = (false, 0);
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        if c == '\n' {
            code.push('\n');
        } else if block_comments > 0 {
            if c == '*' && next == Some('/') {
                chars.next();
                block_comments -= 1;
            } else if c == '/' && next == Some('*') {
                chars.next();
                block_comments += 1;
            }
        } else if in_string {
            if c == '\\' {
                if chars.peek() != Some(&'\n') {
                    chars.next();
                }
            } else if c == '"' {
                in_string = false;
                code.push('"');
            }
        } else if c == '/' && next == Some('/') {
            while chars.peek().is_some_and(|&c| c != '\n') {
                chars.next();
            }
        } else if c == '/' && next == Some('*') {
            chars.next();
            block_comments += 1;
        } else if c == 'r'
            && !code.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            && chars.clone().find(|&c| c != '#') == Some('"')
            && matches!(next, Some('"' | '#'))
        {
            // A raw string: blanked up to the quote followed by as many `#` as it opened with.
            let hashes = chars.clone().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let rest: String = chars.clone().skip(hashes + 1).collect();
            let end = rest.find(&close).map_or(rest.len(), |at| at + close.len());
            code.push_str("\"\"");
            code.extend(rest[..end].chars().filter(|&c| c == '\n'));
            for _ in 0..hashes + 1 + rest[..end].chars().count() {
                chars.next();
            }
        } else if c == '"' {
            in_string = true;
            code.push('"');
        } else if c == '\'' && (next == Some('\\') || chars.clone().nth(1) == Some('\'')) {
            // A character literal ('"', '{', '\''...), blanked whole; a lifetime is code.
            if chars.next() == Some('\\') {
                chars.next();
            }
            while chars.next().is_some_and(|c| c != '\'') {}
            code.push_str("' '");
        } else {
            code.push(c);
        }
    }
    code
}
/// Every path of `text` (the code of the file `path`) that starts at the crate root or
/// climbs there or within the crate (`crate::a`, `super::super::b`), as the module path it
/// names from the root, with its line: a `use` group gives one per item, nested groups too
/// (`crate::{a::{b, c}, d}` gives `a::b`, `a::c` and `d`); a path through the crate root's
/// re-exports names the module they come from, and one to a dependency is left out.
fn root_paths(path: &str, text: &str) -> Vec<(usize, Vec<String>)> {
    let code = code_only(text);
    let own = module_path(path);
    let mut found = Vec::new();
    for (start, _) in code.match_indices(['c', 's']) {
        if code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut rest = &code[start..];
        let climbed = if let Some(after) = rest.strip_prefix("crate::") {
            rest = after;
            own.len()
        } else {
            let mut count = 0;
            while let Some(after) = rest.strip_prefix("super::") {
                rest = after.trim_start();
                count += 1;
            }
            count
        };
        if climbed == 0 {
            continue;
        }
        assert!(climbed <= own.len(), "{path}: a path above the crate root");
        let base = &own[..own.len() - climbed];
        let line = code[..start].matches('\n').count() + 1;
        for named in expand(rest) {
            let mut full: Vec<String> = base.iter().map(|segment| segment.to_string()).collect();
            let first = named.first().map(String::as_str);
            match (REEXPORTS.iter()).find(|(item, _)| base.is_empty() && first == Some(*item)) {
                Some((_, None)) => continue,
                Some((_, Some(module))) => {
                    full.extend(module.split("::").map(str::to_owned));
                    full.extend(named.into_iter().skip(1));
                }
                None => full.extend(named),
            }
            if !full.is_empty() {
                found.push((line, full));
            }
        }
    }
    found
}

/// The top-level modules `text` (the code of the file `path`) names ([`root_paths`]), with
/// the line of each, once per line.
fn named_modules(path: &str, text: &str) -> Vec<(usize, String)> {
    let mut named: Vec<(usize, String)> = (root_paths(path, text).into_iter())
        .map(|(line, mut module)| (line, module.swap_remove(0)))
        .collect();
    named.dedup();
    named
}

/// The layer of a top-level module: its index in [`LAYERS`], bottom first.
fn layer(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, _, members)| members.contains(&module))
}

/// What is wrong with the imports of the file `path` whose code is `text`, one line each.
fn against_the_layers(path: &str, text: &str) -> Vec<String> {
    let own = top_level(path);
    let Some(own_layer) = layer(own) else {
        return vec![format!(
            "{path}: `{own}` is in no layer of tests/tidy.rs's LAYERS"
        )];
    };
    let mut wrong = Vec::new();
    for (line, module) in named_modules(path, text) {
        if module == own {
            continue;
        }
        let shown = text.lines().nth(line - 1).unwrap_or("").trim();
        match layer(&module) {
            None => wrong.push(format!(
                "{path}:{line}: `{module}` is in no layer of tests/tidy.rs's LAYERS: {shown}"
            )),
            Some(theirs) if theirs > own_layer => wrong.push(format!(
                "{path}:{line}: {} uses {}, a layer above it: {shown}",
                LAYERS[own_layer].0, LAYERS[theirs].0
            )),
            Some(theirs) if theirs == own_layer && LAYERS[own_layer].1 => wrong.push(format!(
                "{path}:{line}: `{own}` uses `{module}`, and {} use none of each other: {shown}",
                LAYERS[own_layer].0
            )),
            Some(_) => {}
        }
    }
    wrong
}

/// The crate's modules import one way, down its layers ([`LAYERS`]), with no cycle between
/// top-level modules of different layers and none between the backends; a file's unit
/// tests (a `#[cfg(test)]` module at its end) may use anything as a harness.
#[test]
fn every_module_imports_only_from_the_layers_below_its_own() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for path in files("src") {
        if !path.ends_with(".rs") {
            continue;
        }
        wrong.extend(against_the_layers(&path, &without_tests(&path)));
        checked += 1;
    }
    assert!(checked > 80, "only {checked} files checked");
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// The rule reads every form of path: `crate::` and `super::` (as many as lead to the
/// crate root), alone, in groups and nested groups, over several lines, through the crate
/// root's re-exports; and not what comments and strings say.
#[test]
fn the_import_rule_sees_every_form_of_path() {
    let planted = [
        ("src/front/check.rs", "use crate::plan::checked;"),
        (
            "src/front/scan/labels.rs",
            "use super::super::super::cpython::Version;",
        ),
        (
            "src/front/scan/mod.rs",
            "use super::super::{tables, front::source};",
        ),
        (
            "src/front/parse.rs",
            "use crate::{\n    front::source::Source,\n    splice::{Splice, Work},\n};",
        ),
        (
            "src/front/parse.rs",
            "let x = crate::compile::compile_source(s, o);",
        ),
        ("src/plan/mod.rs", "use super::translate::Translation;"),
        (
            "src/cpython/plan.rs",
            "fn f() { crate::rustpython::bytecode::Body::new(); }",
        ),
        ("src/rustpython/lower/goto.rs", "use crate::translate;"),
        ("src/server/mod.rs", "use crate::cli::main;"),
    ];
    for (path, text) in planted {
        assert_eq!(against_the_layers(path, text).len(), 1, "{path}: {text}");
    }
    let allowed = [
        (
            "src/front/scan/labels.rs",
            "use super::super::source::Source; use super::Scope;",
        ),
        (
            "src/front/check.rs",
            "// crate::plan\nlet s = \"crate::cpython\"; let c = '\"'; use crate::Source;",
        ),
        (
            "src/plan/mod.rs",
            "use crate::{Options, TextRange, front::scan::Module};",
        ),
        (
            "src/translate/mod.rs",
            "use crate::{plan::checked, splice::Work};",
        ),
        (
            "src/cli.rs",
            "use crate::cpython::plan; use crate::compile;",
        ),
        (
            "src/cpython/testing.rs",
            "const T: &str = r#\"crate::rustpython\"#; use crate::search;",
        ),
    ];
    for (path, text) in allowed {
        assert_eq!(
            against_the_layers(path, text),
            Vec::<String>::new(),
            "{path}: {text}"
        );
    }
    assert_eq!(
        named_modules(
            "src/plan/cases.rs",
            "use crate::{\n  a::{b, c},\n  d,\n};\nlet x = super::super::e::f;"
        ),
        [
            (1, "a".to_owned()),
            (1, "d".to_owned()),
            (5, "e".to_owned())
        ]
    );
}

/// Whether the file `path` is a module only unit tests compile: its parent declares it
/// under `#[cfg(test)]` (`src/cpython/testing.rs`, `src/server/tests.rs`, ...).
fn test_only(path: &str) -> bool {
    let (dir, file) = path.rsplit_once('/').unwrap();
    let name = file.strip_suffix(".rs").unwrap_or(file);
    let parents = [format!("{dir}/mod.rs"), format!("{dir}.rs")];
    parents.iter().any(|parent| {
        std::fs::read_to_string(common::root().join(parent))
            .is_ok_and(|text| text.contains(&format!("#[cfg(test)]\nmod {name};")))
    })
}

/// The invariants ARCHITECTURE.md states that the words of the code can show: the files
/// each governs (a folder, or one file), the files it leaves out, the words none of them
/// may hold outside unit tests and comments, and the invariant. Each is also stated as an
/// "Architecture Invariant" in the doc of the module it governs.
const INVARIANTS: [(&str, &[&str], &[&str], &str); 5] = [
    (
        "src/front/",
        &[],
        &[
            "eprintln!",
            "eprint!",
            "println!",
            "print!",
            "dbg!",
            "std::fs",
            "std::io::std",
            "std::env",
            "std::process",
            "File::",
        ],
        "the front end does no I/O: it reads no file, prints nothing, reads no environment",
    ),
    (
        "src/",
        &["src/front/parse.rs"],
        &[
            "parse_unchecked",
            "parse_module",
            "parse_expression",
            "parse_suite",
            "parse_tokens",
            "parser::parse",
        ],
        "only `parse` calls the parser: a module is parsed once",
    ),
    (
        "src/front/scan/",
        &[],
        &["Diagnostic", "Code::"],
        "`scan` records facts and makes no diagnostic; `check` decides what is an error",
    ),
    (
        "src/front/check.rs",
        &[],
        &["rustpython_compiler", "ast::"],
        "`check` never looks at the syntax tree: it sees only what `scan` recorded",
    ),
    (
        "src/cpython/",
        &[],
        &["std::process", "Command::", "pyo3", "Python<"],
        "the CPython backend never calls an interpreter: the shells hand it plain data",
    ),
];

/// What the words of `text`, the code of the file `path`, break of [`INVARIANTS`].
fn broken_invariants(path: &str, text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut wrong = Vec::new();
    for (governed, except, words, invariant) in INVARIANTS {
        if !path.starts_with(governed) || except.contains(&path) {
            continue;
        }
        for (number, line) in code.lines().enumerate() {
            if let Some(word) = words.iter().find(|word| line.contains(*word)) {
                let shown = text.lines().nth(number).unwrap_or("").trim();
                wrong.push(format!(
                    "{path}:{}: `{word}`: {invariant}: {shown}",
                    number + 1
                ));
            }
        }
    }
    wrong
}

#[test]
fn the_stated_invariants_hold_in_the_code() {
    let mut wrong = Vec::new();
    for path in files("src") {
        if path.ends_with(".rs") && !test_only(&path) {
            wrong.extend(broken_invariants(&path, &without_tests(&path)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The Python package decides nothing about bytecode (ARCHITECTURE.md): no module of
/// `python/gotopy/` reads a code object's instructions or tables, or imports `dis` or
/// `opcode` (but `_cli.py`'s `dis` command, which prints what `dis` lists); `co_code` is
/// only compared, to tell whether a function was rewritten.
#[test]
fn the_python_package_reads_no_instruction() {
    const WORDS: [&str; 8] = [
        "import dis",
        "from dis",
        "import opcode",
        "from opcode",
        "co_linetable",
        "co_exceptiontable",
        "co_lnotab",
        "get_instructions",
    ];
    let broken = |path: &str, line: &str| {
        let code = line.split('#').next().unwrap_or("").trim();
        let word = WORDS.iter().find(|word| code.contains(*word));
        let allowed = path.ends_with("/_cli.py") && code == "import dis";
        let read = code.contains("co_code") && !code.contains("!=") && !code.contains("==");
        (word.is_some() && !allowed) || read
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for path in files("python/gotopy") {
        if !path.ends_with(".py") {
            continue;
        }
        let text = std::fs::read_to_string(common::root().join(&path)).unwrap();
        for (number, line) in text.lines().enumerate() {
            if broken(&path, line) {
                wrong.push(format!("{path}:{}: {}", number + 1, line.trim()));
            }
        }
        checked += 1;
    }
    assert!(checked > 8, "only {checked} modules checked");
    assert!(
        wrong.is_empty(),
        "the package reads bytecode:\n{}",
        wrong.join("\n")
    );
    // Planted: each is caught, and what the package does is not.
    assert!(broken("python/gotopy/_compile.py", "    import dis"));
    assert!(broken(
        "python/gotopy/_runtime.py",
        "    ops = code.co_code[::2]"
    ));
    assert!(broken(
        "python/gotopy/_cli.py",
        "    from opcode import opmap"
    ));
    assert!(!broken("python/gotopy/_cli.py", "    import dis"));
    assert!(!broken(
        "python/gotopy/_runtime.py",
        "if new.co_code != code.co_code:"
    ));
}

/// Each invariant's first word, planted in a file it governs, breaks it; the same word in
/// a comment, a string or a file it does not govern does not.
#[test]
fn each_stated_invariant_fails_on_a_planted_word() {
    for (governed, except, words, _) in INVARIANTS {
        let path = if governed.ends_with('/') {
            format!("{governed}planted.rs")
        } else {
            governed.to_owned()
        };
        let planted = format!("fn f() {{ let _ = {}; }}", words[0]);
        assert_eq!(
            broken_invariants(&path, &planted).len(),
            1,
            "{path}: {planted}"
        );
        let quoted = format!("// {0}\nconst S: &str = \"{0}\";", words[0]);
        assert!(
            broken_invariants(&path, &quoted).is_empty(),
            "{path}: {quoted}"
        );
        for elsewhere in except.iter().chain(["src/cli.rs"].iter()) {
            if !elsewhere.starts_with(governed) || except.contains(elsewhere) {
                assert!(
                    broken_invariants(elsewhere, &planted).is_empty(),
                    "{elsewhere}"
                );
            }
        }
    }
    assert!(test_only("src/cpython/testing.rs") && !test_only("src/cpython/code.rs"));
}

/// The paths `rest` (the text after `crate::` or `super::`) names: `a::b`, or each path of
/// a group, nested groups expanded (`{a::{b, c}, d}` gives `a::b`, `a::c` and `d`).
fn expand(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    let mut head = Vec::new();
    let mut at = 0;
    loop {
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if word.is_empty() {
            break;
        }
        at += word.len();
        head.push(word);
        match rest[at..].trim_start().strip_prefix("::") {
            Some(after) => at = rest.len() - after.trim_start().len(),
            None => return vec![head],
        }
    }
    let Some(group) = rest[at..].strip_prefix('{') else {
        return vec![head];
    };
    let (mut paths, mut nesting, mut item) = (Vec::new(), 0, 0);
    for (offset, c) in group.char_indices() {
        let end = match c {
            '{' => {
                nesting += 1;
                false
            }
            '}' if nesting > 0 => {
                nesting -= 1;
                false
            }
            '}' => true,
            ',' => nesting == 0,
            _ => false,
        };
        if end {
            for tail in expand(&group[item..offset]) {
                if tail.iter().any(|segment| segment != "self") {
                    paths.push(head.iter().cloned().chain(tail).collect());
                }
            }
            item = offset + 1;
            if c == '}' {
                break;
            }
        }
    }
    paths
}

/// The modules of the crate (by module path) that the code of the file `path` names
/// ([`root_paths`]), each the longest prefix of the path that is a module of `modules`;
/// with the line of each.
fn used_modules(path: &str, text: &str, modules: &[Vec<String>]) -> Vec<(usize, Vec<String>)> {
    (root_paths(path, text).into_iter())
        .filter_map(|(line, full)| {
            let module = (0..=full.len())
                .rev()
                .map(|length| &full[..length])
                .find(|prefix| modules.iter().any(|module| module == prefix))?;
            Some((line, module.to_vec()))
        })
        .collect()
}

/// A module of the crate in its import graph.
struct Node {
    module: Vec<String>,
    path: String,
    /// The modules it uses that are neither its ancestors nor its descendants, each with
    /// the line that names it.
    uses: Vec<(usize, Vec<String>)>,
}

/// The crate's modules, each a file outside unit tests, with the modules each uses that
/// are neither its ancestors nor its descendants (a module and the modules inside it are
/// one unit: `mod.rs` declares them and they may use its items).
fn module_graph() -> Vec<Node> {
    let sources: Vec<String> = (files("src").into_iter())
        .filter(|path| path.ends_with(".rs") && !test_only(path))
        .filter(|path| path != "src/main.rs")
        .collect();
    let modules: Vec<Vec<String>> = (sources.iter())
        .map(|path| module_path(path).iter().map(|s| s.to_string()).collect())
        .collect();
    let nested = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    (sources.iter().zip(&modules))
        .map(|(path, module)| {
            let uses = used_modules(path, &without_tests(path), &modules)
                .into_iter()
                .filter(|(_, used)| !nested(module, used))
                .collect();
            Node {
                module: module.clone(),
                path: path.clone(),
                uses,
            }
        })
        .collect()
}

/// The cycles of a graph given as each node's successors: its strongly connected
/// components of more than one node (Tarjan's algorithm, iterative).
fn cycles(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = successors.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut found, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0)];
        while let Some((node, edge)) = work.pop() {
            if edge == 0 {
                index[node] = next;
                low[node] = next;
                next += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&to) = successors[node].get(edge) {
                work.push((node, edge + 1));
                if index[to] == usize::MAX {
                    work.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(index[to]);
                }
                continue;
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    found.push(component);
                }
            }
        }
    }
    found
}

/// No cycle among the crate's modules: the import graph of its files (the layers of
/// [`LAYERS`] between top-level modules, and inside each) goes one way.
#[test]
fn no_module_takes_part_in_a_cycle() {
    let graph = module_graph();
    assert!(graph.len() > 80, "only {} modules", graph.len());
    let successors: Vec<Vec<usize>> = (graph.iter())
        .map(|node| {
            let mut to: Vec<usize> = (node.uses.iter())
                .filter_map(|(_, used)| graph.iter().position(|other| &other.module == used))
                .collect();
            to.sort_unstable();
            to.dedup();
            to
        })
        .collect();
    let mut shown = Vec::new();
    for cycle in cycles(&successors) {
        let members: Vec<&str> = cycle.iter().map(|&i| graph[i].path.as_str()).collect();
        shown.push(members.join(" <-> "));
        for &i in &cycle {
            let mut lines: Vec<String> = (graph[i].uses.iter())
                .filter(|(_, used)| cycle.iter().any(|&j| &graph[j].module == used))
                .map(|(line, used)| format!("  {}:{line} uses {}", graph[i].path, used.join("::")))
                .collect();
            lines.dedup();
            shown.extend(lines);
        }
    }
    assert!(
        shown.is_empty(),
        "modules in a cycle:\n{}",
        shown.join("\n")
    );
}

/// The graph reads every form of path, and the cycle finder finds what is there.
#[test]
fn the_module_graph_sees_every_form_of_path() {
    assert_eq!(
        expand("{a::{b, c}, d, self}"),
        [vec!["a", "b"], vec!["a", "c"], vec!["d"]]
    );
    assert_eq!(expand("a :: b::C;"), [vec!["a", "b", "C"]]);
    let modules: Vec<Vec<String>> = [&["plan"][..], &["plan", "cases"], &["front", "scan"]]
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let text = "use super::cases::f;\nuse crate::{front::scan::{Scope, Marker}, Options};";
    let used: Vec<(usize, String)> = (used_modules("src/plan/prepare.rs", text, &modules))
        .into_iter()
        .map(|(line, module)| (line, module.join("::")))
        .collect();
    let expected = [(1, "plan::cases"), (2, "front::scan"), (2, "front::scan")];
    assert_eq!(used, expected.map(|(l, m)| (l, m.to_owned())));
    assert_eq!(
        cycles(&[vec![1], vec![2], vec![0], vec![]]),
        [vec![0, 1, 2]]
    );
    assert!(cycles(&[vec![1], vec![2], vec![], vec![0]]).is_empty());
}

/// The modules of the package `gotopy` that the Python text `text` imports, at its top or
/// inside a function: `from gotopy import _a, _b`, `from gotopy._a import x`, `import
/// gotopy._a` (the package itself, which every submodule's import runs first, counts as
/// their folder does in Rust: not an edge).
fn python_imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(names) = line.strip_prefix("from gotopy import ") {
            let names = names.split('#').next().unwrap_or("");
            for name in names.split(',') {
                let name = name.split_whitespace().next().unwrap_or("");
                found.push(name.trim_matches(['(', ')']).to_owned());
            }
        } else if let Some(rest) =
            (line.strip_prefix("from gotopy.")).or_else(|| line.strip_prefix("import gotopy."))
        {
            let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_');
            found.push(rest[..end.unwrap_or(rest.len())].to_owned());
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

/// No module of the Python package takes part in a cycle of imports, those made inside
/// functions included (an import made late is still a dependency).
#[test]
fn no_python_module_takes_part_in_a_cycle() {
    let modules: Vec<(String, String)> = (files("python/gotopy").into_iter())
        .filter(|path| path.ends_with(".py"))
        .map(|path| {
            let name = path.rsplit('/').next().unwrap().trim_end_matches(".py");
            (
                name.to_owned(),
                std::fs::read_to_string(common::root().join(&path)).unwrap(),
            )
        })
        .collect();
    assert!(modules.len() > 8, "only {} modules", modules.len());
    let successors: Vec<Vec<usize>> = (modules.iter())
        .map(|(_, text)| {
            (python_imports(text).iter())
                .filter_map(|name| modules.iter().position(|(module, _)| module == name))
                .collect()
        })
        .collect();
    let shown: Vec<String> = (cycles(&successors).iter())
        .map(|cycle| {
            let names: Vec<&str> = cycle.iter().map(|&i| modules[i].0.as_str()).collect();
            names.join(" <-> ")
        })
        .collect();
    assert!(
        shown.is_empty(),
        "Python modules in a cycle:\n{}",
        shown.join("\n")
    );
    let text = "from gotopy import _a, _b  # x\n    from gotopy._c import d\nimport gotopy._e\n";
    assert_eq!(python_imports(text), ["_a", "_b", "_c", "_e"]);
}

/// `path` with a CPython version in it (`3.11`, ...) written `3.X`.
fn per_version(path: &str) -> String {
    let mut written = path.to_owned();
    for minor in 11..=15 {
        written = written.replace(&format!("3.{minor}."), "3.X.");
    }
    written
}

/// The folders whose every file ARCHITECTURE.md's code map names.
const MAPPED: [&str; 5] = ["src", "tests", "python", "benches", "examples"];

/// The paths ARCHITECTURE.md names in backquotes under one of [`MAPPED`]: files, and
/// folders (ending in `/`).
fn named_paths(map: &str) -> Vec<&str> {
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            MAPPED
                .iter()
                .any(|dir| quoted.starts_with(&format!("{dir}/")))
        })
        .filter(|quoted| !quoted.contains(['*', ' ', '{', '<']))
        .collect()
}

/// Whether the file `path` is code (Rust anywhere, Python outside the test data), which the
/// code map names by its own path; a data file (fixtures, snapshots, programs, digests)
/// may be named by the folder it is in.
fn is_code(path: &str) -> bool {
    path.ends_with(".rs")
        || path.ends_with(".py")
            && ["src/", "python/", "benches/"]
                .iter()
                .any(|dir| path.starts_with(dir))
}

/// Every file of the repository under `dir` that is its own: not a build's, a cache's or
/// a tool's (`target/`, `__pycache__/`, hidden folders, snapshots insta has not accepted).
fn own_files(dir: &str) -> Vec<String> {
    (files(dir).into_iter())
        .filter(|path| {
            !path
                .split('/')
                .any(|part| part == "target" || part == "__pycache__" || part.starts_with('.'))
                && ![".pyc", ".snap.new", ".pending-snap"]
                    .iter()
                    .any(|end| path.ends_with(end))
        })
        .collect()
}

#[test]
fn the_code_map_names_every_file_and_nothing_that_is_gone() {
    let map = std::fs::read_to_string(common::root().join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&map);
    let mut missing = Vec::new();
    for path in MAPPED.iter().flat_map(|dir| own_files(dir)) {
        // A file per CPython version is named once for all, as `3.X`.
        let by_path =
            named.contains(&path.as_str()) || named.contains(&per_version(&path).as_str());
        let folder = &path[..=path.rfind('/').unwrap()];
        let by_folder = !is_code(&path) && named.contains(&folder);
        if !by_path && !by_folder {
            missing.push(path);
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name these files (code by its path, data by \
         its path or its own folder's):\n{}",
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

/// The most lines a file of the code may have: a longer one holds more than one idea.
const LONGEST: usize = 900;
/// The most lines of Python the package may have in all (`python/gotopy/*.py`): it takes
/// Python objects, calls the native module and gives Python objects back; what decides
/// anything is Rust.
const MOST_GLUE: usize = 1_400;

/// What breaks the size rules among `files`, each a path and its number of lines.
fn oversized(files: &[(String, usize)]) -> Vec<String> {
    let mut wrong: Vec<String> = (files.iter())
        .filter(|(_, lines)| *lines > LONGEST)
        .map(|(path, lines)| format!("{path}: {lines} lines, over {LONGEST}"))
        .collect();
    let glue: usize = (files.iter())
        .filter(|(path, _)| path.starts_with("python/gotopy/") && path.ends_with(".py"))
        .map(|(_, lines)| lines)
        .sum();
    if glue > MOST_GLUE {
        wrong.push(format!(
            "python/gotopy/*.py: {glue} lines of Python, over {MOST_GLUE}"
        ));
    }
    wrong
}

#[test]
fn no_file_is_too_long_and_the_package_is_glue() {
    let measured: Vec<(String, usize)> = ["src", "python/src", "python/gotopy"]
        .into_iter()
        .flat_map(files)
        .filter(|path| path.ends_with(".rs") || path.ends_with(".py"))
        .map(|path| {
            let text = std::fs::read_to_string(common::root().join(&path)).unwrap();
            (path, text.lines().count())
        })
        .collect();
    let wrong = oversized(&measured);
    assert!(wrong.is_empty(), "too long:\n{}", wrong.join("\n"));
    // Each rule fails on a planted file.
    let planted = |path: &str, lines: usize| {
        let mut with = measured.clone();
        with.push((path.to_owned(), lines));
        oversized(&with).len()
    };
    assert_eq!(planted("src/planted.rs", LONGEST + 1), 1);
    assert_eq!(planted("python/gotopy/_planted.py", LONGEST), 1);
    assert_eq!(planted("src/planted.rs", LONGEST), 0);
}
