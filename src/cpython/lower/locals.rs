//! From 3.12 CPython loads a local without checking that it is bound where its own flow
//! graph proves it is; a goto adds edges it never saw, so every such load is checked again
//! on the new graph and made `LOAD_FAST_CHECK` where the local may be unbound there (a crash
//! otherwise).

use super::LowerError;
use crate::cpython::bytecode::{Body, Flow, Item};
use crate::cpython::code::{Code, VARARGS, VARKEYWORDS};
use crate::locals::{Action, LocalFlow, actions_of, maybe_unbound};

/// The rewritten code object as the analysis sees it.
struct Graph<'a> {
    body: &'a Body,
    flow: Flow<'a>,
}

impl LocalFlow for Graph<'_> {
    fn len(&self) -> usize {
        self.flow.len()
    }

    fn actions(&self, index: usize) -> impl Iterator<Item = (Action, usize)> {
        let instr = self.flow.instrs[index];
        actions_of(self.body.name(instr.op), instr.arg).into_iter()
    }

    fn handler(&self, index: usize) -> Option<usize> {
        self.flow.handler(index).map(|(_, start)| start)
    }

    fn successors(&self, index: usize) -> impl Iterator<Item = usize> {
        self.flow
            .successors(index)
            .into_iter()
            .flatten()
            .map(|(to, _)| to)
    }
}

/// Makes every load of a local that may be unbound on the new flow graph checked.
pub(crate) fn check_local_loads(body: &mut Body, code: &Code) -> Result<(), LowerError> {
    let count = code.varnames;
    let mut arguments = (code.argcount + code.kwonlyargcount) as usize;
    arguments +=
        usize::from(code.flags & VARARGS != 0) + usize::from(code.flags & VARKEYWORDS != 0);
    let unbound = maybe_unbound(
        &Graph {
            body,
            flow: Flow::new(body)?,
        },
        count,
        arguments,
    );
    let load_fast_check = body.shapes.op("LOAD_FAST_CHECK");
    let store_fast = body.shapes.op("STORE_FAST");
    let (Some(load_fast_check), Some(store_fast)) = (load_fast_check, store_fast) else {
        return Ok(());
    };
    // The instructions whose loads may find their local unbound, by their place in the list:
    // most code has none, and then the list stays as it is.
    let mut risky = Vec::new();
    let mut index = 0;
    for (at, item) in body.items.iter().enumerate() {
        let Item::Instr(instr) = item else {
            continue;
        };
        // Code that nothing reaches has no state: no local is unbound there.
        if !body.shapes.is(instr.op, "LOAD_FAST_CHECK")
            && actions_of(body.name(instr.op), instr.arg)
                .into_iter()
                .any(|(action, local)| {
                    action == Action::Load
                        && local < count
                        && unbound.before(index, local) == Some(true)
                })
        {
            risky.push(at);
        }
        index += 1;
    }
    if risky.is_empty() {
        return Ok(());
    }
    let items = std::mem::take(&mut body.items);
    let mut new_items = Vec::with_capacity(items.len() + risky.len());
    let mut risky = risky.into_iter().peekable();
    for (at, item) in items.into_iter().enumerate() {
        let Item::Instr(instr) = item else {
            new_items.push(item);
            continue;
        };
        if risky.next_if_eq(&at).is_none() {
            new_items.push(Item::Instr(instr));
            continue;
        }
        for (action, local) in actions_of(body.name(instr.op), instr.arg) {
            let op = if action == Action::Load {
                load_fast_check
            } else {
                store_fast
            };
            let mut piece = body.new_instr(op, local as u32, None, instr.position);
            piece.handler = instr.handler;
            new_items.push(Item::Instr(piece));
        }
    }
    body.items = new_items;
    Ok(())
}
