//! One big generated function (`benches/big/gen.py`: N blocks of three-address code with
//! gotos back and forward, nested `if`s and calls through a stack of return labels) at
//! 1,000, 4,000, 16,000 and 64,000 blocks, through the RustPython routes, each against its
//! baseline at the same size in this process:
//!
//! - `compile`: `gotopy::compile::compile_source` against RustPython's own compiler on the
//!   same file with every marker replaced by `pass` (`gen.py --plain`);
//! - `translate`: `gotopy::translate::translate_source` against `gotopy::check_source`.
//!
//! Best of 3 runs each, alternated; the time per block shows growth at a glance. Goals
//! (issue 34): time per block grows at most 1.5 times from 1,000 to 64,000 blocks; at 64,000,
//! `compile` at most 1.5 times its baseline and `translate` at most 3 times.
//!
//! Run: `cargo bench --bench big [-- SIZE... [--return-in-each]]` (`--return-in-each`: each
//! procedure returns by a computed goto of its own, `gen.py`'s option). The CPython routes
//! and the run time of the translated code: `benches/big/run.py` (docs/performance.md).

use std::process::Command;
use std::time::{Duration, Instant};

use gotopy::{Options, Source};
use rustpython_compiler::{CompileOpts, Mode, compile};

/// `gen.py`'s module of `blocks` blocks (`plain`: without markers), with `options`.
fn generated(blocks: usize, plain: bool, options: &[String]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/big/gen.py");
    let mut command = Command::new("python3");
    command.arg(script).arg(blocks.to_string()).args(options);
    if plain {
        command.arg("--plain");
    }
    let output = command.output().expect("python3 runs gen.py");
    assert!(output.status.success(), "gen.py failed");
    String::from_utf8(output.stdout).expect("gen.py writes UTF-8")
}

/// The best of `rounds` runs of `a` and `b`, alternated, each after a pause: `translate`
/// frees its syntax trees on a thread of its own after it returns, which must not run beside
/// the next run timed.
fn best_of(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (Duration, Duration) {
    let (mut best_a, mut best_b) = (Duration::MAX, Duration::MAX);
    let timed = |run: &mut dyn FnMut()| {
        std::thread::sleep(Duration::from_secs(2));
        let start = Instant::now();
        run();
        start.elapsed()
    };
    for _ in 0..rounds {
        best_a = best_a.min(timed(&mut a));
        best_b = best_b.min(timed(&mut b));
    }
    (best_a, best_b)
}

fn row(route: &str, blocks: usize, (time, baseline): (Duration, Duration)) {
    let per_block = |d: Duration| d.as_secs_f64() * 1e6 / blocks as f64;
    println!(
        "{route:<10} {blocks:>7} {:>9.3} s {:>8.1} us {:>9.3} s {:>8.1} us {:>7.2}",
        time.as_secs_f64(),
        per_block(time),
        baseline.as_secs_f64(),
        per_block(baseline),
        time.as_secs_f64() / baseline.as_secs_f64(),
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    // `cargo bench` passes `--bench` too: only `gen.py`'s own option goes on.
    let options: Vec<String> = std::env::args()
        .filter(|arg| arg == "--return-in-each")
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 4_000, 16_000, 64_000]
    } else {
        sizes
    };
    println!(
        "{:<10} {:>7} {:>11} {:>11} {:>11} {:>11} {:>7}",
        "route", "blocks", "gotopy", "per block", "baseline", "per block", "ratio"
    );
    for &blocks in &sizes {
        let text = generated(blocks, false, &options);
        let plain = generated(blocks, true, &options);
        let source = Source::new("big.py", text.as_str());
        let compiled = best_of(
            3,
            || {
                gotopy::compile::compile_source(&source, Options::default())
                    .expect("the generated module compiles");
            },
            || {
                compile(&plain, Mode::Exec, "big.py", CompileOpts::default())
                    .expect("the plain module compiles");
            },
        );
        row("compile", blocks, compiled);
        let translated = best_of(
            3,
            || {
                gotopy::translate::translate_source(&source, Options::default())
                    .expect("the generated module translates");
            },
            || {
                let diagnostics = gotopy::check_source(&source, Options::default());
                assert!(diagnostics.is_empty(), "the generated module checks clean");
            },
        );
        row("translate", blocks, translated);
    }
}
