//! The searches switches and computed gotos become: the balanced binary search of
//! comparisons ([`Search`]), the one search the computed gotos of one place share
//! ([`SharedSearch`]), the handlers whose depth is known only once the code object is
//! complete ([`set_search_depths`]), and the instructions a search ends in.

use std::collections::HashMap;

use rustpython_compiler::core::bytecode::{Arg, ComparisonOperator, Instruction, RaiseKind};

use super::jump_op;
use crate::front::scan::MarkerId;
use crate::rustpython::bytecode::{Body, BytecodeError, Handler, Instr, Item, Label, LabelMap};
use crate::search::{Step, balanced};

/// A handler whose depth is the stack depth at `start` less `below`.
pub(super) struct UnknownDepth {
    pub(super) handler: Label,
    pub(super) start: Label,
    pub(super) below: u32,
}

/// `ValueError` called with the message over it (the two under the message), and the error
/// raised.
pub(super) fn called_and_raised() -> [(Instruction, u32); 2] {
    const ONE_ARGUMENT: u32 = 1;
    [
        (
            Instruction::Call {
                argc: Arg::marker(),
            },
            ONE_ARGUMENT,
        ),
        (
            Instruction::RaiseVarargs {
                argc: Arg::marker(),
            },
            u32::from(RaiseKind::Raise),
        ),
    ]
}

/// An inserted instruction at `site`'s location under `site`'s handler.
pub(super) fn outer(site: &Instr, op: Instruction, arg: u32, target: Option<Label>) -> Instr {
    let mut instr = Instr::like(site, op, arg, target);
    instr.handler = site.handler;
    instr
}

/// Gives each search handler its depth, from the stack depth where its search starts in
/// the finished code. Those handlers are left out of that analysis: they only lead to where
/// the search goes anyway, so no depth depends on them. A search that no code reaches never
/// runs; its handlers keep depth 0 and the verifier, which checks reachable code, skips them.
pub(super) fn set_search_depths(
    body: &mut Body,
    unknown: &[UnknownDepth],
) -> Result<(), BytecodeError> {
    if unknown.is_empty() {
        return Ok(());
    }
    let mut handlers = LabelMap::default();
    for u in unknown {
        handlers.insert(u.handler, ());
    }
    let at_labels = body.depths_at_labels(&handlers)?;
    let mut depths = LabelMap::default();
    for u in unknown {
        if let Some(&depth) = at_labels.get(u.start) {
            let depth = depth
                .checked_sub(u.below)
                .ok_or(BytecodeError::StackDepth {
                    at: 0,
                    message: format!("a search starts with {depth} values on the stack"),
                })?;
            depths.insert(u.handler, depth);
        }
    }
    for item in &mut body.items {
        if let Item::Instr(Instr {
            handler: Some(handler),
            ..
        }) = item
            && let Some(&depth) = depths.get(handler.target)
        {
            handler.depth = depth;
        }
    }
    Ok(())
}

/// A balanced binary search for the value on top of the stack among `keys` (constant
/// index, where to go when equal), sorted as Python orders them, in the shape
/// [`crate::search`] gives both backends: one `<` per level, one `==` at a leaf, so at most
/// ceil(log2(n)) + 1 comparisons. The `<` comparisons copy the value, under `guard`; the
/// jumps all go forward.
pub(super) struct Search<'s> {
    pub(super) site: &'s Instr,
    /// Handler of the comparisons made while the value stays on the stack (none where they
    /// cannot raise: the numbers of shared searches).
    pub(super) guard: Option<Handler>,
    /// Where no match goes, the value still on the stack.
    pub(super) miss: Label,
    /// For a switch, the leaf's `==` takes the value off the stack: a match jumps straight
    /// to its case, no match to the end (the default), and the comparison is under this
    /// handler, whose depth is without the value.
    pub(super) consume: Option<(Label, Handler)>,
    /// How deep the value is: [`TOP`], or under a shared search's number.
    pub(super) slot: u32,
}

/// The value a search compares is on top of the stack.
pub(super) const TOP: u32 = 1;

/// The one search of the computed gotos of one place, in the code of the last of them: each
/// other one pushes its number over the value and jumps forward to it (a forward jump is
/// never interrupted, so never taken for a failed comparison by the guard it lands under).
pub(super) struct SharedSearch {
    /// Where the search starts.
    pub(super) entry: Label,
    /// Each goto's marker and the instruction whose location and handler its dispatch
    /// takes, in the order of the code: the k-th pushes k.
    pub(super) gotos: Vec<(MarkerId, Instr)>,
    /// Where each one's error is raised, in that order.
    pub(super) raises: Vec<Label>,
}

impl Search<'_> {
    pub(super) fn emit(&self, keys: &[(u32, Label)], body: &mut Body, out: &mut Vec<Item>) {
        let instr = |op: Instruction, arg: u32, target: Option<Label>, handler: Option<Handler>| {
            let mut instr = Instr::like(self.site, op, arg, target);
            instr.handler = handler.or(self.site.handler);
            Item::Instr(instr)
        };
        let load = |constant: u32, handler: Option<Handler>| {
            let op = Instruction::LoadConst {
                consti: Arg::marker(),
            };
            instr(op, constant, None, handler)
        };
        let compare = |how: ComparisonOperator, handler: Option<Handler>| {
            let op = Instruction::CompareOp {
                opname: Arg::marker(),
            };
            instr(op, u32::from(how), None, handler)
        };
        let jump_if_true = |to: Label, handler: Option<Handler>| {
            let op = Instruction::PopJumpIfTrue {
                delta: Arg::marker(),
            };
            instr(op, 0, Some(to), handler)
        };
        let copy = instr(
            Instruction::Copy { i: Arg::marker() },
            self.slot,
            None,
            self.guard,
        );
        let mut places = HashMap::new();
        for step in balanced(keys.len()) {
            match (step, self.consume) {
                (Step::Nothing, _) => out.push(instr(jump_op(), 0, Some(self.miss), self.guard)),
                (Step::Equal(key), Some((end, handler))) => {
                    let handler = Some(handler);
                    out.extend([
                        load(keys[key].0, handler),
                        compare(ComparisonOperator::Equal, handler),
                        jump_if_true(keys[key].1, handler),
                        instr(jump_op(), 0, Some(end), handler),
                    ]);
                }
                (Step::Equal(key), None) => out.extend([
                    copy.clone(),
                    load(keys[key].0, self.guard),
                    compare(ComparisonOperator::Equal, self.guard),
                    jump_if_true(keys[key].1, self.guard),
                    instr(jump_op(), 0, Some(self.miss), self.guard),
                ]),
                (Step::Less { pivot, below }, _) => {
                    let label = body.new_label();
                    places.insert(below, label);
                    out.extend([
                        copy.clone(),
                        load(keys[pivot].0, self.guard),
                        compare(ComparisonOperator::Less, self.guard),
                        jump_if_true(label, self.guard),
                    ]);
                }
                (Step::Below(place), _) => out.push(Item::Label(places[&place])),
            }
        }
    }
}
