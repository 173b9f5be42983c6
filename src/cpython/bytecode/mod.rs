//! The CPython bytecode layer: a code object's instructions as an editable list, and back,
//! for whichever version 3.11 to 3.15 compiled it. Its files are the stages:
//!
//! - this one: the list, [`Instr`]s with symbolic [`Label`]s for jump targets and exception
//!   [`Handler`]s, held in a [`Body`]; no offsets;
//! - `decode`: `co_code`, `co_exceptiontable` and `co_linetable` to a [`Body`]
//!   ([`Body::decode`]), `EXTENDED_ARG` folded into arguments, caches implied by opcodes;
//! - `flow`: where execution goes after an instruction ([`Flow::successors`], the one
//!   successor function of this backend);
//! - `stack`: the stack depth before every instruction along those edges, and the check
//!   every assembled code object passes first (jumps and handlers land on instructions,
//!   one depth per instruction, no pop below the bottom, no inserted instruction under a
//!   handler deeper than its stack). CPython checks none of this (`code.replace` takes
//!   anything), so this check is what stands between a rewrite and a crashed interpreter;
//! - `assemble`: the list laid out again ([`Body::assemble`]): relative jumps,
//!   `EXTENDED_ARG` prefixes until sizes settle, zeroed caches, the location and exception
//!   tables ([`crate::tables`]), the stack size. Only it computes offsets.
//!
//! Every opcode fact comes from the version's table ([`Opcodes`]); what gotopy knows beyond
//! it (which opcodes end a block) from [`super::shapes`]. Decoding and assembling a code
//! object with no edits reproduces it byte for byte.

mod assemble;
mod decode;
mod flow;
mod stack;

pub use assemble::Assembled;
pub use decode::RawCode;
pub use flow::Flow;
pub use stack::Depths;

use super::opcodes::Opcodes;
use super::shapes::Shapes;
pub use crate::symbolic::{Handler, Label};
use crate::tables::Position;

/// Why a code object could not be decoded, or an edited one fails the check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BytecodeError(pub String);

impl BytecodeError {
    pub(crate) fn new(message: impl Into<String>) -> BytecodeError {
        BytecodeError(message.into())
    }
}

/// Which instruction this is, for as long as the list lives: edits move and copy
/// instructions, and the lowering keeps facts about particular ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

/// A number [`Body`] gives out densely from 0: a label's, an instruction's identity.
pub trait Numbered: Copy {
    /// The number.
    fn number(self) -> usize;
}

impl Numbered for Label {
    fn number(self) -> usize {
        self.0 as usize
    }
}

impl Numbered for InstrId {
    fn number(self) -> usize {
        self.0 as usize
    }
}

/// An index in the instruction list for some of the labels or identities of a body: a
/// vector by number, where a hash map cost a third of decoding and assembling a code object
/// (and, of instruction identities, a fifth of choosing the targets of a function of 64,000
/// blocks).
#[derive(Clone, Debug)]
pub struct Indices<K> {
    at: Vec<usize>,
    keys: std::marker::PhantomData<K>,
}

/// In [`Indices`], where a key has no index.
const NO_INDEX: usize = usize::MAX;

impl<K: Numbered> Indices<K> {
    /// None yet.
    pub fn new() -> Indices<K> {
        Indices {
            at: Vec::new(),
            keys: std::marker::PhantomData,
        }
    }

    /// Gives `key` the index `index`.
    pub fn insert(&mut self, key: K, index: usize) {
        let number = key.number();
        if number >= self.at.len() {
            self.at.resize(number + 1, NO_INDEX);
        }
        self.at[number] = index;
    }

    /// The index of `key`, if it has one.
    pub fn get(&self, key: K) -> Option<usize> {
        (self.at.get(key.number()).copied()).filter(|&index| index != NO_INDEX)
    }
}

impl<K: Numbered> Default for Indices<K> {
    fn default() -> Indices<K> {
        Indices::new()
    }
}

impl<K: Numbered> FromIterator<(K, usize)> for Indices<K> {
    fn from_iter<I: IntoIterator<Item = (K, usize)>>(pairs: I) -> Indices<K> {
        let mut indices = Indices::new();
        for (key, index) in pairs {
            indices.insert(key, index);
        }
        indices
    }
}

/// One instruction.
#[derive(Clone, Debug)]
pub struct Instr {
    /// The opcode.
    pub op: u8,
    /// The argument (recomputed from `target` for a jump when assembling).
    pub arg: u32,
    /// Where it jumps to.
    pub target: Option<Label>,
    /// The exception handler that covers it.
    pub handler: Option<Handler>,
    /// Its source position.
    pub position: Position,
    /// Set on what gotopy adds: an unconditional jump whose direction the layout decides,
    /// and an instruction that must not sit under a handler deeper than its stack.
    pub inserted: bool,
    /// Its identity.
    pub id: InstrId,
}

/// An element of an instruction list.
#[derive(Clone, Debug)]
pub enum Item {
    /// Marks the position of the instruction after it.
    Label(Label),
    /// An instruction.
    Instr(Instr),
}

impl Item {
    /// The instruction, if this is one.
    pub fn instr(&self) -> Option<&Instr> {
        match self {
            Item::Instr(instr) => Some(instr),
            Item::Label(_) => None,
        }
    }

    /// The instruction, if this is one, to edit.
    pub fn instr_mut(&mut self) -> Option<&mut Instr> {
        match self {
            Item::Instr(instr) => Some(instr),
            Item::Label(_) => None,
        }
    }
}

/// A code object's instructions to edit and assemble.
#[derive(Clone, Debug)]
pub struct Body {
    /// The instructions in order, with the labels placed among them.
    pub items: Vec<Item>,
    /// The opcodes of the version that compiled the code.
    pub opcodes: &'static Opcodes,
    /// What gotopy knows of that version's bytecode beyond its opcode table.
    pub shapes: &'static Shapes,
    /// `co_firstlineno`, which the location table counts from.
    pub first_line: i32,
    next_label: u32,
    next_id: u32,
}

impl Body {
    /// An empty list for code of this version.
    pub fn new(shapes: &'static Shapes, first_line: i32) -> Body {
        Body {
            items: Vec::new(),
            opcodes: shapes.opcodes,
            shapes,
            first_line,
            next_label: 0,
            next_id: 0,
        }
    }

    /// A label not yet placed anywhere.
    pub fn new_label(&mut self) -> Label {
        self.next_label += 1;
        Label(self.next_label - 1)
    }

    /// A new instruction, inserted by gotopy, under no handler.
    pub fn new_instr(
        &mut self,
        op: u8,
        arg: u32,
        target: Option<Label>,
        position: Position,
    ) -> Instr {
        Instr {
            op,
            arg,
            target,
            handler: None,
            position,
            inserted: true,
            id: self.new_id(),
        }
    }

    /// A new instruction at `like`'s position and under its handler, inserted by gotopy.
    pub fn like(&mut self, like: &Instr, op: u8, arg: u32, target: Option<Label>) -> Instr {
        Instr {
            handler: like.handler,
            ..self.new_instr(op, arg, target, like.position)
        }
    }

    /// A fresh identity, for a copy of an instruction.
    pub fn new_id(&mut self) -> InstrId {
        self.next_id += 1;
        InstrId(self.next_id - 1)
    }

    /// Makes the next identity at least `count`: the decoder numbers its instructions.
    fn reserve_ids(&mut self, count: u32) {
        self.next_id = self.next_id.max(count);
    }

    /// The instructions in order, without the labels.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        self.items.iter().filter_map(Item::instr)
    }

    /// The index among the instructions of the one each placed label names (the number of
    /// instructions for a label placed after the last one).
    pub fn label_indices(&self) -> Indices<Label> {
        let mut at = Indices::new();
        let mut count = 0;
        for item in &self.items {
            match item {
                Item::Label(label) => {
                    at.insert(*label, count);
                }
                Item::Instr(_) => count += 1,
            }
        }
        at
    }

    /// The name of opcode `op`, for messages.
    pub fn name(&self, op: u8) -> &'static str {
        self.opcodes.name(op)
    }
}
