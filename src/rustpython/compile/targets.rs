//! Choosing the jump targets of one code object before anything is lowered: a [`Label`]
//! for every label, case, switch end and trampoline entry, per copy, with the handler in
//! force there, so that gotos can go to either side of them.

use std::collections::HashMap;

use rustpython_compiler::core::bytecode::Instruction;

use super::lower::Lowering;
use super::{Site, SiteKind, broken};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{MarkerId, MarkerKind, Scope, SwitchId};
use crate::rustpython::bytecode::{Handler, Label};
use crate::rustpython::shapes::{self, Span};

/// Where a jump goes, with the handler in force there (a jump takes its target's).
pub(super) type Target = (Label, Option<Handler>);

/// Where each jump target of one code object is.
#[derive(Default)]
pub(super) struct Targets<'n> {
    /// Labels by name and copy.
    pub(super) labels: HashMap<(&'n str, usize), Target>,
    /// Where trampolines start, by span and copy.
    entries: HashMap<(Span, usize), Target>,
    /// Case markers by marker and copy.
    pub(super) cases: HashMap<(MarkerId, usize), Target>,
    /// Where each switch's default starts, by switch and copy.
    ends: HashMap<(SwitchId, usize), Target>,
}

impl Targets<'_> {
    /// The target of label `name` in copy `copy`, placed by its marker `marker`.
    pub(super) fn label(
        &self,
        name: &str,
        copy: usize,
        scope: &Scope,
        marker: MarkerId,
    ) -> Result<Target, Diagnostic> {
        self.labels
            .get(&(name, copy))
            .copied()
            .ok_or_else(|| broken(scope, marker, "a label without its target".to_owned()))
    }

    /// The target of case `marker` in copy `copy`.
    pub(super) fn case(
        &self,
        marker: MarkerId,
        copy: usize,
        scope: &Scope,
    ) -> Result<Target, Diagnostic> {
        self.cases
            .get(&(marker, copy))
            .copied()
            .ok_or_else(|| broken(scope, marker, "a case without its target".to_owned()))
    }

    /// Where switch `switch`'s default starts in copy `copy`; `marker` reports its absence.
    pub(super) fn end(
        &self,
        switch: SwitchId,
        copy: usize,
        scope: &Scope,
        marker: MarkerId,
    ) -> Result<Target, Diagnostic> {
        self.ends.get(&(switch, copy)).copied().ok_or_else(|| {
            broken(
                scope,
                marker,
                "cannot find where this switch ends in the compiled code".to_owned(),
            )
        })
    }

    /// Where the trampoline whose instructions carry `span` starts in copy `copy`, if the
    /// code generator kept it.
    pub(super) fn entry_if_kept(&self, span: Span, copy: usize) -> Option<Target> {
        self.entries.get(&(span, copy)).copied()
    }

    /// Where the trampoline whose instructions carry `span` starts in copy `copy`; a goto
    /// `marker` of the code object reports its absence.
    pub(super) fn entry(
        &self,
        span: Span,
        copy: usize,
        scope: &Scope,
        marker: MarkerId,
    ) -> Result<Target, Diagnostic> {
        self.entry_if_kept(span, copy)
            .ok_or_else(|| broken(scope, marker, "a trampoline without its target".to_owned()))
    }
}

impl Lowering<'_, '_> {
    /// A label for every jump target, and how many copies of each site there are.
    pub(super) fn choose_targets(&mut self) -> Result<(), Diagnostic> {
        for site in self.sites() {
            *self.copies.entry(site.kind).or_default() += 1;
            let handler = self.site_instr(&site)?.handler;
            match site.kind {
                SiteKind::Marker(_, marker) => self.marker_target(marker, site.copy, handler),
                SiteKind::SwitchEnd(_, switch) => {
                    let label = self.body.new_label();
                    self.targets
                        .ends
                        .insert((switch, site.copy), (label, handler));
                }
                SiteKind::Entry(span) => {
                    let label = match self.entry_jump(&site, span)? {
                        // `if label:` jumps past the copy when false: the copy starts next.
                        (Instruction::PopJumpIfFalse { .. }, _) => self.body.new_label(),
                        // Jumps to the copy when true.
                        (_, target) => target,
                    };
                    self.targets
                        .entries
                        .insert((span, site.copy), (label, handler));
                }
                SiteKind::Exit(_) => {}
            }
        }
        Ok(())
    }

    /// The target a label or case marker places (other markers place none).
    fn marker_target(&mut self, marker: MarkerId, copy: usize, handler: Option<Handler>) {
        let scope = self.scope;
        match &scope.marker(marker).kind {
            MarkerKind::Label { name, .. } => {
                let label = self.body.new_label();
                self.targets
                    .labels
                    .insert((name.as_str(), copy), (label, handler));
                self.placed.push((self.scope_id, marker));
            }
            MarkerKind::Case {
                switch: Some(_), ..
            } => {
                let label = self.body.new_label();
                self.targets.cases.insert((marker, copy), (label, handler));
            }
            _ => {}
        }
    }

    /// The conditional jump of a trampoline's test, and where it goes.
    pub(super) fn entry_jump(
        &self,
        site: &Site,
        span: Span,
    ) -> Result<(Instruction, Label), Diagnostic> {
        shapes::guard_at(&self.body, site.at, |found| *found == span)
            .and_then(|guard| Some((guard.jump.op, guard.jump.target?)))
            .ok_or_else(|| self.lost("a trampoline's test without its conditional jump"))
    }
}
