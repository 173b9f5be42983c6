//! The bytecode layer: a RustPython code object as an editable list of instructions, and
//! back. Its files are the stages:
//!
//! - `instr`: the list itself, [`Instr`]s with symbolic [`Label`]s for jump targets and
//!   exception [`Handler`]s, held in a [`Body`];
//! - `decode`: a [`CodeObject`](rustpython_compiler::CodeObject)'s code units to a
//!   [`Body`] ([`Body::decode`]), with `jump` (how a jump's argument encodes its target),
//!   `line_table` and `exception_table` for the parts of the code object that hold
//!   offsets;
//! - `assemble`: a [`Body`] laid out again the way RustPython's code generator does
//!   ([`Body::assemble`]): relative jumps, minimal `EXTENDED_ARG` prefixes (repeated until
//!   sizes settle), cache units, the location and line tables, the exception table and
//!   the maximum stack depth. Only it computes offsets;
//! - `flow`: where execution goes after each instruction ([`Flow::successors`], the one
//!   successor function) and the basic blocks;
//! - `stack`: the stack-depth analysis along those edges, and the verifier every code
//!   object [`Body::assemble`] emits first passes: jumps and handlers land on instructions,
//!   and the stack depth agrees on every edge;
//! - `listing`: the disassembly and the DOT graph; `code`: nested code objects and marshal.
//!
//! Decoding and assembling a code object with no edits reproduces it exactly;
//! `tests/roundtrip.rs` checks that over CPython's standard library.

use rustpython_compiler::core::bytecode::ExceptionTableEntry;

mod assemble;
mod code;
mod decode;
mod exception_table;
mod flow;
mod instr;
mod jump;
mod line_table;
mod lines;
mod listing;
mod stack;

pub(crate) use code::may_nest_deeply;
pub use code::{code_objects, for_each_code_mut, marshal, unmarshal};
pub use flow::{Edge, EdgeKind, Flow};
pub use instr::{Body, Handler, Instr, Item, Label, LabelMap};
pub use line_table::LineEntry;
pub use listing::{control_flow_dot, disassemble, disassemble_one};

/// Why a code object could not be decoded, assembled or verified.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BytecodeError {
    /// The code ends inside the instruction that starts at this offset.
    #[error("code ends inside an instruction at offset {0}")]
    Truncated(usize),
    /// A jump or handler target that is not the start of an instruction, or that the jump
    /// cannot reach in its direction.
    #[error("jump at offset {at} lands at {target}, not on an instruction")]
    BadJumpTarget {
        /// The offset of the jump.
        at: usize,
        /// The offset it lands at.
        target: i64,
    },
    /// An exception table that cannot be decoded; the text says why.
    #[error("exception table cannot be decoded: {0}")]
    BadExceptionTable(&'static str),
    /// An exception table entry whose range or target is not on instruction boundaries.
    #[error("exception table entry {0:?} does not fall on instruction boundaries")]
    BadExceptionEntry(ExceptionTableEntry),
    /// The code units of the instruction at this offset have different locations.
    #[error("the units of the instruction at offset {0} disagree on their location")]
    SplitLocation(usize),
    /// The line table cannot be decoded, or has the wrong length; the text says how.
    #[error("line table does not match the code: {0}")]
    BadLineTable(&'static str),
    /// A jump or handler names a label that is not in the instruction list.
    #[error("label {0:?} is used but never placed")]
    UnplacedLabel(Label),
    /// A jump or handler names a label placed after the last instruction.
    #[error("{0:?} is not placed on an instruction")]
    NotOnInstruction(Label),
    /// The stack-depth analysis failed.
    #[error("stack depth at offset {at}: {message}")]
    StackDepth {
        /// The offset of the instruction where it failed.
        at: usize,
        /// What went wrong.
        message: String,
    },
}
