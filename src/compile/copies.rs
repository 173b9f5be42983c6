//! Numbering the copies RustPython makes of a `finally` body, so that each goto pairs
//! with its label in the same copy.

use std::collections::HashMap;

use super::{Site, SiteKind};
use crate::bytecode::{Body, Instr, Item, Label};

/// Numbers the copies the code generator made of each site (it compiles a `finally` body
/// once per way out of its `try`), so that copy k of a goto pairs with copy k of its label,
/// of a trampoline, of a switch's cases. Copies are ordered by [`copy_keys`], not by where
/// they sit: handler blocks are moved after everything else, so code order alone would mix
/// the copies of a handler inside a finally body with those of the code around it.
pub(super) fn number_copies(body: &Body, sites: &mut [Site]) {
    let keys = copy_keys(body);
    let mut by_kind: HashMap<SiteKind, Vec<usize>> = HashMap::new();
    for (index, site) in sites.iter().enumerate() {
        by_kind.entry(site.kind).or_default().push(index);
    }
    for indices in by_kind.values_mut() {
        indices.sort_by(|&a, &b| keys[sites[a].at].cmp(&keys[sites[b].at]));
        for (copy, &index) in indices.iter().enumerate() {
            sites[index].copy = copy;
        }
    }
}

/// For each item, where it belongs in the order of the code as written: an instruction
/// reached without exceptions is at its own position; an instruction of a handler block
/// belongs just after the first instruction that handler protects (so the handler of a copy
/// sorts with that copy), then by its own position. Code that nothing reaches before the
/// rewrite (after a `return` that a label follows, or a case that only the switch's
/// dispatch will reach) belongs where the nearest reached instruction before it under the
/// same exception handler belongs (the statements before it in its block; not a handler
/// block of theirs that the code generator placed in between), and is walked from there
/// like reached code, so that its own handler blocks sort with it.
fn copy_keys(body: &Body) -> Vec<Vec<usize>> {
    use rustpython_compiler::core::bytecode::InstructionMetadata;
    let labels: HashMap<Label, usize> = body
        .items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| match item {
            Item::Label(label) => Some((*label, at)),
            Item::Instr(_) => None,
        })
        .collect();
    let successors = |at: usize| -> Vec<usize> {
        let mut next = Vec::new();
        match &body.items[at] {
            Item::Label(_) => next.push(at + 1),
            Item::Instr(instr) => {
                if let Some(target) = instr.target {
                    next.push(labels[&target]);
                }
                if !(instr.op.is_scope_exit() || instr.op.is_unconditional_jump()) {
                    next.push(at + 1);
                }
            }
        }
        next.retain(|&n| n < body.items.len());
        next
    };
    let walk = |start: usize, owner: &mut Vec<Option<usize>>, mark: usize| {
        let mut work = vec![start];
        while let Some(at) = work.pop() {
            if owner[at].is_some() {
                continue;
            }
            owner[at] = Some(mark);
            work.extend(successors(at));
        }
    };
    // Who each item belongs to: `usize::MAX` for code reached without exceptions, else the
    // position of a handler target.
    let mut owner: Vec<Option<usize>> = vec![None; body.items.len()];
    if !body.items.is_empty() {
        walk(0, &mut owner, usize::MAX);
    }
    let mut protected: Vec<(usize, usize)> = Vec::new(); // (first protected, handler target)
    for (at, item) in body.items.iter().enumerate() {
        if let Item::Instr(Instr {
            handler: Some(handler),
            ..
        }) = item
        {
            let target = labels[&handler.target];
            if !protected.iter().any(|&(_, t)| t == target) {
                protected.push((at, target));
            }
        }
    }
    // Handlers of code already placed first, so that nested handler blocks find their owner;
    // then the first code nothing reached yet, as ordinary code, and again.
    let mut pending = protected.clone();
    // Everything before this is placed: walks only ever add owners.
    let mut placed = 0;
    loop {
        loop {
            let before = pending.len();
            pending.retain(|&(first, target)| {
                if owner[first].is_none() {
                    return true;
                }
                walk(target, &mut owner, target);
                false
            });
            if pending.len() == before {
                break;
            }
        }
        let Some(unreached) = (placed..owner.len()).find(|&at| owner[at].is_none()) else {
            break;
        };
        placed = unreached;
        let handler = body.items[unreached..].iter().find_map(|item| match item {
            Item::Instr(instr) => Some(instr.handler),
            Item::Label(_) => None,
        });
        let same_block = (0..unreached).rev().find(|&at| {
            owner[at].is_some()
                && matches!(&body.items[at], Item::Instr(instr) if Some(instr.handler) == handler)
        });
        // With none (a handler block whose protected code the code generator removed), it
        // stands on its own, at its position.
        let mark = same_block.and_then(|at| owner[at]).unwrap_or(usize::MAX);
        walk(unreached, &mut owner, mark);
    }
    let first_protected: HashMap<usize, usize> = protected
        .iter()
        .map(|&(first, target)| (target, first))
        .collect();
    (0..body.items.len())
        .map(|at| {
            let mut key = vec![at];
            let mut current = at;
            // Follow handler blocks out to code reached without exceptions (bounded, in
            // case of a cycle through handlers).
            for _ in 0..64 {
                let Some(mark) = owner[current].filter(|&mark| mark != usize::MAX) else {
                    break;
                };
                let Some(&first) = first_protected.get(&mark) else {
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
