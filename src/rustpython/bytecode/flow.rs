//! Control flow: where execution can go after each instruction of a [`Body`]
//! ([`Flow::successors`], the one place that decides it) and the basic blocks those edges
//! cut the list into ([`Flow::block_starts`]). The verifier, the copy numbering of the
//! compile path, the run-time rewrite's stack-owner analysis and the DOT graph all walk
//! these edges.
//!
//! It works on instruction indices and labels only: no offsets, and no stack depths. A
//! handler edge carries its [`Handler`]; whether a given stack reaches it is
//! [`Handler::reached_at`], decided by the analysis that knows the depth.

use std::collections::BTreeSet;

use rustpython_compiler::core::bytecode::{Instruction, InstructionMetadata};

use super::{Body, BytecodeError, Handler, Instr, Item, Label, LabelMap};

/// How control gets from an instruction to a successor, and with which stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// On to the next instruction, with the stack the instruction leaves.
    FallThrough,
    /// To the instruction's jump target, with the stack the instruction leaves.
    Jump,
    /// To the jump target with the stack as the instruction found it: `SEND` jumps to its
    /// `END_SEND` with the receiver and the value still in their slots.
    JumpKeepingStack,
    /// To the exception handler that covers the instruction, if it raises: the stack is cut
    /// to the handler's depth and the handler pushes what it receives.
    Handler(Handler),
}

/// An edge of the control-flow graph, from an instruction to the instruction at index `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The index (among the instructions, labels not counted) of the successor.
    pub to: usize,
    /// How control gets there.
    pub kind: EdgeKind,
}

impl Edge {
    /// Whether this is the edge of a jump (taken or not, as opposed to going on or raising).
    pub fn is_jump(&self) -> bool {
        matches!(self.kind, EdgeKind::Jump | EdgeKind::JumpKeepingStack)
    }
}

/// The instructions of a [`Body`] with their labels resolved to instruction indices, to
/// walk the control-flow graph.
pub struct Flow<'a> {
    instrs: Vec<&'a Instr>,
    /// The position in the body's items of each instruction.
    items: Vec<usize>,
    /// The index of the instruction each placed label names (the number of instructions,
    /// for a label placed after the last one).
    labels: LabelMap<usize>,
}

impl Body {
    /// The control-flow graph of the list as it is now.
    pub fn flow(&self) -> Flow<'_> {
        let mut flow = Flow {
            instrs: Vec::with_capacity(self.items.len()),
            items: Vec::with_capacity(self.items.len()),
            labels: LabelMap::default(),
        };
        for (at, item) in self.items.iter().enumerate() {
            match item {
                Item::Label(label) => {
                    flow.labels.insert(*label, flow.instrs.len());
                }
                Item::Instr(instr) => {
                    flow.instrs.push(instr);
                    flow.items.push(at);
                }
            }
        }
        flow
    }
}

/// Whether execution can go on to the next instruction after `op`.
fn goes_on(op: Instruction) -> bool {
    !(op.is_scope_exit() || op.is_unconditional_jump())
}

impl<'a> Flow<'a> {
    /// The number of instructions.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// Whether there are no instructions.
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The instruction at `index`.
    pub fn instr(&self, index: usize) -> Option<&'a Instr> {
        self.instrs.get(index).copied()
    }

    /// Every placed label with the index of the instruction it names (the number of
    /// instructions, for a label placed after the last one).
    pub fn labels(&self) -> impl Iterator<Item = (Label, &usize)> {
        self.labels.iter()
    }

    /// The position in the body's items of each instruction, by index.
    pub fn items(&self) -> &[usize] {
        &self.items
    }

    /// The index of the instruction `label` names.
    pub fn index_of(&self, label: Label) -> Result<usize, BytecodeError> {
        match self.labels.get(label) {
            None => Err(BytecodeError::UnplacedLabel(label)),
            Some(&index) if index < self.instrs.len() => Ok(index),
            Some(_) => Err(BytecodeError::NotOnInstruction(label)),
        }
    }

    /// Where execution can go from the instruction at `index`: first to its exception
    /// handler, if one covers it (whatever the stack: see [`Handler::reached_at`]), then to
    /// its jump target, then on to the next instruction unless it returns, raises or jumps
    /// unconditionally. `END_ASYNC_FOR`'s target is no edge: it only tells the VM where its
    /// loop's `SEND` is. An edge to a label that names no instruction is an error.
    pub fn successors(&self, index: usize) -> impl Iterator<Item = Result<Edge, BytecodeError>> {
        let instr = self.instrs.get(index);
        let edge = |label: Label, kind: EdgeKind| self.index_of(label).map(|to| Edge { to, kind });
        let handler = instr
            .and_then(|instr| instr.handler)
            .map(|handler| edge(handler.target, EdgeKind::Handler(handler)));
        let jump = instr
            .filter(|instr| !matches!(instr.op, Instruction::EndAsyncFor))
            .and_then(|instr| {
                let kind = match instr.op {
                    Instruction::Send { .. } => EdgeKind::JumpKeepingStack,
                    _ => EdgeKind::Jump,
                };
                Some(edge(instr.target?, kind))
            });
        let next = instr
            .filter(|instr| goes_on(instr.op) && index + 1 < self.instrs.len())
            .map(|_| {
                Ok(Edge {
                    to: index + 1,
                    kind: EdgeKind::FallThrough,
                })
            });
        handler.into_iter().chain(jump).chain(next)
    }

    /// The instructions that start a basic block: the first; every target of a jump or
    /// handler; every instruction after one that jumps or does not go on.
    pub fn block_starts(&self) -> Result<BTreeSet<usize>, BytecodeError> {
        let mut starts = BTreeSet::new();
        if !self.is_empty() {
            starts.insert(0);
        }
        for index in 0..self.len() {
            let edges = self.successors(index).collect::<Result<Vec<Edge>, _>>()?;
            let branches = edges
                .iter()
                .filter(|edge| edge.kind != EdgeKind::FallThrough);
            starts.extend(branches.map(|edge| edge.to));
            let goes_on = edges.iter().any(|edge| edge.kind == EdgeKind::FallThrough);
            if (edges.iter().any(Edge::is_jump) || !goes_on) && index + 1 < self.len() {
                starts.insert(index + 1);
            }
        }
        Ok(starts)
    }
}

#[cfg(test)]
mod tests {
    use rustpython_compiler::core::bytecode::Instruction;
    use rustpython_compiler::{CompileOpts, Mode, compile};

    use super::{Edge, EdgeKind, Flow};
    use crate::rustpython::bytecode::{Body, code_objects};

    const SNIPPET: &str = "\
def f(x):
    while x:
        x -= 1
    try:
        g()
    except E:
        pass
    return x

async def h(xs):
    async for x in xs:
        pass
";

    /// The body of the function `name` in [`SNIPPET`].
    fn body_of(name: &str) -> Body {
        let code = compile(SNIPPET, Mode::Exec, "<test>", CompileOpts::default()).unwrap();
        let function = code_objects(&code)
            .into_iter()
            .find(|code| code.qualname.as_str() == name)
            .unwrap();
        Body::decode(function).unwrap()
    }

    fn edges(flow: &Flow, index: usize) -> Vec<Edge> {
        flow.successors(index).map(Result::unwrap).collect()
    }

    /// The index of the first instruction that `is` picks out.
    fn find(flow: &Flow, is: impl Fn(Instruction) -> bool) -> usize {
        (0..flow.len())
            .find(|&index| is(flow.instr(index).unwrap().op))
            .unwrap()
    }

    #[test]
    fn jumps_go_on_where_they_may_and_handlers_are_edges() {
        let body = body_of("f");
        let flow = body.flow();
        let test = find(&flow, |op| matches!(op, Instruction::PopJumpIfFalse { .. }));
        let kinds: Vec<EdgeKind> = edges(&flow, test).iter().map(|edge| edge.kind).collect();
        assert_eq!(kinds, [EdgeKind::Jump, EdgeKind::FallThrough]);
        assert_eq!(edges(&flow, test)[1].to, test + 1);
        let back = find(&flow, |op| matches!(op, Instruction::JumpBackward { .. }));
        match edges(&flow, back)[..] {
            [
                Edge {
                    to,
                    kind: EdgeKind::Jump,
                },
            ] => assert!(to < back),
            ref other => panic!("JUMP_BACKWARD: {other:?}"),
        }
        let call = find(&flow, |op| matches!(op, Instruction::Call { .. }));
        let handler = edges(&flow, call)[0];
        assert!(matches!(handler.kind, EdgeKind::Handler(_)), "{handler:?}");
        let caught = flow.instr(handler.to).unwrap().op;
        assert!(matches!(caught, Instruction::PushExcInfo), "{caught:?}");
        let ret = find(&flow, |op| matches!(op, Instruction::ReturnValue));
        assert_eq!(edges(&flow, ret), []);
        assert!(flow.block_starts().unwrap().contains(&handler.to));
    }

    #[test]
    fn send_keeps_its_stack_and_end_async_for_names_no_edge() {
        let body = body_of("h");
        let flow = body.flow();
        let send = find(&flow, |op| matches!(op, Instruction::Send { .. }));
        let exit = edges(&flow, send).into_iter().find(Edge::is_jump).unwrap();
        assert_eq!(exit.kind, EdgeKind::JumpKeepingStack);
        let end_send = flow.instr(exit.to).unwrap().op;
        assert!(matches!(end_send, Instruction::EndSend), "{end_send:?}");
        let end = find(&flow, |op| matches!(op, Instruction::EndAsyncFor));
        assert!(flow.instr(end).unwrap().target.is_some());
        assert!(!edges(&flow, end).iter().any(Edge::is_jump));
    }
}
