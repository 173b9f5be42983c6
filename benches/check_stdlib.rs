//! `gotopy check` against plain parsing, over CPython's standard library, in one run.
//!
//! `parse` only parses every file with RustPython's parser; `check` parses, scans and
//! checks every file, as `gotopy check` does without the I/O. The goal is `check` at most
//! 1.2 times `parse`.
//!
//! Run: `cargo bench --bench check_stdlib`

use std::sync::OnceLock;

use gotopy::{Options, Source, check_source};

mod corpus;

fn sources() -> &'static [(String, String)] {
    static SOURCES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SOURCES.get_or_init(corpus::stdlib_sources)
}

fn main() {
    let files = sources();
    let lines: usize = files.iter().map(|(_, text)| text.lines().count()).sum();
    println!("corpus: {} files, {lines} lines", files.len());
    divan::main();
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn parse() -> usize {
    sources()
        .iter()
        .filter(|(_, text)| rustpython_compiler::parser::parse_module(text).is_ok())
        .count()
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn check() -> usize {
    sources()
        .iter()
        .map(|(path, text)| {
            let source = Source::new(path.as_str(), text.as_str());
            check_source(&source, Options::default()).len()
        })
        .sum()
}
