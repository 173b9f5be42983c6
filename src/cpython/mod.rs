//! The CPython backend: everything gotopy does for CPython 3.11 to 3.15 that is not the
//! front end's, in Rust, without PyO3 and without an interpreter. The Python package
//! (`python/`) and `gotopy compile --python` are shells over it: they hand it a code object's
//! tables and names and get the rewritten tables back.
//!
//! Architecture Invariant: the backend never calls an interpreter and never sees PyO3
//! (`tests/tidy.rs`): every fact it uses is in `opcodes/3.X.txt` (the interpreter's own,
//! checked against it by a unit test) or `shapes`, and only those two tell versions apart.
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
pub mod rewrite;
pub mod shapes;
pub mod standalone;
#[cfg(test)]
mod testing;

pub use opcodes::Version;

pub use crate::front::scan::{ALL_SCOPES, asks_all_scopes};
