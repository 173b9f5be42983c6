//! Which copy of each `finally` body every instruction is in.
//!
//! CPython compiles a `finally` body once per way out of its `try`, and gotopy adds one per
//! trampoline; all copies carry the body's positions. A copy is a connected part of the flow
//! graph (jumps, fall-through and handler edges, either way) restricted to the body:
//! instructions whose positions lie inside it, and those without a position that lead into
//! it (`PUSH_EXC_INFO`, jumps); copies meet only outside the body.

use std::collections::HashMap;

use crate::cpython::bytecode::{Body, BytecodeError, Flow, InstrId};
use crate::tables::Position;

/// By the identity of each instruction inside `finally` bodies, a map from the body's index
/// in `spans` to the copy it is in (a number shared by the instructions of one copy).
pub(super) fn finally_copies(
    body: &Body,
    spans: &[Position],
) -> Result<HashMap<InstrId, HashMap<usize, usize>>, BytecodeError> {
    let flow = Flow::new(body)?;
    let count = flow.len();
    // Where each instruction goes without raising, and the handler it raises into.
    let next: Vec<Vec<usize>> = (0..count)
        .map(|index| {
            let found = flow.successors(index).into_iter().flatten();
            found.map(|(to, _)| to).filter(|&to| to < count).collect()
        })
        .collect();
    let raises: Vec<Option<usize>> = (0..count)
        .map(|index| {
            flow.handler(index)
                .map(|(_, start)| start)
                .filter(|&to| to < count)
        })
        .collect();
    let edges = |index: usize| next[index].iter().copied().chain(raises[index]);
    let mut result: HashMap<InstrId, HashMap<usize, usize>> = HashMap::new();
    for (number, &[line, end_line, column, end_column]) in spans.iter().enumerate() {
        let (start, end) = ((line, column), (end_line, end_column));
        let inside: Vec<bool> = flow
            .instrs
            .iter()
            .map(|instr| {
                let at = (instr.position[0], instr.position[2].max(0));
                instr.position[0] >= 0 && start <= at && at < end
            })
            .collect();
        if !inside.contains(&true) {
            continue; // a body of another code object: none of its copies is here
        }
        // Instructions without a position that lead into the body through others like them.
        let mut member = inside.clone();
        let mut changed = true;
        while changed {
            changed = false;
            for index in 0..count {
                if !member[index]
                    && flow.instrs[index].position[0] < 0
                    && edges(index).any(|to| to != index && member[to])
                {
                    member[index] = true;
                    changed = true;
                }
            }
        }
        let mut parent: Vec<usize> = (0..count).collect();
        for index in 0..count {
            if !member[index] {
                continue;
            }
            // An instruction without a position belongs to the copy it goes on into: a jump
            // into one copy is covered by the handler of the `try` it leaves, where another
            // copy starts (the one run when an exception is raised), and that edge joins
            // nothing. Only one that goes on nowhere in the body (the `RERAISE` of a nested
            // handler's cleanup) belongs where it raises to. An instruction of the body's
            // own raises into its own copy's handlers.
            let flows_in = next[index].iter().any(|&to| member[to]);
            let joined = next[index].iter().copied();
            let joined = joined.chain(raises[index].filter(|_| inside[index] || !flows_in));
            for to in joined {
                if member[to] {
                    let (a, b) = (root(&mut parent, index), root(&mut parent, to));
                    parent[a] = b;
                }
            }
        }
        for index in 0..count {
            if inside[index] || member[index] {
                let copy = root(&mut parent, index);
                result
                    .entry(flow.instrs[index].id)
                    .or_default()
                    .insert(number, copy);
            }
        }
    }
    Ok(result)
}

/// The representative of `node`'s set (union-find, with path halving).
fn root(parent: &mut [usize], mut node: usize) -> usize {
    while parent[node] != node {
        parent[node] = parent[parent[node]];
        node = parent[node];
    }
    node
}
