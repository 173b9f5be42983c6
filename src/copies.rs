//! The order of the copies a compiler makes of a `finally` body, for both backends: RustPython
//! and CPython compile the body once per way out of its `try`, and move handler blocks after
//! everything else, so code order alone mixes the copies of a handler inside a `finally` body
//! with those of the code around it. [`CopyKeys`] gives every instruction a key that orders
//! the copies as the code is written: copy k of a goto then pairs with copy k of its label.
//!
//! It sees a code object only as a [`Graph`]: instructions by index, the edges between them
//! and the handler that covers each; nothing of either interpreter's instructions.

use std::collections::{HashMap, HashSet};

/// A control-flow graph, as the copy order needs it.
pub trait Graph {
    /// The identity of an exception handler (an entry of the table, by its target).
    type Handler: Copy + Eq + std::hash::Hash;

    /// The number of instructions.
    fn len(&self) -> usize;

    /// The handler that covers instruction `index` (its identity: its target) and the
    /// instruction its code starts at (`None` when its label names none).
    fn handler(&self, index: usize) -> Option<(Self::Handler, Option<usize>)>;

    /// Whether code that nothing reaches before the rewrite, at `unreached`, belongs where
    /// the reached instruction `before` it belongs: the compiler's layout decides which
    /// instructions before dead code are of its own block.
    fn belongs_with(&self, before: usize, unreached: usize) -> bool;

    /// Where execution goes from instruction `index` without raising: its jump target and
    /// the next instruction, as far as each exists.
    fn successors(&self, index: usize) -> impl Iterator<Item = usize>;
}

/// Who an instruction belongs to, for the order of the copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner<H> {
    /// Code reached without exceptions, or code that stands on its own at its position.
    Straight,
    /// The handler block of this handler.
    Handler(H),
}

/// A handler, where its block starts, and the first instruction it protects.
#[derive(Clone, Copy, Debug)]
struct Protected<H> {
    first: usize,
    handler: H,
    start: usize,
}

/// How deep handler blocks are followed out to the code they protect (a bound, in case of
/// a cycle through handlers).
const MAX_HANDLER_NESTING: usize = 64;

/// Where each instruction belongs in the order of the code as written: an instruction
/// reached without exceptions is at its own position; an instruction of a handler block
/// belongs just after the first instruction that handler protects (so the handler of a copy
/// sorts with that copy), then by its own position. Code that nothing reaches before the
/// rewrite (after a `return` that a label follows, or a case that only the switch's
/// dispatch will reach) belongs where the nearest reached instruction before it that
/// [`Graph::belongs_with`] it belongs (the statements before it in its block, as the
/// compiler lays blocks out), and is walked from there like reached code, so that its own
/// handler blocks sort with it.
///
/// The owners are found once, over the whole graph; a key is built only for the
/// instructions asked about (the sites, a few per label), not for every instruction.
pub struct CopyKeys<H> {
    owner: Vec<Option<Owner<H>>>,
    first_protected: HashMap<H, usize>,
}

impl<H: Copy + Eq + std::hash::Hash> CopyKeys<H> {
    /// The owners of every instruction of `graph`.
    pub fn new<G: Graph<Handler = H>>(graph: &G) -> CopyKeys<H> {
        let protected = protected(graph);
        let owner = owners(graph, &protected);
        let first_protected = protected
            .iter()
            .map(|handler| (handler.handler, handler.first))
            .collect();
        CopyKeys {
            owner,
            first_protected,
        }
    }

    /// The key of instruction `at`: keys compare in the order of the code as written.
    pub fn key(&self, at: usize) -> Vec<usize> {
        let mut key = vec![at];
        let mut current = at;
        // Follow handler blocks out to code reached without exceptions.
        for _ in 0..MAX_HANDLER_NESTING {
            let Some(Some(Owner::Handler(handler))) = self.owner.get(current) else {
                break;
            };
            let Some(&first) = self.first_protected.get(handler) else {
                break;
            };
            key.push(first);
            current = first;
        }
        key.reverse();
        key
    }
}

/// Each handler once, in the order of the first instruction it protects. A handler whose
/// label names no instruction has no block to order.
fn protected<G: Graph>(graph: &G) -> Vec<Protected<G::Handler>> {
    let mut found: Vec<Protected<G::Handler>> = Vec::new();
    let mut seen = HashSet::new();
    for first in 0..graph.len() {
        let Some((handler, start)) = graph.handler(first) else {
            continue;
        };
        if !seen.insert(handler) {
            continue;
        }
        if let Some(start) = start {
            found.push(Protected {
                first,
                handler,
                start,
            });
        }
    }
    found
}

/// The owner of every instruction (`None` for none only when there are no instructions).
fn owners<G: Graph>(
    graph: &G,
    protected: &[Protected<G::Handler>],
) -> Vec<Option<Owner<G::Handler>>> {
    let mut ownership = Ownership {
        graph,
        owner: vec![None; graph.len()],
    };
    if graph.len() > 0 {
        ownership.walk(0, Owner::Straight);
    }
    // Handlers of code already placed first, so that nested handler blocks find their owner;
    // then the first code nothing reached yet, as ordinary code, and again.
    let mut pending = protected.to_vec();
    // Everything before this is placed: walks only ever add owners.
    let mut placed = 0;
    loop {
        ownership.walk_handlers(&mut pending);
        let Some(unreached) = (placed..graph.len()).find(|&at| ownership.owner[at].is_none())
        else {
            break;
        };
        placed = unreached;
        let mark = ownership.owner_before(unreached);
        ownership.walk(unreached, mark);
    }
    ownership.owner
}

/// Owners given so far, over a control-flow graph.
struct Ownership<'g, G: Graph> {
    graph: &'g G,
    owner: Vec<Option<Owner<G::Handler>>>,
}

impl<G: Graph> Ownership<'_, G> {
    /// Gives `mark` to every instruction without an owner that is reached from `start`
    /// without exceptions and without passing an instruction that has one.
    fn walk(&mut self, start: usize, mark: Owner<G::Handler>) {
        let mut work = vec![start];
        while let Some(at) = work.pop() {
            if self.owner[at].is_some() {
                continue;
            }
            self.owner[at] = Some(mark);
            work.extend(
                self.graph
                    .successors(at)
                    .filter(|&to| to < self.owner.len()),
            );
        }
    }

    /// Walks the block of every pending handler whose first protected instruction has an
    /// owner, until none is left that has.
    fn walk_handlers(&mut self, pending: &mut Vec<Protected<G::Handler>>) {
        loop {
            let before = pending.len();
            pending.retain(|handler| {
                if self.owner[handler.first].is_none() {
                    return true;
                }
                self.walk(handler.start, Owner::Handler(handler.handler));
                false
            });
            if pending.len() == before {
                break;
            }
        }
    }

    /// The owner of unreached code at `unreached`: that of the nearest instruction before
    /// it that has one and that it belongs with. With none (a handler block whose protected
    /// code the code generator removed), it stands on its own, at its position.
    fn owner_before(&self, unreached: usize) -> Owner<G::Handler> {
        (0..unreached)
            .rev()
            .find(|&at| self.owner[at].is_some() && self.graph.belongs_with(at, unreached))
            .and_then(|at| self.owner[at])
            .unwrap_or(Owner::Straight)
    }
}
