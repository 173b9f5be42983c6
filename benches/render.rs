//! Rendering diagnostics as text against serialising the same diagnostics as JSON, in one
//! run. Text rendering once cost the number of diagnostics times the size of the file; the
//! goal is 65,536 of them in under a second, within a small factor of JSON.
//!
//! - `unused`: a function of N labels that no goto names, one G101 warning each, so the
//!   file grows with the number of diagnostics.
//! - `duplicate`: a function that defines one label N times, one G001 error for each
//!   definition after the first, each pointing back at the first: a snippet spans every
//!   line between its two places, so this shape still costs N times the file.
//!
//! Run: `cargo bench --bench render`

use gotopy::diagnostic::{JsonDiagnostic, render_text};
use gotopy::{Diagnostic, Options, Source, check_source};

const UNUSED: &[usize] = &[4_096, 65_536];
const DUPLICATE: &[usize] = &[1_024, 4_096];

/// A decorated function with `count` label statements, `label .l0`, `label .l1`, ... or
/// all `label .a` and one `goto .a`, and its diagnostics. Built before timing starts.
fn checked(count: usize, unique: bool) -> (Source, Vec<Diagnostic>) {
    let mut text = String::from("from goto import goto, label\n\n@goto\ndef f():\n");
    for label in 0..count {
        match unique {
            true => text.push_str(&format!("    label .l{label}\n")),
            false => text.push_str("    label .a\n"),
        }
    }
    text.push_str(if unique {
        "    return 0\n"
    } else {
        "    goto .a\n"
    });
    let source = Source::new("labels.py", text);
    let diagnostics = check_source(&source, Options::default());
    let expected = if unique { count } else { count - 1 };
    assert_eq!(diagnostics.len(), expected, "one diagnostic per label");
    (source, diagnostics)
}

fn text(bencher: divan::Bencher, (source, diagnostics): (Source, Vec<Diagnostic>)) {
    bencher.bench(|| render_text(&diagnostics, &source, false).len());
}

fn json(bencher: divan::Bencher, (source, diagnostics): (Source, Vec<Diagnostic>)) {
    bencher.bench(|| {
        let all: Vec<JsonDiagnostic> = diagnostics
            .iter()
            .map(|diagnostic| JsonDiagnostic::new(diagnostic, &source))
            .collect();
        serde_json::to_string_pretty(&all).map_or(0, |json| json.len())
    });
}

fn main() {
    divan::main();
}

#[divan::bench(args = UNUSED, sample_count = 10, sample_size = 1)]
fn unused_text(bencher: divan::Bencher, count: usize) {
    text(bencher, checked(count, true));
}

#[divan::bench(args = UNUSED, sample_count = 10, sample_size = 1)]
fn unused_json(bencher: divan::Bencher, count: usize) {
    json(bencher, checked(count, true));
}

#[divan::bench(args = DUPLICATE, sample_count = 10, sample_size = 1)]
fn duplicate_text(bencher: divan::Bencher, count: usize) {
    text(bencher, checked(count, false));
}

#[divan::bench(args = DUPLICATE, sample_count = 10, sample_size = 1)]
fn duplicate_json(bencher: divan::Bencher, count: usize) {
    json(bencher, checked(count, false));
}
