//! Numbering the copies RustPython makes of a `finally` body, so that each goto pairs
//! with its label in the same copy, in the order [`crate::copies`] gives them (the same for
//! both backends). It walks the bytecode layer's control flow ([`Flow::successors`]) and
//! knows of the sites only where they are and their kind.

use std::collections::HashMap;

use super::{Site, SiteKind};
use crate::copies::CopyKeys;
use crate::rustpython::bytecode::{Body, EdgeKind, Flow, Label};

/// Numbers the copies the code generator made of each site (it compiles a `finally` body
/// once per way out of its `try`), so that copy k of a goto pairs with copy k of its label,
/// of a trampoline, of a switch's cases. Copies are ordered by [`CopyKeys`], not by where
/// they sit. A code object where no site has a copy (no marker in a `finally` body) needs
/// no order: `find_sites` numbered each site copy 0 of its own.
pub(super) fn number_copies(body: &Body, sites: &mut [Site]) {
    if sites.iter().all(|site| site.copy == 0) {
        return;
    }
    let flow = body.flow();
    let keys = CopyKeys::new(&Graph(&flow));
    // Sites start on instructions; a site that does not (none should) sorts first.
    let key = |site: &Site| {
        let index = flow.items().binary_search(&site.at).ok()?;
        Some(keys.key(index))
    };
    let mut by_kind: HashMap<SiteKind, Vec<usize>> = HashMap::new();
    for (index, site) in sites.iter().enumerate() {
        by_kind.entry(site.kind).or_default().push(index);
    }
    for indices in by_kind.values_mut() {
        if indices.len() == 1 {
            continue;
        }
        indices.sort_by_cached_key(|&index| key(&sites[index]));
        for (copy, &index) in indices.iter().enumerate() {
            sites[index].copy = copy;
        }
    }
}

/// RustPython's control flow as [`CopyKeys`] walks it.
struct Graph<'f, 'a>(&'f Flow<'a>);

impl crate::copies::Graph for Graph<'_, '_> {
    type Handler = Label;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn handler(&self, index: usize) -> Option<(Label, Option<usize>)> {
        let handler = self.0.instr(index)?.handler?;
        Some((handler.target, self.0.index_of(handler.target).ok()))
    }

    /// RustPython places a handler block of the statements before dead code between them
    /// and it: the statements of its own block are those under the same handler.
    fn belongs_with(&self, a: usize, b: usize) -> bool {
        self.0.instr(a).map(|instr| instr.handler) == self.0.instr(b).map(|instr| instr.handler)
    }

    fn successors(&self, index: usize) -> impl Iterator<Item = usize> {
        self.0
            .successors(index)
            .filter_map(Result::ok)
            .filter(|edge| !matches!(edge.kind, EdgeKind::Handler(_)))
            .map(|edge| edge.to)
    }
}
