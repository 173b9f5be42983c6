//! Rendering diagnostics as text against serialising the same diagnostics as JSON, in one
//! run, for files of 4,096 and 65,536 unused labels (one G101 warning per label, so the
//! file grows with the number of diagnostics). Text rendering once cost the number of
//! diagnostics times the size of the file; the goal is 65,536 of them in under a second,
//! within a small factor of JSON.
//!
//! Run: `cargo bench --bench render`

use gotopy::diagnostic::{JsonDiagnostic, render_text};
use gotopy::{Diagnostic, Options, Source, check_source};

const COUNTS: &[usize] = &[4_096, 65_536];

/// A decorated function with `count` labels and no goto, and its diagnostics. Built
/// before timing starts.
fn checked(count: usize) -> (Source, Vec<Diagnostic>) {
    let mut text = String::from("from goto import goto, label\n\n@goto\ndef f():\n");
    for label in 0..count {
        text.push_str(&format!("    label .l{label}\n"));
    }
    text.push_str("    return 0\n");
    let source = Source::new("labels.py", text);
    let diagnostics = check_source(&source, Options::default());
    assert_eq!(
        diagnostics.len(),
        count,
        "one unused-label warning per label"
    );
    (source, diagnostics)
}

fn main() {
    divan::main();
}

#[divan::bench(args = COUNTS, sample_count = 10, sample_size = 1)]
fn text(bencher: divan::Bencher, count: usize) {
    let (source, diagnostics) = checked(count);
    bencher.bench(|| render_text(&diagnostics, &source, false).len());
}

#[divan::bench(args = COUNTS, sample_count = 10, sample_size = 1)]
fn json(bencher: divan::Bencher, count: usize) {
    let (source, diagnostics) = checked(count);
    bencher.bench(|| {
        let all: Vec<JsonDiagnostic> = diagnostics
            .iter()
            .map(|diagnostic| JsonDiagnostic::new(diagnostic, &source))
            .collect();
        serde_json::to_string_pretty(&all).map_or(0, |json| json.len())
    });
}
