//! The library API without an interpreter: check a source string, compile it with goto and
//! print the rewritten bytecode, and show the diagnostics of a broken one.
//!
//! Run: `cargo run --example compile_api`

use gotopy::compile::{CompileError, compile_source};
use gotopy::diagnostic::render_text;
use gotopy::{Options, Source, check_source};

const GOOD: &str = "\
from goto import goto, label

@goto
def find(grid, wanted):
    for row in grid:
        for cell in row:
            if cell == wanted:
                goto .found
    return None
    label .found
    return row, cell
";

const BAD: &str = "\
from goto import goto, label

@goto
def broken(items):
    goto .inside
    for item in items:
        label .inside
        print(item)
";

fn main() {
    let good = Source::new("good.py", GOOD);
    assert!(check_source(&good, Options::default()).is_empty());
    match compile_source(&good, Options::default()) {
        Ok(compiled) => {
            let listing = gotopy::bytecode::disassemble(&compiled.code).expect("it decodes");
            // Only the rewritten function: the module's own code is plain Python.
            let find = listing
                .split("\n\n")
                .find(|block| block.starts_with("Disassembly of find"))
                .expect("the function is there");
            println!("{find}\n");
        }
        Err(error) => panic!("good.py compiles: {error}"),
    }
    let bad = Source::new("bad.py", BAD);
    match compile_source(&bad, Options::default()) {
        Err(CompileError::Rejected { diagnostics, .. }) => {
            print!("{}", render_text(&diagnostics, &bad, false));
        }
        Err(error) => panic!("unexpected error: {error}"),
        Ok(_) => panic!("bad.py must be rejected"),
    }
}
