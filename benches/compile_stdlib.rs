//! Compiling with gotopy against the plain RustPython compiler, over CPython's standard
//! library, in one run. `gotopy` parses, scans, checks and compiles every file (no file of
//! the library has markers in a rewritten scope, so it emits exactly what `plain` emits);
//! `plain` is `rustpython_compiler::compile`. Goal: `gotopy` at most 1.05 times `plain`.
//!
//! Run: `cargo bench --bench compile_stdlib`

use std::sync::OnceLock;

use gotopy::compile::compile_source;
use gotopy::{Options, Source};
use rustpython_compiler::{CompileOpts, Mode, compile};

mod corpus;

/// The files RustPython compiles.
fn sources() -> &'static [(String, String)] {
    static SOURCES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SOURCES.get_or_init(|| {
        corpus::stdlib_sources()
            .into_iter()
            .filter(|(path, text)| compile(text, Mode::Exec, path, CompileOpts::default()).is_ok())
            .collect()
    })
}

fn main() {
    println!("corpus: {} files RustPython compiles", sources().len());
    divan::main();
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn plain() -> usize {
    sources()
        .iter()
        .filter_map(|(path, text)| compile(text, Mode::Exec, path, CompileOpts::default()).ok())
        .map(|code| code.instructions.len())
        .sum()
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn gotopy() -> usize {
    sources()
        .iter()
        .filter_map(|(path, text)| {
            compile_source(
                &Source::new(path.as_str(), text.as_str()),
                Options::default(),
            )
            .ok()
        })
        .map(|compiled| compiled.code.instructions.len())
        .sum()
}
