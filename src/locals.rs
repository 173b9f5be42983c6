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

/// A set of locals, as bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Locals(Vec<u64>);

impl Locals {
    pub(crate) fn contains(&self, local: usize) -> bool {
        self.0
            .get(local / 64)
            .is_some_and(|word| word >> (local % 64) & 1 == 1)
    }

    pub(crate) fn set(&mut self, local: usize, value: bool) {
        set_bit(&mut self.0, local, value);
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

/// The locals that may be unbound before each instruction (`None`: unreachable), for a code
/// object with `count` locals whose first `arguments` are its parameters, bound on entry.
///
/// The states of all instructions live in one vector, so that visiting an instruction
/// allocates nothing: a large function is visited about once per instruction and local.
pub(crate) fn maybe_unbound(
    flow: &impl LocalFlow,
    count: usize,
    arguments: usize,
) -> Vec<Option<Locals>> {
    let length = flow.len();
    if length == 0 {
        return Vec::new();
    }
    let words = count.div_ceil(64);
    let slot = |index: usize| index * words..(index + 1) * words;
    let mut states = vec![0u64; length * words];
    let mut reached = vec![false; length];
    for local in arguments..count {
        set_bit(&mut states[slot(0)], local, true);
    }
    reached[0] = true;
    let mut work = vec![0usize];
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
    let mut state = vec![0u64; words];
    while let Some(index) = work.pop() {
        state.copy_from_slice(&states[slot(index)]);
        if let Some(start) = flow.handler(index) {
            flow_into(&mut states, &mut work, start, &state);
        }
        for (action, local) in flow.actions(index) {
            match action {
                Action::Store if local < count => set_bit(&mut state, local, false),
                Action::Delete if local < count => set_bit(&mut state, local, true),
                _ => {}
            }
        }
        for to in flow.successors(index) {
            flow_into(&mut states, &mut work, to, &state);
        }
    }
    (0..length)
        .map(|index| reached[index].then(|| Locals(states[slot(index)].to_vec())))
        .collect()
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

    fn unbound_at(states: &[Option<Locals>], index: usize) -> Vec<usize> {
        let state = states[index].as_ref().expect("reachable");
        (0..3).filter(|&local| state.contains(local)).collect()
    }

    #[test]
    fn parameters_are_bound_and_a_store_binds_on_every_path_only() {
        use Action::{Load, Store};
        // 0: store 1; 1: jump to 3 or go on; 2: store 2; 3: load 0, 1 and 2; end.
        let graph = Graph(vec![
            (vec![(Store, 1)], None, vec![1]),
            (vec![], None, vec![3, 2]),
            (vec![(Store, 2)], None, vec![3]),
            (vec![(Load, 0), (Load, 1), (Load, 2)], None, vec![]),
        ]);
        let states = maybe_unbound(&graph, 3, 1);
        assert_eq!(unbound_at(&states, 0), [1, 2]);
        assert_eq!(unbound_at(&states, 3), [2]);
    }

    #[test]
    fn a_handler_sees_the_locals_before_the_instruction_and_a_delete_unbinds() {
        use Action::{Delete, Store};
        // 0: store 1 (covered by the handler at 2); 1: delete 0, then the end; 2: handler.
        let graph = Graph(vec![
            (vec![(Store, 1)], Some(2), vec![1]),
            (vec![(Delete, 0)], None, vec![]),
            (vec![], None, vec![]),
        ]);
        let states = maybe_unbound(&graph, 3, 1);
        assert_eq!(unbound_at(&states, 1), [2]);
        assert_eq!(unbound_at(&states, 2), [1, 2]);
        let after_delete = Graph(vec![
            (vec![(Delete, 0)], None, vec![1]),
            (vec![], None, vec![]),
        ]);
        assert_eq!(
            unbound_at(&maybe_unbound(&after_delete, 3, 1), 1),
            [0, 1, 2]
        );
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
