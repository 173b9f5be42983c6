//! The CPython backend: everything gotopy does for CPython 3.11 to 3.15 that is not the
//! front end's, in Rust, without PyO3 and without an interpreter. The Python package
//! (`python/`) and `gotopy compile --python` are shells over it: they hand it a code object's
//! tables and names and get the rewritten tables back.
//!
//! - `opcodes`: each version's opcode table, as its interpreter describes it;
//! - `shapes`: what gotopy knows of each version's bytecode beyond that table;
//! - `bytecode`: a code object as an editable instruction list, and back.

pub mod bytecode;
pub mod code;
pub mod lower;
pub mod markers;
pub mod module;
pub mod opcodes;
pub mod package;
pub mod plan;
pub mod shapes;
#[cfg(test)]
mod testing;
pub mod without_source;

pub use opcodes::Version;

/// The line by which a module asks every scope to be rewritten, module and class bodies
/// too, when it is imported through the hook or compiled to a `.pyc` file.
pub const ALL_SCOPES: &[u8] = b"# gotopy: all-scopes";

/// Whether one of the first five lines of a module's source is [`ALL_SCOPES`] (blanks around
/// it allowed).
pub fn asks_all_scopes(data: &[u8]) -> bool {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < data.len() && lines.len() < 5 {
        match data[at] {
            b'\n' | b'\r' => {
                lines.push(&data[start..at]);
                if data[at] == b'\r' && data.get(at + 1) == Some(&b'\n') {
                    at += 1;
                }
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    if lines.len() < 5 && start < data.len() {
        lines.push(&data[start..]);
    }
    lines.iter().any(|line| line.trim_ascii() == ALL_SCOPES)
}
