//! From 3.12 CPython loads a local without checking that it is bound where its own flow
//! graph proves it is; a goto adds edges it never saw, so every such load is checked again
//! on the new graph and made `LOAD_FAST_CHECK` where the local may be unbound there (a crash
//! otherwise).

use super::LowerError;
use crate::cpython::bytecode::{Body, Flow, Instr, Item};
use crate::cpython::code::{Code, VARARGS, VARKEYWORDS};

/// What an instruction does to a local.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Load,
    Store,
    Delete,
}

/// A set of locals, as bits.
#[derive(Clone, PartialEq, Eq)]
struct Locals(Vec<u64>);

impl Locals {
    fn none(count: usize) -> Locals {
        Locals(vec![0; count.div_ceil(64)])
    }

    fn contains(&self, local: usize) -> bool {
        self.0
            .get(local / 64)
            .is_some_and(|word| word >> (local % 64) & 1 == 1)
    }

    fn set(&mut self, local: usize, value: bool) {
        if let Some(word) = self.0.get_mut(local / 64) {
            if value {
                *word |= 1 << (local % 64);
            } else {
                *word &= !(1 << (local % 64));
            }
        }
    }

    /// Adds `other`; whether anything changed.
    fn union(&mut self, other: &Locals) -> bool {
        let mut changed = false;
        for (word, more) in self.0.iter_mut().zip(&other.0) {
            let new = *word | more;
            changed |= new != *word;
            *word = new;
        }
        changed
    }
}

/// Makes every load of a local that may be unbound on the new flow graph checked.
pub(crate) fn check_local_loads(body: &mut Body, code: &Code) -> Result<(), LowerError> {
    let count = code.varnames;
    let mut arguments = (code.argcount + code.kwonlyargcount) as usize;
    arguments +=
        usize::from(code.flags & VARARGS != 0) + usize::from(code.flags & VARKEYWORDS != 0);
    let unbound = {
        let flow = Flow::new(body)?;
        let length = flow.len();
        // Where each local may be unbound.
        let mut unbound: Vec<Option<Locals>> = vec![None; length];
        if length > 0 {
            let mut entry = Locals::none(count);
            for local in arguments..count {
                entry.set(local, true);
            }
            unbound[0] = Some(entry);
        }
        let mut work = vec![0usize];
        let flow_into = |unbound: &mut Vec<Option<Locals>>,
                         work: &mut Vec<usize>,
                         index: usize,
                         state: &Locals| {
            match &mut unbound[index] {
                None => {
                    unbound[index] = Some(state.clone());
                    work.push(index);
                }
                Some(old) => {
                    if old.union(state) {
                        work.push(index);
                    }
                }
            }
        };
        while let Some(index) = work.pop() {
            let Some(state) = unbound.get(index).cloned().flatten() else {
                continue;
            };
            if let Some((_, start)) = flow.handler(index)
                && start < length
            {
                flow_into(&mut unbound, &mut work, start, &state);
            }
            let after = transfer(body, flow.instrs[index], state, count);
            for (to, _) in flow.successors(index).into_iter().flatten() {
                if to < length {
                    flow_into(&mut unbound, &mut work, to, &after);
                }
            }
        }
        unbound
    };
    let load_fast_check = body.shapes.op("LOAD_FAST_CHECK");
    let store_fast = body.shapes.op("STORE_FAST");
    let (Some(load_fast_check), Some(store_fast)) = (load_fast_check, store_fast) else {
        return Ok(());
    };
    let items = std::mem::take(&mut body.items);
    let mut new_items = Vec::with_capacity(items.len());
    let mut index = 0;
    for item in items {
        let Item::Instr(instr) = item else {
            new_items.push(item);
            continue;
        };
        let state = unbound[index]
            .clone()
            .unwrap_or_else(|| Locals::none(count));
        index += 1;
        let actions = locals(body, &instr);
        let risky = !body.shapes.is(instr.op, "LOAD_FAST_CHECK")
            && actions.iter().any(|&(action, local)| {
                action == Action::Load && local < count && state.contains(local)
            });
        if !risky {
            new_items.push(Item::Instr(instr));
            continue;
        }
        for (action, local) in actions {
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

/// What an instruction does to which locals, in order.
fn locals(body: &Body, instr: &Instr) -> Vec<(Action, usize)> {
    let arg = instr.arg as usize;
    match body.name(instr.op) {
        "LOAD_FAST" | "LOAD_FAST_CHECK" | "LOAD_FAST_BORROW" => vec![(Action::Load, arg)],
        "LOAD_FAST_LOAD_FAST" | "LOAD_FAST_BORROW_LOAD_FAST_BORROW" => {
            vec![(Action::Load, arg >> 4), (Action::Load, arg & 15)]
        }
        "STORE_FAST" => vec![(Action::Store, arg)],
        "STORE_FAST_STORE_FAST" => vec![(Action::Store, arg >> 4), (Action::Store, arg & 15)],
        "STORE_FAST_LOAD_FAST" => vec![(Action::Store, arg >> 4), (Action::Load, arg & 15)],
        "DELETE_FAST" | "LOAD_FAST_AND_CLEAR" => vec![(Action::Delete, arg)],
        _ => Vec::new(),
    }
}

/// The locals that may be unbound after `instr`, from those before it.
fn transfer(body: &Body, instr: &Instr, mut state: Locals, count: usize) -> Locals {
    for (action, local) in locals(body, instr) {
        if local >= count {
            continue;
        }
        match action {
            Action::Store => state.set(local, false),
            Action::Delete => state.set(local, true),
            Action::Load => {}
        }
    }
    state
}
