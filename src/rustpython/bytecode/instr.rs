//! The editable instruction list: [`Instr`]s and the [`Label`]s placed among them, held in a
//! [`Body`] with what assembling it needs from the code object it came from.
//!
//! A label is only an identity: where it is placed in the list is its position, and nothing
//! here knows an offset, an instruction's size or how a jump is encoded (the assembler does).

use rustpython_compiler::core::SourceLocation;
use rustpython_compiler::core::bytecode::Instruction;

use super::line_table::LineEntry;
pub use crate::symbolic::{Handler, Label};

/// Values keyed by the labels of one [`Body`]: a vector indexed by the label's number, as
/// [`Body::new_label`] numbers them densely from 0. The layout, the flow graph and the
/// stack analysis look a label up for every jump, and an index costs less than a hash.
#[derive(Clone, Debug)]
pub struct LabelMap<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for LabelMap<T> {
    fn default() -> Self {
        LabelMap { slots: Vec::new() }
    }
}

impl<T> LabelMap<T> {
    /// The value of `label`, if it has one.
    pub fn get(&self, label: Label) -> Option<&T> {
        self.slots.get(label.0 as usize)?.as_ref()
    }

    /// Gives `label` the value `value`, in place of any it had.
    pub fn insert(&mut self, label: Label, value: T) {
        let at = label.0 as usize;
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        self.slots[at] = Some(value);
    }

    /// Whether `label` has a value.
    pub fn contains(&self, label: Label) -> bool {
        self.get(label).is_some()
    }

    /// Forgets every value, keeping the room.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|slot| *slot = None);
    }

    /// The labels that have a value, in the order of their numbers, with their values.
    pub fn iter(&self) -> impl Iterator<Item = (Label, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(at, slot)| Some((Label(at as u32), slot.as_ref()?)))
    }

    /// The values, in the order of their labels' numbers.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }
}

/// One instruction with everything attached that assembling it needs.
#[derive(Clone, Debug)]
pub struct Instr {
    /// The opcode; its argument is in `arg`.
    pub op: Instruction,
    /// The full argument; for a jump it is recomputed from `target` when assembling.
    pub arg: u32,
    /// Where the instruction jumps to, for a jump.
    pub target: Option<Label>,
    /// The exception handler that covers the instruction, if any.
    pub handler: Option<Handler>,
    /// The source range of the instruction (`CodeObject::locations`).
    pub location: (SourceLocation, SourceLocation),
    /// Its line-table entry, which may differ from `location` (line 0, no location).
    pub line: LineEntry,
    /// Whether gotopy put it there (the verifier is stricter with those).
    pub inserted: bool,
}

impl Instr {
    /// Its argument as it stands before a layout: a jump's is a distance no layout has
    /// given yet, taken as 0 (where the layout starts its rounds, and a jump's stack effect
    /// does not depend on it).
    pub(super) fn unplaced_arg(&self) -> u32 {
        if self.target.is_some() { 0 } else { self.arg }
    }

    /// An instruction gotopy inserts, at the source location of `like`, under no handler
    /// (set one if it can raise).
    pub fn like(like: &Instr, op: Instruction, arg: u32, target: Option<Label>) -> Instr {
        Instr {
            op,
            arg,
            target,
            handler: None,
            location: like.location,
            line: like.line,
            inserted: true,
        }
    }

    /// A `NOP` at the location of `at` and under its handler: what stays of a label or case
    /// marker (or goes before a goto's cleanup at another line), as CPython keeps one for
    /// `pass`, so that reaching it is a line event for tracers, debuggers and coverage.
    pub fn line_event(at: &Instr) -> Instr {
        Instr {
            handler: at.handler,
            ..Instr::like(at, Instruction::Nop, 0, None)
        }
    }
}

/// An element of an instruction list.
#[derive(Clone, Debug)]
pub enum Item {
    /// Marks the position of the instruction that follows it.
    Label(Label),
    /// An instruction.
    Instr(Instr),
}

/// An editable instruction list.
#[derive(Clone, Debug)]
pub struct Body {
    /// The instructions in order, with the labels placed among them.
    pub(crate) items: Vec<Item>,
    pub(super) next_label: u32,
    /// `co_firstlineno`: the line the line table starts from.
    pub(super) first_line: i32,
    /// The compiler's `max_stackdepth`. It can exceed what the code needs (the compiler also
    /// counts handlers whose protected code it later removed), so an assembled code object
    /// never gets less than this.
    pub(super) compiled_depth: u32,
}

impl Body {
    /// A label not yet placed anywhere.
    pub fn new_label(&mut self) -> Label {
        self.next_label += 1;
        Label(self.next_label - 1)
    }

    /// The instructions in order, without the labels.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        self.items.iter().filter_map(|item| match item {
            Item::Instr(instr) => Some(instr),
            Item::Label(_) => None,
        })
    }
}
