//! Dominators of a control-flow graph (Lengauer and Tarjan's algorithm, with path
//! compression: O(edges log nodes)), for [`crate::locals`]: a local stored at one place
//! only is bound wherever that store dominates.
//!
//! Iterative throughout: a generated function's graph is hundreds of thousands of nodes
//! deep.

/// No node, in the tables below.
const NONE: u32 = u32::MAX;

/// The dominator tree of the nodes reached from the root, as intervals of a walk of it:
/// `a` dominates `b` when `b`'s interval lies within `a`'s.
pub(crate) struct Dominators {
    /// Where each node's subtree starts in the walk (`NONE`: not reached).
    enter: Vec<u32>,
    /// Where it ends.
    leave: Vec<u32>,
}

impl Dominators {
    /// The dominators of a graph of `count` nodes entered at node 0, whose edges from a node
    /// `successors` appends to the vector it is given.
    pub(crate) fn of(count: usize, successors: impl Fn(usize, &mut Vec<usize>)) -> Dominators {
        // Every node's successors, in one vector.
        let mut out_first = Vec::with_capacity(count + 1);
        let mut out = Vec::new();
        for node in 0..count {
            out_first.push(out.len());
            successors(node, &mut out);
        }
        out_first.push(out.len());
        // A depth-first walk from the root: each reached node's number, in preorder.
        let mut number = vec![NONE; count];
        let mut vertex: Vec<u32> = Vec::new();
        let mut parent: Vec<u32> = Vec::new();
        let mut edges: Vec<(u32, u32)> = Vec::new(); // (from, to) as numbers
        if count > 0 {
            // Each entry: a node numbered, and where its successors still to walk start.
            let mut stack: Vec<(usize, usize)> = vec![(0, out_first[0])];
            number[0] = 0;
            vertex.push(0);
            parent.push(NONE);
            while let Some((node, pending)) = stack.last_mut() {
                let node = *node;
                if *pending == out_first[node + 1] {
                    stack.pop();
                    continue;
                }
                let next = out[*pending];
                *pending += 1;
                if next >= count {
                    continue;
                }
                if number[next] == NONE {
                    number[next] = vertex.len() as u32;
                    vertex.push(next as u32);
                    parent.push(number[node]);
                    stack.push((next, out_first[next]));
                }
                edges.push((number[node], number[next]));
            }
        }
        let reached = vertex.len();
        crate::splice::count(count + edges.len());
        // Predecessors by number, in one vector.
        let mut first = vec![0usize; reached + 1];
        for &(_, to) in &edges {
            first[to as usize + 1] += 1;
        }
        for at in 0..reached {
            first[at + 1] += first[at];
        }
        let mut predecessors = vec![0u32; edges.len()];
        let mut filled = first.clone();
        for &(from, to) in &edges {
            predecessors[filled[to as usize]] = from;
            filled[to as usize] += 1;
        }
        let mut semi: Vec<u32> = (0..reached as u32).collect();
        let mut label: Vec<u32> = (0..reached as u32).collect();
        let mut ancestor = vec![NONE; reached];
        let mut idom = vec![0u32; reached];
        // The nodes whose semidominator is each node, as linked lists.
        let mut bucket = vec![NONE; reached];
        let mut next_in_bucket = vec![NONE; reached];
        let mut path = Vec::new();
        // The node of least semidominator on the compressed path from `v` to its forest root.
        let mut eval = |v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32]| -> u32 {
            if ancestor[v as usize] == NONE {
                return v;
            }
            path.clear();
            let mut at = v;
            while ancestor[ancestor[at as usize] as usize] != NONE {
                path.push(at);
                at = ancestor[at as usize];
            }
            for &x in path.iter().rev() {
                let up = ancestor[x as usize];
                if semi[label[up as usize] as usize] < semi[label[x as usize] as usize] {
                    label[x as usize] = label[up as usize];
                }
                ancestor[x as usize] = ancestor[up as usize];
            }
            label[v as usize]
        };
        for w in (1..reached).rev() {
            for &v in &predecessors[first[w]..first[w + 1]] {
                let u = eval(v, &mut ancestor, &mut label, &semi);
                if semi[u as usize] < semi[w] {
                    semi[w] = semi[u as usize];
                }
            }
            let s = semi[w] as usize;
            next_in_bucket[w] = bucket[s];
            bucket[s] = w as u32;
            let p = parent[w];
            ancestor[w] = p;
            let mut v = std::mem::replace(&mut bucket[p as usize], NONE);
            while v != NONE {
                let u = eval(v, &mut ancestor, &mut label, &semi);
                idom[v as usize] = if semi[u as usize] < semi[v as usize] {
                    u
                } else {
                    p
                };
                v = next_in_bucket[v as usize];
            }
        }
        for w in 1..reached {
            if idom[w] != semi[w] {
                idom[w] = idom[idom[w] as usize];
            }
        }
        // The tree's intervals, by a walk of its children lists.
        let mut child_first = vec![NONE; reached];
        let mut sibling = vec![NONE; reached];
        for w in (1..reached).rev() {
            let up = idom[w] as usize;
            sibling[w] = child_first[up];
            child_first[up] = w as u32;
        }
        let mut enter = vec![NONE; count];
        let mut leave = vec![NONE; count];
        let mut clock = 0u32;
        let mut walk: Vec<(u32, u32)> = Vec::new(); // (node, next child to enter)
        if reached > 0 {
            enter[vertex[0] as usize] = clock;
            clock += 1;
            walk.push((0, child_first[0]));
        }
        while let Some((node, child)) = walk.last_mut() {
            if *child == NONE {
                leave[vertex[*node as usize] as usize] = clock;
                walk.pop();
                continue;
            }
            let entered = *child;
            *child = sibling[entered as usize];
            enter[vertex[entered as usize] as usize] = clock;
            clock += 1;
            walk.push((entered, child_first[entered as usize]));
        }
        Dominators { enter, leave }
    }

    /// Whether node `a` dominates node `b` (every path from the root to `b` passes `a`; a
    /// node dominates itself). False when either is not reached.
    pub(crate) fn dominates(&self, a: usize, b: usize) -> bool {
        let (Some(&a_in), Some(&b_in)) = (self.enter.get(a), self.enter.get(b)) else {
            return false;
        };
        a_in != NONE && b_in != NONE && a_in <= b_in && self.leave[b] <= self.leave[a]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dominators of a graph given as successor lists.
    fn of(graph: &[&[usize]]) -> Dominators {
        Dominators::of(graph.len(), |node, out| out.extend_from_slice(graph[node]))
    }

    /// Every pair that dominates, as a list of `(a, b)`.
    fn pairs(graph: &[&[usize]]) -> Vec<(usize, usize)> {
        let dominators = of(graph);
        let nodes = 0..graph.len();
        let all = nodes
            .clone()
            .flat_map(|a| nodes.clone().map(move |b| (a, b)));
        all.filter(|&(a, b)| dominators.dominates(a, b)).collect()
    }

    /// The dominators by their definition: `a` dominates `b` when `b` is reached and no
    /// longer reached once `a` is taken out of the graph (or is `a`).
    fn by_definition(graph: &[&[usize]]) -> Vec<(usize, usize)> {
        let reach = |without: Option<usize>| {
            let mut seen = vec![false; graph.len()];
            let mut work = vec![0];
            while let Some(node) = work.pop() {
                if Some(node) == without || seen[node] {
                    continue;
                }
                seen[node] = true;
                work.extend_from_slice(graph[node]);
            }
            seen
        };
        let all = reach(None);
        let mut found = Vec::new();
        for a in 0..graph.len() {
            let without = reach(Some(a));
            for b in 0..graph.len() {
                if all[a] && all[b] && (a == b || !without[b]) {
                    found.push((a, b));
                }
            }
        }
        found
    }

    #[test]
    fn the_tree_agrees_with_the_definition() {
        // A diamond, a loop, an unreachable node, and an irreducible pair (2 and 3 each
        // entered from 1), as gotos make them.
        let graphs: [&[&[usize]]; 4] = [
            &[&[1, 2], &[3], &[3], &[]],
            &[&[1], &[2], &[1, 3], &[]],
            &[&[1], &[], &[1]],
            &[&[1], &[2, 3], &[3, 4], &[2, 4], &[]],
        ];
        for graph in graphs {
            assert_eq!(pairs(graph), by_definition(graph), "{graph:?}");
        }
        // Random graphs of twelve nodes.
        let mut next = crate::splice::numbers(11);
        for _ in 0..300 {
            let lists: Vec<Vec<usize>> = (0..12)
                .map(|_| (0..next(4)).map(|_| next(12)).collect())
                .collect();
            let graph: Vec<&[usize]> = lists.iter().map(Vec::as_slice).collect();
            assert_eq!(pairs(&graph), by_definition(&graph), "{graph:?}");
        }
    }
}
