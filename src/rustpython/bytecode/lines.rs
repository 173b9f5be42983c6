//! Line events that need no instruction of their own. RustPython reports a line when an
//! instruction of another line than the last one runs, so gotopy marks where a label or a
//! case is reached, and where a goto's line comes before its cleanup, with a `NOP` of that
//! line ([`Instr::line_event`]). When the instruction after such a `NOP` cannot raise and
//! the one after it is of its line, that instruction can carry the `NOP`'s line instead:
//! tracers, debuggers and coverage see the same lines in the same order, and one
//! instruction fewer runs each time (about 3% of a tight goto loop).
//!
//! "Cannot raise" is strict: a constant, or a load of locals bound on every path there
//! ([`maybe_unbound`] on the rewritten graph), so no traceback ever names the marker's line
//! for an error of the statement after it. What changes is where that statement's line
//! starts: assigning its line to `frame.f_lineno` finds its second instruction, with a
//! stack that does not match, and raises `ValueError`, where it jumped before.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{CodeFlags, Instruction};

use super::listing::opname;
use super::{Body, EdgeKind, Flow, Instr, Item};
use crate::locals::{Action, Actions, LocalFlow, Unbound, actions_of, maybe_unbound};

/// The code object as the analysis of its locals sees it: its flow graph.
struct Graph<'a> {
    flow: Flow<'a>,
}

impl LocalFlow for Graph<'_> {
    fn len(&self) -> usize {
        self.flow.len()
    }

    fn actions(&self, index: usize) -> impl Iterator<Item = (Action, usize)> {
        self.flow
            .instr(index)
            .map(actions)
            .unwrap_or_default()
            .into_iter()
    }

    fn handler(&self, index: usize) -> Option<usize> {
        let handler = self.flow.instr(index)?.handler?;
        self.flow.index_of(handler.target).ok()
    }

    fn successors(&self, index: usize) -> impl Iterator<Item = usize> {
        self.flow
            .successors(index)
            .filter_map(Result::ok)
            .filter(|edge| !matches!(edge.kind, EdgeKind::Handler(_)))
            .map(|edge| edge.to)
    }
}

/// What `instr` does to which locals. The opcodes are named here rather than through
/// `dis`'s name of every instruction, which the analysis asks of each one (a tenth of the
/// rewrite of a large function went to formatting those names).
fn actions(instr: &Instr) -> Actions {
    let name = match instr.op {
        Instruction::LoadFast { .. } => "LOAD_FAST",
        Instruction::LoadFastCheck { .. } => "LOAD_FAST_CHECK",
        Instruction::LoadFastBorrow { .. } => "LOAD_FAST_BORROW",
        Instruction::LoadFastLoadFast { .. } => "LOAD_FAST_LOAD_FAST",
        Instruction::LoadFastBorrowLoadFastBorrow { .. } => "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
        Instruction::StoreFast { .. } => "STORE_FAST",
        Instruction::StoreFastStoreFast { .. } => "STORE_FAST_STORE_FAST",
        Instruction::StoreFastLoadFast { .. } => "STORE_FAST_LOAD_FAST",
        Instruction::DeleteFast { .. } => "DELETE_FAST",
        Instruction::LoadFastAndClear { .. } => "LOAD_FAST_AND_CLEAR",
        _ => return Actions::default(),
    };
    debug_assert_eq!(name, opname(instr.op));
    actions_of(name, instr.arg)
}

impl Body {
    /// Moves the line of every line-event `NOP` gotopy inserted onto the instruction after
    /// it, and drops the `NOP`, where that instruction cannot raise, is reached only from
    /// the `NOP` (no label between them) and the instruction after it is of its line.
    pub(crate) fn fold_line_events(&mut self, code: &CodeObject) {
        let unbound = self.unbound_locals(code);
        // In place: the items kept move to the front (a function of 64,000 blocks has
        // millions of items, and a new list of them costs its pages).
        let items = &mut self.items;
        let mut kept = 0;
        let mut index = 0; // the instruction's, labels not counted
        let mut at = 0;
        while at < items.len() {
            if let (Item::Instr(nop), Some(Item::Instr(next))) = (&items[at], items.get(at + 1))
                && nop.inserted
                && matches!(nop.op, Instruction::Nop)
                && next.line.line != nop.line.line
                && cannot_raise(next, &unbound, index + 1)
                && line_after(&items[at + 2..]) == Some(next.line.line)
            {
                items[kept] = Item::Instr(Instr {
                    location: nop.location,
                    line: nop.line,
                    ..next.clone()
                });
                kept += 1;
                index += 2;
                at += 2;
                continue;
            }
            index += usize::from(matches!(items[at], Item::Instr(_)));
            items.swap(kept, at);
            kept += 1;
            at += 1;
        }
        items.truncate(kept);
    }

    /// The locals that may be unbound before each instruction, with every local a
    /// comprehension saves and clears counted unbound everywhere (its restore stores back
    /// what was there, bound or not).
    fn unbound_locals(&self, code: &CodeObject) -> Unbound {
        let count = code.varnames.len();
        let arguments = (code.arg_count + code.kwonlyarg_count) as usize
            + usize::from(code.flags.contains(CodeFlags::VARARGS))
            + usize::from(code.flags.contains(CodeFlags::VARKEYWORDS));
        let graph = Graph { flow: self.flow() };
        let mut unbound = maybe_unbound(&graph, count, arguments);
        for instr in self.instrs() {
            if matches!(instr.op, Instruction::LoadFastAndClear { .. }) {
                unbound.count_unbound_everywhere(instr.arg as usize);
            }
        }
        unbound
    }
}

/// The line of the first instruction in `items`.
fn line_after(items: &[Item]) -> Option<i32> {
    items.iter().find_map(|item| match item {
        Item::Instr(instr) => Some(instr.line.line),
        Item::Label(_) => None,
    })
}

/// Whether `instr`, run as instruction `index` with the locals `unbound` says, never raises
/// (one that nothing reaches may).
fn cannot_raise(instr: &Instr, unbound: &Unbound, index: usize) -> bool {
    match instr.op {
        Instruction::LoadConst { .. } | Instruction::LoadSmallInt { .. } => true,
        Instruction::LoadFast { .. }
        | Instruction::LoadFastBorrow { .. }
        | Instruction::LoadFastCheck { .. }
        | Instruction::LoadFastLoadFast { .. }
        | Instruction::LoadFastBorrowLoadFastBorrow { .. } => {
            unbound.reached(index)
                && (actions(instr).into_iter())
                    .all(|(_, local)| unbound.before(index, local) == Some(false))
        }
        _ => false,
    }
}
