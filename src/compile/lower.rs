//! Lowering one code object: the per-code-object context ([`Lowering`]) that the steps after
//! finding the sites share, the plan (what each site becomes, as a [`Splice`]) and its
//! application (the splices back to front, the cold blocks, the search handlers' depths,
//! then `assemble`). Choosing the targets is in `targets`, a goto's cleanup in `goto`, a
//! switch's or computed goto's search in `dispatch`.

use std::collections::HashMap;

use ruff_text_size::TextRange;
use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{ConstantData, Instruction};

use super::dispatch::{UnknownDepth, set_search_depths};
use super::goto::GotoAt;
use super::targets::Targets;
use super::{
    REMOVED_AS_UNREACHABLE, Rewriter, Site, SiteKind, broken, internal, jump_op, lost_track,
    refuse, times,
};
use crate::bytecode::{Body, Instr, Item, Label};
use crate::diagnostic::Diagnostic;
use crate::scan::{MarkerId, MarkerKind, Scope, ScopeId};
use crate::shapes::{self, Span};

/// One code object being rewritten: its instruction list, its sites, the targets chosen for
/// them and what lowering adds. The sites of one code object all belong to one scope.
pub(super) struct Lowering<'r, 'c> {
    pub(super) rewriter: &'r Rewriter<'r>,
    pub(super) code: &'c CodeObject,
    pub(super) scope_id: ScopeId,
    pub(super) scope: &'r Scope,
    /// The marker of the first site, where a failure of the whole code object is reported.
    first: MarkerId,
    pub(super) body: Body,
    sites: Vec<Site>,
    pub(super) targets: Targets<'r>,
    pub(super) added: Additions,
    /// How many copies of each site the code generator made.
    pub(super) copies: HashMap<SiteKind, usize>,
    /// The labels placed in this code object.
    pub(super) placed: Vec<(ScopeId, MarkerId)>,
}

/// What lowering one code object adds besides its instruction list.
pub(super) struct Additions {
    /// Blocks reached only as handlers, placed after everything else.
    pub(super) cold: Vec<Item>,
    constants: Vec<ConstantData>,
    names: Vec<String>,
    /// Handlers of searches, whose depth is known only once the code is complete.
    pub(super) unknown_depths: Vec<UnknownDepth>,
}

impl Additions {
    /// The index of `value` among the code object's constants, added if new.
    pub(super) fn constant(&mut self, value: ConstantData) -> u32 {
        let index = match self.constants.iter().position(|c| *c == value) {
            Some(index) => index,
            None => {
                self.constants.push(value);
                self.constants.len() - 1
            }
        };
        index as u32
    }

    /// The index of `name` among the code object's names, added if new.
    pub(super) fn name(&mut self, name: &str) -> u32 {
        let index = match self.names.iter().position(|n| n == name) {
            Some(index) => index,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        };
        index as u32
    }
}

/// What replaces one site.
pub(super) struct Splice {
    at: usize,
    len: usize,
    items: Vec<Item>,
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

impl<'r, 'c> Lowering<'r, 'c> {
    /// The context for lowering `sites` of `code`, or `None` when there are none.
    pub(super) fn new(
        rewriter: &'r Rewriter<'r>,
        code: &'c CodeObject,
        body: Body,
        sites: Vec<Site>,
    ) -> Result<Option<Self>, Diagnostic> {
        let Some(first_site) = sites.first() else {
            return Ok(None);
        };
        let (scope_id, first) = match first_site.kind {
            SiteKind::Marker(scope, marker) => (scope, marker),
            SiteKind::SwitchEnd(scope, switch) => {
                (scope, rewriter.module.scopes[scope.0].switch_marker(switch))
            }
            SiteKind::Entry(span) | SiteKind::Exit(span) => {
                let trampoline = rewriter.trampoline(span)?;
                (trampoline.scope, trampoline.goto)
            }
        };
        Ok(Some(Lowering {
            rewriter,
            code,
            scope_id,
            scope: &rewriter.module.scopes[scope_id.0],
            first,
            body,
            sites,
            targets: Targets::default(),
            added: Additions {
                cold: Vec::new(),
                constants: code.constants.to_vec(),
                names: code.names.to_vec(),
                unknown_depths: Vec::new(),
            },
            copies: HashMap::new(),
            placed: Vec::new(),
        }))
    }

    /// The sites, in code order.
    pub(super) fn sites(&self) -> Vec<Site> {
        self.sites.clone()
    }

    /// The first instruction of `site`.
    pub(super) fn site_instr(&self, site: &Site) -> Result<Instr, Diagnostic> {
        match self.body.items.get(site.at) {
            Some(Item::Instr(instr)) => Ok(instr.clone()),
            _ => Err(broken(
                self.scope,
                self.first,
                "a site of the rewrite is not on an instruction".to_owned(),
            )),
        }
    }

    /// What each site becomes, back to front (the order they are spliced in, so that each
    /// splice leaves the positions before it valid, and the order labels and constants are
    /// allocated in). Lowering reads the code as compiled, which is what it would read with
    /// the later sites already spliced: the cleanup it copies (`with` exits, unbinding,
    /// handler blocks) is never part of a site, and what it inserts never has a `with`
    /// statement's location. The one thing that depends on the spliced code, the line of a
    /// trampoline test's jump, is left to [`Lowering::apply`].
    pub(super) fn plan(&mut self) -> Result<Vec<Splice>, Diagnostic> {
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
                    let marker = self.scope.switch_marker(switch);
                    let (end, _) = self.targets.end(switch, site.copy, self.scope, marker)?;
                    vec![Item::Label(end)]
                }
            };
            splices.push(Splice {
                at: site.at,
                len: site.len,
                items,
                lands_at,
            });
        }
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

    /// The splices, back to front, then the labels placed, ready to assemble.
    pub(super) fn apply(mut self, splices: Vec<Splice>) -> Result<Lowered, Diagnostic> {
        for splice in splices {
            let mut items = splice.items;
            if let Some(over) = splice.lands_at
                && let Some(Item::Instr(jump)) = items.first_mut()
            {
                let lands = self.first_instr_at(over)?;
                if let Some(lands) = lands {
                    jump.location = lands.location;
                    jump.line = lands.line;
                }
            }
            let end = splice.at + splice.len;
            if end > self.body.items.len() {
                return Err(self.lost("a site past the end of the code"));
            }
            self.body.items.splice(splice.at..end, items);
        }
        Ok(Lowered {
            body: self.body,
            added: self.added,
            range: self.scope.marker(self.first).range,
            placed: self.placed,
        })
    }

    /// The first instruction at or after `label`, if any.
    fn first_instr_at(&self, label: Label) -> Result<Option<&Instr>, Diagnostic> {
        let Some(at) = shapes::label_position(&self.body, label) else {
            return Err(self.lost("a jump target that is not placed"));
        };
        Ok(self.body.items.iter().skip(at).find_map(|item| match item {
            Item::Instr(next) => Some(next),
            Item::Label(_) => None,
        }))
    }

    /// An internal error of this code object, at its first site.
    pub(super) fn lost(&self, what: &str) -> Diagnostic {
        lost_track(self.scope.marker(self.first).range, what)
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
        code.constants = self.added.constants.into_iter().collect();
        code.names = self.added.names.into_boxed_slice();
        self.body.fold_line_events(code);
        self.body
            .assemble(code)
            .map_err(|e| internal(code, self.range, e))?;
        Ok(self.placed)
    }
}
