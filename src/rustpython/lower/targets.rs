//! Choosing the jump targets of one code object before anything is lowered: a [`Label`]
//! for every label, case, switch end and trampoline entry, per copy, with the handler in
//! force there, so that gotos can go to either side of them.

use rustpython_compiler::core::bytecode::Instruction;

use super::context::Lowering;
use super::{Site, SiteKind};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{MarkerId, MarkerKind};
use crate::rustpython::bytecode::{Handler, Label};
use crate::rustpython::shapes::{self, Span};

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
