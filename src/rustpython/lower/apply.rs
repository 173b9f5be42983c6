//! Lowering one code object over its context ([`Lowering`]): the plan (what each site
//! becomes, as a [`Splice`]) and its application (the splices back to front, the cold
//! blocks, the search handlers' depths, then `assemble`). Choosing the targets is in
//! `targets`, a goto's cleanup in `goto`, a switch's or computed goto's search in
//! `dispatch`.

use std::collections::HashMap;

use ruff_text_size::TextRange;
use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::Instruction;

use super::context::{Additions, Lowering};
use super::goto::GotoAt;
use super::search::set_search_depths;
use super::{REMOVED_AS_UNREACHABLE, Site, SiteKind, broken, internal, jump_op, refuse, times};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{MarkerId, MarkerKind, ScopeId};
use crate::rustpython::bytecode::{Body, Instr, Item, Label};
use crate::rustpython::shapes::Span;

/// What replaces one site.
pub(super) struct Splice {
    splice: crate::splice::Splice<Item>,
    /// For a trampoline's test that becomes a jump over its copy (the first item): the
    /// label it jumps to. The jump takes the line of the first instruction there once
    /// everything after the site is lowered, so that it adds no line event of its own.
    lands_at: Option<Label>,
}

/// A code object lowered, before it is assembled.
pub(super) struct Lowered {
    body: Body,
    added: Additions,
    /// Where a failure to assemble is reported.
    range: TextRange,
    placed: Vec<(ScopeId, MarkerId)>,
}

impl<'r> Lowering<'r, '_> {
    /// What each site becomes, back to front (the order they are spliced in, so that each
    /// splice leaves the positions before it valid, and the order labels and constants are
    /// allocated in). Lowering reads the code as compiled, which is what it would read with
    /// the later sites already spliced: the cleanup it copies (`with` exits, unbinding,
    /// handler blocks) is never part of a site, and what it inserts never has a `with`
    /// statement's location. The one thing that depends on the spliced code, the line of a
    /// trampoline test's jump, is left to [`Lowering::apply`].
    pub(super) fn plan(&mut self) -> Result<Vec<Splice>, Diagnostic> {
        self.shared = self.shared_searches()?;
        let mut splices = Vec::with_capacity(self.sites.len());
        for site in self.sites().iter().rev() {
            let instr = self.site_instr(site)?;
            let mut lands_at = None;
            let items = match site.kind {
                SiteKind::Marker(_, marker) => self.lower_marker(site, marker, &instr)?,
                SiteKind::Entry(span) => {
                    let (items, over) = self.lower_entry(site, span, &instr)?;
                    lands_at = over;
                    items
                }
                SiteKind::Exit(span) => self.lower_exit(site, span, &instr)?,
                SiteKind::SwitchEnd(_, switch) => {
                    let marker = self.scope.switch(switch).marker;
                    let (end, _) = self.targets.end(switch, site.copy, self.scope, marker)?;
                    vec![Item::Label(end)]
                }
            };
            splices.push(Splice {
                splice: crate::splice::Splice {
                    at: site.at,
                    len: site.len,
                    items,
                },
                lands_at,
            });
        }
        let searches = self.level_searches()?;
        self.added.cold.extend(searches);
        Ok(splices)
    }

    /// What a marker becomes: a label, a goto's cleanup and jump, a search.
    fn lower_marker(
        &mut self,
        site: &Site,
        marker: MarkerId,
        instr: &Instr,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = self.scope;
        match &scope.marker(marker).kind {
            MarkerKind::Label { name, .. } => {
                let (label, _) = self.targets.label(name, site.copy, scope, marker)?;
                Ok(vec![
                    Item::Label(label),
                    Item::Instr(Instr::line_event(instr)),
                ])
            }
            MarkerKind::Case {
                switch: Some(_), ..
            } => {
                let (label, _) = self.targets.case(marker, site.copy, scope)?;
                Ok(vec![
                    Item::Label(label),
                    Item::Instr(Instr::line_event(instr)),
                ])
            }
            MarkerKind::Switch(switch) => self.lower_switch(*site, marker, *switch),
            MarkerKind::ComputedGoto { .. } => self.lower_computed_goto(*site, marker),
            MarkerKind::Goto { name, .. } => self.lower_plain_goto(site, marker, name, instr),
            _ => Ok(Vec::new()),
        }
    }

    /// `goto .name`, compiled as often as its label.
    fn lower_plain_goto(
        &mut self,
        site: &Site,
        marker: MarkerId,
        name: &'r str,
        instr: &Instr,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = self.scope;
        let Some(label) = scope.labels.get(name) else {
            return Err(broken(
                scope,
                marker,
                format!("label `.{name}` got past the checker"),
            ));
        };
        let copies_of = |kind: SiteKind| self.copies.get(&kind).copied().unwrap_or(0);
        let label_copies = copies_of(SiteKind::Marker(self.scope_id, label.definition));
        let goto_copies = copies_of(site.kind);
        if label_copies == 0 {
            return Err(refuse(
                scope,
                marker,
                format!("the code generator removed label `.{name}` as unreachable"),
                REMOVED_AS_UNREACHABLE,
            ));
        }
        if label_copies != goto_copies {
            return Err(broken(
                scope,
                marker,
                format!(
                    "the code generator compiled this goto {} and label `.{name}` {}",
                    times(goto_copies),
                    times(label_copies)
                ),
            ));
        }
        let goto = GotoAt {
            marker,
            from: scope.marker(marker).frame,
            label: name,
        };
        self.lower_goto(instr, site, goto)
    }

    /// A trampoline's test: when it jumps over the copy when false (`if label:`), ordinary
    /// control flow jumps over the copy, whose start is the entry; when it jumps to the copy,
    /// nothing. Gives the items and, for the jump, where it lands.
    fn lower_entry(
        &mut self,
        site: &Site,
        span: Span,
        instr: &Instr,
    ) -> Result<(Vec<Item>, Option<Label>), Diagnostic> {
        let (condition, over) = self.entry_jump(site, span)?;
        if !matches!(condition, Instruction::PopJumpIfFalse { .. }) {
            return Ok((Vec::new(), None));
        }
        // The jump's line is the one where it lands, set when it is spliced in.
        let mut jump = Instr::like(instr, jump_op(), 0, Some(over));
        jump.handler = instr.handler;
        let (entry, _) = self
            .targets
            .entry(span, site.copy, self.scope, self.first)?;
        Ok((vec![Item::Instr(jump), Item::Label(entry)], Some(over)))
    }

    /// The goto that ends a trampoline: on from its `try` statement's level.
    fn lower_exit(
        &mut self,
        site: &Site,
        span: Span,
        instr: &Instr,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = self.scope;
        let trampoline = self.rewriter.trampoline(span)?;
        let MarkerKind::Goto { name, .. } = &scope.marker(trampoline.goto).kind else {
            return Err(broken(
                scope,
                trampoline.goto,
                "a trampoline made for something other than a goto".to_owned(),
            ));
        };
        let goto = GotoAt {
            marker: trampoline.goto,
            from: scope.frame(trampoline.frame).parent,
            label: name,
        };
        self.lower_goto(instr, site, goto)
    }

    /// The splices (as [`Lowering::plan`] gives them, back to front) applied in one pass
    /// over the code, front to back, then the labels placed, ready to assemble. A
    /// trampoline test's jump takes its line from the finished code.
    pub(super) fn apply(mut self, splices: Vec<Splice>) -> Result<Lowered, Diagnostic> {
        let (splices, lands): (Vec<_>, Vec<_>) = splices
            .into_iter()
            .rev()
            .map(|planned| (planned.splice, planned.lands_at))
            .unzip();
        let items = std::mem::take(&mut self.body.items);
        let Some((items, starts)) = crate::splice::splice_all(items, splices) else {
            return Err(self.lost("a site past the end of the code, or overlapping another"));
        };
        self.body.items = items;
        let landing: Vec<(usize, Label)> = starts
            .into_iter()
            .zip(lands)
            .filter_map(|(at, over)| Some((at, over?)))
            .collect();
        self.land_jumps(&landing)?;
        Ok(Lowered {
            body: self.body,
            added: self.added,
            range: self.scope.marker(self.first).range,
            placed: self.placed,
        })
    }

    /// Gives each trampoline test's jump (at its index, to its label) the location of the
    /// first instruction where it lands, so that it adds no line event of its own.
    fn land_jumps(&mut self, landing: &[(usize, Label)]) -> Result<(), Diagnostic> {
        if landing.is_empty() {
            return Ok(());
        }
        let mut wanted: HashMap<Label, Option<usize>> =
            landing.iter().map(|&(_, over)| (over, None)).collect();
        // The first instruction at or after each label, in one pass from the back.
        crate::splice::count(self.body.items.len());
        let mut next_instr = None;
        for (at, item) in self.body.items.iter().enumerate().rev() {
            match item {
                Item::Instr(_) => next_instr = Some(at),
                Item::Label(label) => {
                    if let Some(slot) = wanted.get_mut(label) {
                        *slot = Some(next_instr.unwrap_or(usize::MAX));
                    }
                }
            }
        }
        // From the back: a jump that lands on another such jump takes its line once that
        // one has its own.
        for &(at, over) in landing.iter().rev() {
            let Some(Some(lands)) = wanted.get(&over).copied() else {
                return Err(self.lost("a jump target that is not placed"));
            };
            let Some(Item::Instr(lands)) = self.body.items.get(lands) else {
                continue;
            };
            let (location, line) = (lands.location, lands.line);
            if let Some(Item::Instr(jump)) = self.body.items.get_mut(at) {
                jump.location = location;
                jump.line = line;
            }
        }
        Ok(())
    }
}

impl Lowered {
    /// Adds the cold blocks, gives the search handlers their depths, and assembles the
    /// result into `code`. Gives the labels placed.
    pub(super) fn assemble(
        mut self,
        code: &mut CodeObject,
    ) -> Result<Vec<(ScopeId, MarkerId)>, Diagnostic> {
        self.body.items.extend(self.added.cold);
        set_search_depths(&mut self.body, &self.added.unknown_depths)
            .map_err(|e| internal(code, self.range, e))?;
        code.constants = self.added.constants.values.into_iter().collect();
        code.names = self.added.names.values.into_boxed_slice();
        self.body.fold_line_events(code);
        self.body
            .assemble(code)
            .map_err(|e| internal(code, self.range, e))?;
        Ok(self.placed)
    }
}
