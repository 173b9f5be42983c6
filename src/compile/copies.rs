//! Numbering the copies RustPython makes of a `finally` body, so that each goto pairs
//! with its label in the same copy. It walks the bytecode layer's control flow
//! ([`Flow::successors`]) and knows of the sites only where they are and their kind.

use std::collections::HashMap;

use super::{Site, SiteKind};
use crate::bytecode::{Body, EdgeKind, Flow, Label};

/// Numbers the copies the code generator made of each site (it compiles a `finally` body
/// once per way out of its `try`), so that copy k of a goto pairs with copy k of its label,
/// of a trampoline, of a switch's cases. Copies are ordered by [`copy_keys`], not by where
/// they sit: handler blocks are moved after everything else, so code order alone would mix
/// the copies of a handler inside a finally body with those of the code around it.
pub(super) fn number_copies(body: &Body, sites: &mut [Site]) {
    let flow = body.flow();
    let keys = copy_keys(&flow);
    // Sites start on instructions; a site that does not (none should) sorts first.
    let index_of_item: HashMap<usize, usize> = flow
        .items()
        .iter()
        .enumerate()
        .map(|(index, &at)| (at, index))
        .collect();
    let key = |site: &Site| {
        index_of_item
            .get(&site.at)
            .and_then(|&index| keys.get(index))
    };
    let mut by_kind: HashMap<SiteKind, Vec<usize>> = HashMap::new();
    for (index, site) in sites.iter().enumerate() {
        by_kind.entry(site.kind).or_default().push(index);
    }
    for indices in by_kind.values_mut() {
        indices.sort_by(|&a, &b| key(&sites[a]).cmp(&key(&sites[b])));
        for (copy, &index) in indices.iter().enumerate() {
            sites[index].copy = copy;
        }
    }
}

/// Who an instruction belongs to, for the order of the copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// Code reached without exceptions, or code that stands on its own at its position.
    Straight,
    /// The handler block that starts at this label.
    Handler(Label),
}

/// A handler, where its block starts, and the first instruction it protects.
#[derive(Clone, Copy, Debug)]
struct Protected {
    first: usize,
    label: Label,
    start: usize,
}

/// How deep handler blocks are followed out to the code they protect (a bound, in case of
/// a cycle through handlers).
const MAX_HANDLER_NESTING: usize = 64;

/// For each instruction, where it belongs in the order of the code as written: an instruction
/// reached without exceptions is at its own position; an instruction of a handler block
/// belongs just after the first instruction that handler protects (so the handler of a copy
/// sorts with that copy), then by its own position. Code that nothing reaches before the
/// rewrite (after a `return` that a label follows, or a case that only the switch's
/// dispatch will reach) belongs where the nearest reached instruction before it under the
/// same exception handler belongs (the statements before it in its block; not a handler
/// block of theirs that the code generator placed in between), and is walked from there
/// like reached code, so that its own handler blocks sort with it.
fn copy_keys(flow: &Flow) -> Vec<Vec<usize>> {
    let protected = protected(flow);
    let owner = owners(flow, &protected);
    let first_protected: HashMap<Label, usize> = protected
        .iter()
        .map(|handler| (handler.label, handler.first))
        .collect();
    (0..flow.len())
        .map(|at| {
            let mut key = vec![at];
            let mut current = at;
            // Follow handler blocks out to code reached without exceptions.
            for _ in 0..MAX_HANDLER_NESTING {
                let Some(Owner::Handler(label)) = owner[current] else {
                    break;
                };
                let Some(&first) = first_protected.get(&label) else {
                    break;
                };
                key.push(first);
                current = first;
            }
            key.reverse();
            key
        })
        .collect()
}

/// Each handler once, in the order of the first instruction it protects. A handler whose
/// label names no instruction has no block to order.
fn protected(flow: &Flow) -> Vec<Protected> {
    let mut found: Vec<Protected> = Vec::new();
    for first in 0..flow.len() {
        let Some(handler) = flow.instr(first).and_then(|instr| instr.handler) else {
            continue;
        };
        if found.iter().any(|known| known.label == handler.target) {
            continue;
        }
        if let Ok(start) = flow.index_of(handler.target) {
            found.push(Protected {
                first,
                label: handler.target,
                start,
            });
        }
    }
    found
}

/// The owner of every instruction (`None` for none only when there are no instructions).
fn owners(flow: &Flow, protected: &[Protected]) -> Vec<Option<Owner>> {
    let mut ownership = Ownership {
        flow,
        owner: vec![None; flow.len()],
    };
    if !flow.is_empty() {
        ownership.walk(0, Owner::Straight);
    }
    // Handlers of code already placed first, so that nested handler blocks find their owner;
    // then the first code nothing reached yet, as ordinary code, and again.
    let mut pending = protected.to_vec();
    // Everything before this is placed: walks only ever add owners.
    let mut placed = 0;
    loop {
        ownership.walk_handlers(&mut pending);
        let Some(unreached) = (placed..flow.len()).find(|&at| ownership.owner[at].is_none()) else {
            break;
        };
        placed = unreached;
        let mark = ownership.owner_before(unreached);
        ownership.walk(unreached, mark);
    }
    ownership.owner
}

/// Owners given so far, over a control-flow graph.
struct Ownership<'f, 'a> {
    flow: &'f Flow<'a>,
    owner: Vec<Option<Owner>>,
}

impl Ownership<'_, '_> {
    /// Gives `mark` to every instruction without an owner that is reached from `start`
    /// without exceptions and without passing an instruction that has one.
    fn walk(&mut self, start: usize, mark: Owner) {
        let mut work = vec![start];
        while let Some(at) = work.pop() {
            if self.owner[at].is_some() {
                continue;
            }
            self.owner[at] = Some(mark);
            let next = self.flow.successors(at).filter_map(Result::ok);
            work.extend(
                next.filter(|edge| !matches!(edge.kind, EdgeKind::Handler(_)))
                    .map(|edge| edge.to),
            );
        }
    }

    /// Walks the block of every pending handler whose first protected instruction has an
    /// owner, until none is left that has.
    fn walk_handlers(&mut self, pending: &mut Vec<Protected>) {
        loop {
            let before = pending.len();
            pending.retain(|handler| {
                if self.owner[handler.first].is_none() {
                    return true;
                }
                self.walk(handler.start, Owner::Handler(handler.label));
                false
            });
            if pending.len() == before {
                break;
            }
        }
    }

    /// The owner of unreached code at `unreached`: that of the nearest instruction before
    /// it under the same handler that has one. With none (a handler block whose protected
    /// code the code generator removed), it stands on its own, at its position.
    fn owner_before(&self, unreached: usize) -> Owner {
        let handler = self.flow.instr(unreached).map(|instr| instr.handler);
        (0..unreached)
            .rev()
            .find(|&at| {
                self.owner[at].is_some()
                    && self.flow.instr(at).map(|instr| instr.handler) == handler
            })
            .and_then(|at| self.owner[at])
            .unwrap_or(Owner::Straight)
    }
}
