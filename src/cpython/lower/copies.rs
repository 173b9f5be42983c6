//! Which copy of each `finally` body every instruction is in.
//!
//! CPython compiles a `finally` body once per way out of its `try`, and gotopy adds one per
//! trampoline; all copies carry the body's positions. A copy is a connected part of the flow
//! graph (jumps, fall-through and handler edges, either way) restricted to the body:
//! instructions whose positions lie inside it, and those without a position that lead into
//! it (`PUSH_EXC_INFO`, jumps); copies meet only outside the body.

use std::collections::HashMap;

use crate::cpython::bytecode::{Body, BytecodeError, Flow, InstrId, Item};
use crate::tables::Position;

/// By the identity of each instruction inside `finally` bodies, a map from the body's index
/// in `spans` to the copy it is in (a number shared by the instructions of one copy).
pub(super) fn finally_copies(
    body: &Body,
    spans: &[Position],
) -> Result<HashMap<InstrId, HashMap<usize, usize>>, BytecodeError> {
    // The lines of the code: a body of another code object outside them (most spans, in a
    // module of many functions) holds none of it, and costs no sort.
    let placed = (body.items.iter().filter_map(Item::instr)).filter(|instr| instr.position[0] >= 0);
    let lines = placed.fold(None, |lines: Option<(i32, i32)>, instr| {
        let [line, end_line, ..] = instr.position;
        Some(lines.map_or((line, end_line), |(first, last)| {
            (first.min(line), last.max(end_line))
        }))
    });
    let Some((first, last)) = lines else {
        return Ok(HashMap::new());
    };
    if spans.iter().all(|span| span[0] > last || span[1] < first) {
        return Ok(HashMap::new());
    }
    // The instructions with a position, sorted by where they start: those inside a body are
    // a run of them, found by bisection. The spans are every `finally` body of the module,
    // most of them another code object's, which have none here; a code object without one
    // needs no flow graph.
    let mut starts: Vec<((i32, i32), usize)> = (body.items.iter())
        .filter_map(|item| item.instr())
        .enumerate()
        .filter(|(_, instr)| instr.position[0] >= 0)
        .map(|(index, instr)| ((instr.position[0], instr.position[2].max(0)), index))
        .collect();
    starts.sort_unstable();
    let inside_of = |&[line, end_line, column, end_column]: &Position| {
        let first = starts.partition_point(|&(at, _)| at < (line, column));
        let end = first + starts[first..].partition_point(|&(at, _)| at < (end_line, end_column));
        starts[first..end].iter().map(|&(_, index)| index)
    };
    if spans.iter().all(|span| inside_of(span).next().is_none()) {
        return Ok(HashMap::new());
    }
    let flow = Flow::new(body)?;
    let count = flow.len();
    // Where each instruction goes without raising, the handler it raises into, and the
    // instructions that lead to each.
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
    crate::splice::count(count);
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); count];
    for index in 0..count {
        for to in next[index].iter().copied().chain(raises[index]) {
            if to != index {
                before[to].push(index);
            }
        }
    }
    // Per body, only its own instructions are visited: these tables are shared, and put back
    // as they were after each body, so that many bodies in one code object cost their sizes.
    let mut inside = vec![false; count];
    let mut member = vec![false; count];
    let mut parent: Vec<usize> = (0..count).collect();
    let mut result: HashMap<InstrId, HashMap<usize, usize>> = HashMap::new();
    for (number, span) in spans.iter().enumerate() {
        let mut members: Vec<usize> = inside_of(span).collect();
        if members.is_empty() {
            continue; // a body of another code object: none of its copies is here
        }
        for &index in &members {
            inside[index] = true;
            member[index] = true;
        }
        // Instructions without a position that lead into the body through others like them.
        let mut walked = 0;
        while let Some(&to) = members.get(walked) {
            walked += 1;
            for &from in &before[to] {
                if !member[from] && flow.instrs[from].position[0] < 0 {
                    member[from] = true;
                    members.push(from);
                }
            }
        }
        crate::splice::count(members.len());
        // The sets joined in the order of the code, as the copies are numbered by them.
        members.sort_unstable();
        for &index in &members {
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
        for &index in &members {
            let copy = root(&mut parent, index);
            result
                .entry(flow.instrs[index].id)
                .or_default()
                .insert(number, copy);
        }
        for &index in &members {
            inside[index] = false;
            member[index] = false;
            parent[index] = index;
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
