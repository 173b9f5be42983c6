//! Control flow: the instructions of a [`Body`] with their labels resolved to instruction
//! indices, and where execution can go after each ([`Flow::successors`], the one place
//! of this backend that decides it). The depth check, the pairing of `finally` copies, the
//! check of local loads and the rewrite without source all walk these edges.
//!
//! It works on indices and labels only: no offsets, no stack depths.

use super::{Body, BytecodeError, Handler, Indices, Instr, Item, Label};

/// The instructions of a [`Body`], labels resolved.
pub struct Flow<'a> {
    /// The instructions, in order.
    pub instrs: Vec<&'a Instr>,
    /// The index each placed label names (the number of instructions, for one placed after
    /// the last).
    labels: Indices<Label>,
    body: &'a Body,
}

impl<'a> Flow<'a> {
    /// The flow of `body`; every label a jump or handler names must be placed.
    pub fn new(body: &'a Body) -> Result<Flow<'a>, BytecodeError> {
        let mut flow = Flow {
            instrs: Vec::with_capacity(body.items.len()),
            labels: Indices::new(),
            body,
        };
        for item in &body.items {
            match item {
                Item::Label(label) => flow.labels.insert(*label, flow.instrs.len()),
                Item::Instr(instr) => flow.instrs.push(instr),
            }
        }
        for instr in &flow.instrs {
            let named = [instr.target, instr.handler.map(|h| h.target)];
            if named
                .into_iter()
                .flatten()
                .any(|label| flow.index_of(label).is_none())
            {
                return Err(BytecodeError::new(format!(
                    "{} names a label that is not placed",
                    body.name(instr.op)
                )));
            }
        }
        Ok(flow)
    }

    /// The number of instructions.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The index of the instruction a placed label names (the number of instructions for a
    /// label placed after the last one).
    pub fn index_of(&self, label: Label) -> Option<usize> {
        self.labels.get(label)
    }

    /// The index each placed label names.
    pub fn labels(&self) -> &Indices<Label> {
        &self.labels
    }

    /// The index of the instruction `instr`'s jump names.
    pub fn target(&self, index: usize) -> Option<usize> {
        self.instrs[index]
            .target
            .and_then(|label| self.index_of(label))
    }

    /// The handler of instruction `index` and the index where its code starts.
    pub fn handler(&self, index: usize) -> Option<(Handler, usize)> {
        let handler = self.instrs[index].handler?;
        Some((handler, self.index_of(handler.target)?))
    }

    /// Where control goes after instruction `index`, handlers not included: its jump target
    /// (`true`: the jump is taken), then the next instruction (`false`) unless it returns,
    /// raises or jumps unconditionally. The next index may be the number of instructions:
    /// code that falls off the end. `END_ASYNC_FOR`'s target (3.14+) is no edge: it only
    /// says where its loop is.
    pub fn successors(&self, index: usize) -> [Option<(usize, bool)>; 2] {
        let instr = self.instrs[index];
        let shapes = self.body.shapes;
        let jump = if shapes.is_control(instr.op) {
            self.target(index).map(|to| (to, true))
        } else {
            None
        };
        let next = shapes.goes_on(instr.op).then_some((index + 1, false));
        [jump, next]
    }

    /// The order of the copies CPython made of each `finally` body (the shared
    /// `copies::CopyKeys`).
    pub fn copy_keys(&self) -> crate::copies::CopyKeys<Label> {
        crate::copies::CopyKeys::new(self)
    }

    /// The body this is the flow of.
    pub fn body(&self) -> &'a Body {
        self.body
    }
}

impl crate::copies::Graph for Flow<'_> {
    type Handler = Label;

    fn len(&self) -> usize {
        self.instrs.len()
    }

    fn handler(&self, index: usize) -> Option<(Label, Option<usize>)> {
        let handler = self.instrs[index].handler?;
        let start = self
            .index_of(handler.target)
            .filter(|&start| start < self.instrs.len());
        Some((handler.target, start))
    }

    /// CPython moves every handler block after all other code, keeping their order: the
    /// reached instruction nearest before dead code is of its own block.
    fn belongs_with(&self, _before: usize, _unreached: usize) -> bool {
        true
    }

    fn successors(&self, index: usize) -> impl Iterator<Item = usize> {
        let count = self.instrs.len();
        Flow::successors(self, index)
            .into_iter()
            .flatten()
            .map(|(to, _)| to)
            .filter(move |&to| to < count)
    }
}
