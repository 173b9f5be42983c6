//! A loop written with goto against the same loop written with `while`, in the embedded
//! interpreter, timed inside one program run (so both see the same interpreter state).
//! Goal: the goto loop at most 1.0 times the `while` loop.
//!
//! Run: `cargo bench --bench goto_loop`

use gotopy::{Options, Source};

const PROGRAM: &str = r#"
from goto import goto, label
import time

@goto
def with_goto(n):
    total = 0
    i = 0
    label .top
    if i < n:
        total += i
        i += 1
        goto .top
    return total

def with_while(n):
    total = 0
    i = 0
    while i < n:
        total += i
        i += 1
    return total

N = 1_000_000
assert with_goto(N) == with_while(N)
best = {}
for name, f in (("while", with_while), ("goto", with_goto)) * 7:
    start = time.perf_counter()
    f(N)
    elapsed = time.perf_counter() - start
    best[name] = min(best.get(name, elapsed), elapsed)
print(f"loop of {N:,} iterations, best of 7:")
print(f"  while: {best['while'] * 1000:8.1f} ms")
print(f"  goto:  {best['goto'] * 1000:8.1f} ms")
print(f"  goto / while: {best['goto'] / best['while']:.3f}")
"#;

fn main() {
    let source = Source::new("goto_loop.py", PROGRAM);
    let status = gotopy::run::run_source(&source, Options::default(), vec!["goto_loop.py".into()])
        .unwrap_or_else(|error| panic!("the benchmark program compiles: {error}"));
    assert_eq!(status, 0, "the benchmark program failed");
}
