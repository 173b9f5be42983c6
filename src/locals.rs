//! Where a local may be unbound, for both backends: a goto adds edges the compiler never
//! saw, so what its own analysis proved bound may not be on the new graph. CPython's
//! rewrite checks its unchecked loads again with it (`cpython::lower::locals`); RustPython's
//! lets a line event ride on a load it proves cannot fail (`bytecode::lines`).
//!
//! It sees a code object only as a [`LocalFlow`]: instructions by index, what each does to
//! which local, and the edges between them; nothing of either interpreter's instructions.
//!
//! A comprehension's restore of the variable it saved (`LOAD_FAST_AND_CLEAR`, later
//! `STORE_FAST`) counts as a store, though it puts back whatever was there, unbound too.
//! That is sound for CPython's use: its compiler checks every load after such a restore
//! until a real store, so no unchecked load can meet what the restore put back. RustPython's
//! use, which proves loads safe rather than adding checks, counts such locals unbound
//! everywhere instead.

use crate::dominators::Dominators;

/// What an instruction does to a local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Load,
    Store,
    /// `del`, or the save of a comprehension's variable that leaves it unbound.
    Delete,
}

/// How [`Unbound::before`] answers for one local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Every load of it follows a store of it in its own segment, or it is a parameter that
    /// nothing deletes: bound wherever it is loaded.
    Bound,
    /// Stored by one instruction only, never deleted: bound where that store dominates.
    Dominated(usize),
    /// Its column in the analysis of the whole graph.
    Column(usize),
}

/// Where locals may be unbound: what [`maybe_unbound`] found, asked of the locals an
/// instruction loads ([`Unbound::before`]).
pub(crate) struct Unbound {
    verdicts: Vec<Verdict>,
    /// Words of `states` per instruction.
    words: usize,
    /// The columns' bits before each instruction, instruction after instruction.
    states: Vec<u64>,
    reached: Vec<bool>,
    /// The dominators of the graph split in two per instruction (before it: node `2i`,
    /// after it: `2i + 1`), when a local is [`Verdict::Dominated`].
    dominators: Option<Dominators>,
    /// Locals counted unbound wherever code runs ([`Unbound::count_unbound_everywhere`]).
    everywhere: Vec<bool>,
}

impl Unbound {
    /// Whether anything reaches instruction `index`.
    pub(crate) fn reached(&self, index: usize) -> bool {
        self.reached.get(index).copied().unwrap_or(false)
    }

    /// Whether `local` may be unbound before instruction `index`, which loads it (`None`:
    /// nothing reaches the instruction). Asked of a local the instruction does not load, the
    /// answer may be wrong: a local whose loads all follow a store in their own segment
    /// counts bound everywhere.
    pub(crate) fn before(&self, index: usize, local: usize) -> Option<bool> {
        if !self.reached(index) {
            return None;
        }
        let forced = self.everywhere.get(local).copied().unwrap_or(false);
        let unbound = match self.verdicts.get(local) {
            None | Some(Verdict::Bound) => false,
            Some(&Verdict::Column(column)) => {
                self.states[index * self.words + column / 64] >> (column % 64) & 1 == 1
            }
            Some(&Verdict::Dominated(store)) => !(self.dominators.as_ref())
                .is_some_and(|dominators| dominators.dominates(2 * store + 1, 2 * index)),
        };
        Some(forced || unbound)
    }

    /// Counts `local` unbound wherever code runs (a local whose store may put back an
    /// unbound value: see the module's comment).
    pub(crate) fn count_unbound_everywhere(&mut self, local: usize) {
        if let Some(forced) = self.everywhere.get_mut(local) {
            *forced = true;
        }
    }
}

/// Puts `local` in the set of bits `words`, or takes it out.
fn set_bit(words: &mut [u64], local: usize, value: bool) {
    if let Some(word) = words.get_mut(local / 64) {
        if value {
            *word |= 1 << (local % 64);
        } else {
            *word &= !(1 << (local % 64));
        }
    }
}

/// A control-flow graph, as the analysis needs it.
pub(crate) trait LocalFlow {
    /// The number of instructions.
    fn len(&self) -> usize;

    /// What instruction `index` does to which locals, in order.
    fn actions(&self, index: usize) -> impl Iterator<Item = (Action, usize)>;

    /// The start of the handler that covers instruction `index`, if any: entered with the
    /// locals as they were before it.
    fn handler(&self, index: usize) -> Option<usize>;

    /// Where control goes on from instruction `index` (jumps and the next instruction):
    /// entered with the locals as it leaves them.
    fn successors(&self, index: usize) -> impl Iterator<Item = usize>;
}

/// The locals that may be unbound before each instruction, for a code object with `count`
/// locals whose first `arguments` are its parameters, bound on entry.
///
/// Three-address code stores and loads thousands of temporaries (a state of every local at
/// every instruction took 3.8 GB for a function of 16,000 blocks), so the analysis of the
/// whole graph is kept for the locals nothing cheaper answers for:
/// - a load that follows a store of its local in its own straight-line segment (no edge
///   into the segment between them) finds it bound whatever the graph;
/// - a parameter that nothing deletes is bound everywhere;
/// - a local stored by one instruction and never deleted is bound where that store
///   dominates the load (every path to the load passes it and goes on from it: a
///   handler entered from the store's own instruction starts before it).
///
/// The other locals (stored in several places, deleted) each get a column of the analysis
/// of the whole graph, whose states of all instructions live in one vector, so that
/// visiting an instruction allocates nothing.
pub(crate) fn maybe_unbound(flow: &impl LocalFlow, count: usize, arguments: usize) -> Unbound {
    unbound_with(flow, count, arguments, 64)
}

/// [`maybe_unbound`], with every local that fits in `fits` columns in the analysis of the
/// whole graph (a test asks for none, to try dominators on small graphs).
fn unbound_with(flow: &impl LocalFlow, count: usize, arguments: usize, fits: usize) -> Unbound {
    let length = flow.len();
    // Where segments start: the entry, the start of a handler, an instruction the one
    // before does not go on to, and one entered from anywhere else.
    let mut starts = vec![false; length];
    if let Some(entry) = starts.first_mut() {
        *entry = true;
    }
    for index in 0..length {
        if let Some(start) = flow.handler(index)
            && start < length
        {
            starts[start] = true;
        }
        let mut goes_on = false;
        for to in flow.successors(index) {
            if to == index + 1 {
                goes_on = true;
            } else if to < length {
                starts[to] = true;
            }
        }
        if !goes_on && index + 1 < length {
            starts[index + 1] = true;
        }
    }
    // A load is checked against what came before its instruction, as the analysis below
    // asks it; the segment where each local was last stored, without a delete since.
    let mut exposed = vec![false; count];
    let mut stores: Vec<(usize, usize)> = vec![(0, 0); count]; // (how many, the last)
    let mut deleted = vec![false; count];
    let mut stored_in = vec![usize::MAX; count];
    let mut segment = 0;
    for (index, &start) in starts.iter().enumerate() {
        if start {
            segment = index;
        }
        for (action, local) in flow.actions(index) {
            if action == Action::Load && local < count && stored_in[local] != segment {
                exposed[local] = true;
            }
        }
        for (action, local) in flow.actions(index) {
            match action {
                Action::Store if local < count => {
                    stored_in[local] = segment;
                    // An instruction that stores a local twice is one place that stores it.
                    if stores[local] == (0, 0) || stores[local].1 != index {
                        stores[local] = (stores[local].0 + 1, index);
                    }
                }
                Action::Delete if local < count => {
                    stored_in[local] = usize::MAX;
                    deleted[local] = true;
                }
                _ => {}
            }
        }
    }
    let mut columns = 0;
    let mut verdicts: Vec<Verdict> = (0..count)
        .map(|local| match stores[local] {
            _ if !exposed[local] || local < arguments && !deleted[local] => Verdict::Bound,
            (1, store) if !deleted[local] => Verdict::Dominated(store),
            _ => {
                columns += 1;
                Verdict::Column(columns - 1)
            }
        })
        .collect();
    // Dominators cost more than one word of columns per instruction: while every local
    // fits in one word, all go there.
    let dominated = (verdicts.iter())
        .filter(|verdict| matches!(verdict, Verdict::Dominated(_)))
        .count();
    if columns + dominated <= fits {
        for verdict in &mut verdicts {
            if let Verdict::Dominated(_) = verdict {
                *verdict = Verdict::Column(columns);
                columns += 1;
            }
        }
    }
    let column = |local: usize| match verdicts.get(local) {
        Some(&Verdict::Column(column)) => Some(column),
        _ => None,
    };
    let dominators = verdicts
        .iter()
        .any(|verdict| matches!(verdict, Verdict::Dominated(_)))
        .then(|| {
            // Before instruction i (node 2i): on to after it, and into its handler; after it
            // (node 2i + 1): into its successors.
            Dominators::of(2 * length, |node, out| {
                let index = node / 2;
                if node % 2 == 0 {
                    out.push(node + 1);
                    out.extend(
                        flow.handler(index)
                            .filter(|&start| start < length)
                            .map(|start| 2 * start),
                    );
                } else {
                    out.extend(
                        flow.successors(index)
                            .filter(|&to| to < length)
                            .map(|to| 2 * to),
                    );
                }
            })
        });
    let words = columns.div_ceil(64);
    let slot = |index: usize| index * words..(index + 1) * words;
    let mut states = vec![0u64; length * words];
    let mut reached = vec![false; length];
    if length > 0 {
        for local in arguments..count {
            if let Some(column) = column(local) {
                set_bit(&mut states[slot(0)], column, true);
            }
        }
        reached[0] = true;
    }
    let mut work = vec![0usize; usize::from(length > 0)];
    // Adds `state` to what instruction `index` is entered with, and queues it if that grew.
    let mut flow_into = |states: &mut [u64], work: &mut Vec<usize>, index: usize, state: &[u64]| {
        if index >= length {
            return;
        }
        let mut grew = !reached[index];
        reached[index] = true;
        for (word, more) in states[slot(index)].iter_mut().zip(state) {
            grew |= *word | more != *word;
            *word |= more;
        }
        if grew {
            work.push(index);
        }
    };
    crate::splice::count(length * (1 + words));
    let mut state = vec![0u64; words];
    while let Some(index) = work.pop() {
        crate::splice::count(1 + words);
        state.copy_from_slice(&states[slot(index)]);
        if let Some(start) = flow.handler(index) {
            flow_into(&mut states, &mut work, start, &state);
        }
        for (action, local) in flow.actions(index) {
            let Some(column) = column(local) else {
                continue;
            };
            match action {
                Action::Store => set_bit(&mut state, column, false),
                Action::Delete => set_bit(&mut state, column, true),
                Action::Load => {}
            }
        }
        for to in flow.successors(index) {
            flow_into(&mut states, &mut work, to, &state);
        }
    }
    Unbound {
        verdicts,
        words,
        states,
        reached,
        dominators,
        everywhere: vec![false; count],
    }
}

/// What one instruction does to which locals, in order: at most two actions, held without
/// an allocation (the analyses ask it of every instruction of a function, several times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Actions([Option<(Action, usize)>; 2]);

impl Actions {
    /// One action, or two.
    fn of(first: (Action, usize), second: Option<(Action, usize)>) -> Actions {
        Actions([Some(first), second])
    }
}

impl IntoIterator for Actions {
    type Item = (Action, usize);
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<(Action, usize)>, 2>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().flatten()
    }
}

/// What one of the instructions both backends name alike does to which locals: those that
/// take one local as their argument, or two packed in it (the first in the high bits).
pub(crate) fn actions_of(name: &str, arg: u32) -> Actions {
    use Action::{Delete, Load, Store};
    let arg = arg as usize;
    let (high, low) = (arg >> 4, arg & 15);
    match name {
        "LOAD_FAST" | "LOAD_FAST_CHECK" | "LOAD_FAST_BORROW" => Actions::of((Load, arg), None),
        "LOAD_FAST_LOAD_FAST" | "LOAD_FAST_BORROW_LOAD_FAST_BORROW" => {
            Actions::of((Load, high), Some((Load, low)))
        }
        "STORE_FAST" => Actions::of((Store, arg), None),
        "STORE_FAST_STORE_FAST" => Actions::of((Store, high), Some((Store, low))),
        "STORE_FAST_LOAD_FAST" => Actions::of((Store, high), Some((Load, low))),
        "DELETE_FAST" | "LOAD_FAST_AND_CLEAR" => Actions::of((Delete, arg), None),
        _ => Actions::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One instruction written out: its actions, its handler and its successors.
    type Node = (Vec<(Action, usize)>, Option<usize>, Vec<usize>);

    /// A graph written out.
    struct Graph(Vec<Node>);

    impl LocalFlow for Graph {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn actions(&self, index: usize) -> impl Iterator<Item = (Action, usize)> {
            self.0[index].0.iter().copied()
        }
        fn handler(&self, index: usize) -> Option<usize> {
            self.0[index].1
        }
        fn successors(&self, index: usize) -> impl Iterator<Item = usize> {
            self.0[index].2.iter().copied()
        }
    }

    /// The locals of 0 to 2 that instruction `index` loads and may find unbound.
    fn unbound_at(unbound: &Unbound, graph: &Graph, index: usize) -> Vec<usize> {
        let loads = graph.0[index]
            .0
            .iter()
            .filter(|(action, _)| *action == Action::Load);
        let found = loads.filter(|&&(_, local)| unbound.before(index, local).expect("reached"));
        found.map(|&(_, local)| local).collect()
    }

    #[test]
    fn parameters_are_bound_and_a_store_binds_on_every_path_only() {
        use Action::{Load, Store};
        // 0: load 0, 1 and 2; 1: store 1; 2: jump to 4 or go on; 3: store 2; 4: load 0, 1
        // and 2; end.
        let graph = Graph(vec![
            (vec![(Load, 0), (Load, 1), (Load, 2)], None, vec![1]),
            (vec![(Store, 1)], None, vec![2]),
            (vec![], None, vec![4, 3]),
            (vec![(Store, 2)], None, vec![4]),
            (vec![(Load, 0), (Load, 1), (Load, 2)], None, vec![]),
        ]);
        let unbound = maybe_unbound(&graph, 3, 1);
        assert_eq!(unbound_at(&unbound, &graph, 0), [1, 2]);
        assert_eq!(unbound_at(&unbound, &graph, 4), [2]);
    }

    #[test]
    fn a_handler_sees_the_locals_before_the_instruction_and_a_delete_unbinds() {
        use Action::{Delete, Load, Store};
        // 0: store 1 (covered by the handler at 3); 1: delete 0; 2: load 0, 1 and 2, then
        // the end; 3: handler: load 0, 1 and 2.
        let all = vec![(Load, 0), (Load, 1), (Load, 2)];
        let graph = Graph(vec![
            (vec![(Store, 1)], Some(3), vec![1]),
            (vec![(Delete, 0)], None, vec![2]),
            (all.clone(), None, vec![]),
            (all, None, vec![]),
        ]);
        let unbound = maybe_unbound(&graph, 3, 1);
        assert_eq!(unbound_at(&unbound, &graph, 2), [0, 2]);
        assert_eq!(unbound_at(&unbound, &graph, 3), [1, 2]);
    }

    #[test]
    fn a_load_after_a_store_in_its_segment_is_bound_and_an_edge_into_the_segment_ends_it() {
        use Action::{Load, Store};
        // 0: store 1; 1: load 1; 2: load 1, also entered from 3; 3: jump to 2. Local 2 is
        // only stored and loaded within segment 0..2: it needs no column.
        let graph = Graph(vec![
            (vec![(Store, 1), (Store, 2)], None, vec![1]),
            (vec![(Load, 1), (Load, 2)], None, vec![2]),
            (vec![(Load, 1)], None, vec![3]),
            (vec![], None, vec![2]),
        ]);
        let unbound = unbound_with(&graph, 3, 0, 0);
        assert_eq!(unbound_at(&unbound, &graph, 1), Vec::<usize>::new());
        assert_eq!(unbound_at(&unbound, &graph, 2), Vec::<usize>::new());
        assert_eq!(unbound.verdicts[2], Verdict::Bound);
        assert_eq!(unbound.verdicts[1], Verdict::Dominated(0));
        // A store and a load of one local in one instruction: the load sees what came before.
        let packed = Graph(vec![(vec![(Store, 0), (Load, 0)], None, vec![])]);
        assert_eq!(unbound_at(&maybe_unbound(&packed, 1, 0), &packed, 0), [0]);
    }

    /// The locals of `count` that may be unbound before each instruction, by the plain
    /// fixpoint of the definition (every local followed through the whole graph).
    fn by_definition(graph: &Graph, count: usize, arguments: usize) -> Vec<Option<Vec<bool>>> {
        let mut states: Vec<Option<Vec<bool>>> = vec![None; graph.len()];
        if graph.len() > 0 {
            states[0] = Some((0..count).map(|local| local >= arguments).collect());
        }
        let mut changed = true;
        while changed {
            changed = false;
            for index in 0..graph.len() {
                let Some(before) = states[index].clone() else {
                    continue;
                };
                let mut after = before.clone();
                for (action, local) in graph.actions(index) {
                    match action {
                        Action::Store => after[local] = false,
                        Action::Delete => after[local] = true,
                        Action::Load => {}
                    }
                }
                let handler = graph.handler(index).map(|start| (start, &before));
                let next = graph.successors(index).map(|to| (to, &after));
                for (to, state) in handler.into_iter().chain(next) {
                    if to >= graph.len() {
                        continue; // out of the code
                    }
                    let old = states[to].clone();
                    let merged: Vec<bool> = match &old {
                        Some(old) => old.iter().zip(state).map(|(a, b)| *a || *b).collect(),
                        None => state.clone(),
                    };
                    if old.as_ref() != Some(&merged) {
                        states[to] = Some(merged);
                        changed = true;
                    }
                }
            }
        }
        states
    }

    #[test]
    fn every_load_gets_the_answer_of_the_whole_analysis() {
        use Action::{Delete, Load, Store};
        let mut next = crate::splice::numbers(3);
        for _ in 0..2_000 {
            let length = 1 + next(10);
            let nodes: Vec<Node> = (0..length)
                .map(|index| {
                    let actions = (0..next(3))
                        .map(|_| ([Load, Load, Store, Delete][next(4)], next(4)))
                        .collect();
                    let handler = (next(5) == 0).then(|| next(length));
                    let mut successors = Vec::new();
                    if next(4) != 0 {
                        successors.push(index + 1); // on to the next (past the end: out)
                    }
                    if next(3) == 0 {
                        successors.push(next(length));
                    }
                    (actions, handler, successors)
                })
                .collect();
            let graph = Graph(nodes);
            let arguments = next(3);
            let expected = by_definition(&graph, 4, arguments);
            // With dominators, and with every local in the analysis of the whole graph.
            for fits in [0, 64] {
                let unbound = unbound_with(&graph, 4, arguments, fits);
                for (index, state) in expected.iter().enumerate() {
                    for &(action, local) in &graph.0[index].0 {
                        if action == Load {
                            let want = state.as_ref().map(|state| state[local]);
                            assert_eq!(
                                unbound.before(index, local),
                                want,
                                "load of {local} at {index} in {:?}, {arguments} arguments, {fits}",
                                graph.0
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn packed_arguments_name_the_first_local_in_the_high_bits() {
        use Action::{Load, Store};
        let actions = |name, arg| actions_of(name, arg).into_iter().collect::<Vec<_>>();
        assert_eq!(
            actions("STORE_FAST_LOAD_FAST", 0x21),
            [(Store, 2), (Load, 1)]
        );
        assert_eq!(actions("LOAD_ATTR", 7), []);
    }
}
