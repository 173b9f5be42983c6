//! Finding the sites of one code object: every run of instructions the rewrite replaces
//! (markers, trampoline tests and tails, switch ends), by the shapes of `crate::rustpython::shapes` and
//! the spans the [`Rewriter`] knows, and deleting the guards `prepare` added. What a site
//! becomes is decided later (`targets`, `apply`); this file only says where sites are.

use std::collections::{HashMap, HashSet};

use rustpython_compiler::core::bytecode::Instruction;

use super::{Rewriter, jump_op};
use crate::front::scan::{MarkerId, MarkerKind, ScopeId, SwitchId};
use crate::rustpython::bytecode::{Body, Item};
use crate::rustpython::shapes::{self, DISPATCH_LEN, MARKER_LEN, Span};
use crate::splice::{Splice, splice_all};

/// Something in a code object that the rewrite replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum SiteKind {
    /// A label or goto statement: three instructions (four for a switch or computed goto,
    /// with the `POP_TOP` of its value).
    Marker(ScopeId, MarkerId),
    /// The test of a trampoline (`LOAD label`, maybe `TO_BOOL`, a conditional jump).
    Entry(Span),
    /// The goto that ends a trampoline.
    Exit(Span),
    /// The end of a `while switch` statement.
    SwitchEnd(ScopeId, SwitchId),
}

/// One site: where it is, how many items it spans, and which copy it is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Site {
    pub(super) at: usize,
    pub(super) len: usize,
    pub(super) kind: SiteKind,
    /// How many times the same statement came before in this code object: the code
    /// generator compiles a `finally` body more than once, and the markers in each copy
    /// belong together.
    pub(super) copy: usize,
}

impl Rewriter<'_> {
    /// Every site to rewrite, in order, numbered in code order (`number_copies` numbers
    /// them again in the order the copies belong).
    pub(super) fn find_sites(&self, body: &Body) -> Vec<Site> {
        let mut sites = Vec::new();
        let mut seen: HashMap<SiteKind, usize> = HashMap::new();
        let mut at = 0;
        while at < body.items.len() {
            let Some((start, len, kind)) = self.site_at(body, at) else {
                at += 1;
                continue;
            };
            let copy = seen.entry(kind).or_default();
            sites.push(Site {
                at: start,
                len,
                kind,
                copy: *copy,
            });
            *copy += 1;
            at = start + len;
        }
        sites
    }

    /// The site at position `at`: where it starts (a switch or computed goto starts one
    /// item earlier, at the `POP_TOP` of its value), its length and kind.
    fn site_at(&self, body: &Body, at: usize) -> Option<(usize, usize, SiteKind)> {
        let Some(span) = body.items.get(at..).and_then(shapes::marker_shape) else {
            return shapes::guard_at(body, at, |span| self.trampolines.contains_key(span))
                .map(|guard| (at, guard.end - at, SiteKind::Entry(guard.span)));
        };
        if let Some(&(scope, marker)) = self.markers.get(&span) {
            let kind = &self.module.scopes[scope.0].marker(marker).kind;
            let takes_value = matches!(
                kind,
                MarkerKind::Switch(_) | MarkerKind::ComputedGoto { .. }
            );
            let site = SiteKind::Marker(scope, marker);
            if takes_value && shapes::value_popped_before(&body.items, at) {
                // The statement before left the value: its `POP_TOP` is replaced too.
                return Some((at - 1, DISPATCH_LEN, site));
            }
            return Some((at, MARKER_LEN, site));
        }
        if let Some(&(scope, switch)) = self.switch_ends.get(&span) {
            return Some((at, MARKER_LEN, SiteKind::SwitchEnd(scope, switch)));
        }
        self.trampolines
            .contains_key(&span)
            .then_some((at, MARKER_LEN, SiteKind::Exit(span)))
    }
}

/// Deletes each guard's test; a guard that jumps into its statement becomes a plain jump.
/// The list is built again once (a function with a `return` before each of thousands of
/// labels has a guard each, and splicing each in turn moved the rest of the list).
pub(super) fn remove_guards(body: &mut Body, guards: &HashSet<Span>) {
    if guards.is_empty() {
        return;
    }
    let mut splices = Vec::new();
    let mut at = 0;
    while at < body.items.len() {
        let Some(guard) = shapes::guard_at(body, at, |span| guards.contains(span)) else {
            at += 1;
            continue;
        };
        let items = match guard.jump.op {
            // `if label:` jumps past its statement when false: always fall into it.
            Instruction::PopJumpIfFalse { .. } => Vec::new(),
            // Jumps to its statement when true: always jump.
            _ => {
                let mut always = guard.jump;
                always.op = jump_op();
                always.inserted = true;
                always.handler = None;
                vec![Item::Instr(always)]
            }
        };
        splices.push(Splice {
            at,
            len: guard.end - at,
            items,
        });
        at = guard.end;
    }
    let items = std::mem::take(&mut body.items);
    body.items = splice_all(items, splices)
        .expect("the guards are found in order, none inside another")
        .0;
}
