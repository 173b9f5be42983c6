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

/// What an instruction does to a local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Load,
    Store,
    /// `del`, or the save of a comprehension's variable that leaves it unbound.
    Delete,
}

/// Where locals may be unbound: what [`maybe_unbound`] found, asked of the locals an
/// instruction loads ([`Unbound::before`]).
pub(crate) struct Unbound {
    /// Each local's column in `states`: only the locals a load may find unbound by a value
    /// from before its straight-line segment have one (see [`maybe_unbound`]).
    column: Vec<Option<usize>>,
    /// Words of `states` per instruction.
    words: usize,
    /// The columns' bits before each instruction, instruction after instruction.
    states: Vec<u64>,
    reached: Vec<bool>,
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
    /// answer may be wrong: locals whose loads all follow a store in their own segment have
    /// no column, and count bound everywhere.
    pub(crate) fn before(&self, index: usize, local: usize) -> Option<bool> {
        if !self.reached(index) {
            return None;
        }
        let forced = self.everywhere.get(local).copied().unwrap_or(false);
        let column = self.column.get(local).copied().flatten();
        let bit = column.is_some_and(|column| {
            self.states[index * self.words + column / 64] >> (column % 64) & 1 == 1
        });
        Some(forced || bit)
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
/// A load that follows a store of its local in its own straight-line segment (no edge into
/// the segment between them) finds it bound whatever the graph: only the locals some other
/// load may find unbound go through the analysis of the whole graph. Three-address code
/// stores and loads thousands of temporaries each in one block: a state of every local at
/// every instruction took 3.8 GB for a function of 16,000 blocks, this a word per
/// instruction. The states of all instructions live in one vector, so that visiting an
/// instruction allocates nothing: a large function is visited about once per instruction
/// and analysed local.
pub(crate) fn maybe_unbound(flow: &impl LocalFlow, count: usize, arguments: usize) -> Unbound {
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
    let mut column: Vec<Option<usize>> = vec![None; count];
    let mut columns = 0;
    let mut stored_in = vec![usize::MAX; count];
    let mut segment = 0;
    for (index, &start) in starts.iter().enumerate() {
        if start {
            segment = index;
        }
        for (action, local) in flow.actions(index) {
            if action == Action::Load
                && local < count
                && stored_in[local] != segment
                && column[local].is_none()
            {
                column[local] = Some(columns);
                columns += 1;
            }
        }
        for (action, local) in flow.actions(index) {
            match action {
                Action::Store if local < count => stored_in[local] = segment,
                Action::Delete if local < count => stored_in[local] = usize::MAX,
                _ => {}
            }
        }
    }
    let words = columns.div_ceil(64);
    let slot = |index: usize| index * words..(index + 1) * words;
    let mut states = vec![0u64; length * words];
    let mut reached = vec![false; length];
    if length > 0 {
        for local in arguments..count {
            if let Some(column) = column[local] {
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
            let Some(column) = column.get(local).copied().flatten() else {
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
        column,
        words,
        states,
        reached,
        everywhere: vec![false; count],
    }
}

/// What one of the instructions both backends name alike does to which locals: those that
/// take one local as their argument, or two packed in it (the first in the high bits).
pub(crate) fn actions_of(name: &str, arg: u32) -> Vec<(Action, usize)> {
    let arg = arg as usize;
    match name {
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
        let unbound = maybe_unbound(&graph, 3, 0);
        assert_eq!(unbound_at(&unbound, &graph, 1), Vec::<usize>::new());
        assert_eq!(unbound_at(&unbound, &graph, 2), Vec::<usize>::new());
        assert_eq!(unbound.column[2], None);
        assert!(unbound.column[1].is_some());
        // A store and a load of one local in one instruction: the load sees what came before.
        let packed = Graph(vec![(vec![(Store, 0), (Load, 0)], None, vec![])]);
        assert_eq!(unbound_at(&maybe_unbound(&packed, 1, 0), &packed, 0), [0]);
    }

    #[test]
    fn packed_arguments_name_the_first_local_in_the_high_bits() {
        use Action::{Load, Store};
        assert_eq!(
            actions_of("STORE_FAST_LOAD_FAST", 0x21),
            [(Store, 2), (Load, 1)]
        );
        assert_eq!(actions_of("LOAD_ATTR", 7), []);
    }
}
