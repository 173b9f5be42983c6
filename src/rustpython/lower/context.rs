//! The context one code object's lowering shares ([`Lowering`]): its instruction list and
//! sites, the targets chosen for them (`Targets`), what lowering adds (`Additions`) and
//! what the computed gotos of the code object share. The steps (`targets`, `goto`,
//! `dispatch`, `levels`) each add methods to it; `apply` plans and applies them.

use std::collections::HashMap;
use std::rc::Rc;

use ruff_text_size::TextRange;
use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::ConstantData;

use super::search::{SharedSearch, UnknownDepth};
use super::{Rewriter, Site, SiteKind, broken, lost_track};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{MarkerId, Scope, ScopeId, SwitchId};
use crate::rustpython::bytecode::{Body, Handler, Instr, Item, Label};
use crate::rustpython::shapes::Span;

/// One code object being rewritten: its instruction list, its sites, the targets chosen for
/// them and what lowering adds. The sites of one code object all belong to one scope.
pub(super) struct Lowering<'r, 'c> {
    pub(super) rewriter: &'r Rewriter<'r>,
    pub(super) code: &'c CodeObject,
    pub(super) scope_id: ScopeId,
    pub(super) scope: &'r Scope,
    /// The marker of the first site, where a failure of the whole code object is reported.
    pub(super) first: MarkerId,
    pub(super) body: Body,
    pub(super) sites: Vec<Site>,
    pub(super) targets: Targets<'r>,
    pub(super) added: Additions,
    /// How many copies of each site the code generator made.
    pub(super) copies: HashMap<SiteKind, usize>,
    /// The labels placed in this code object.
    pub(super) placed: Vec<(ScopeId, MarkerId)>,
    /// The computed gotos that share a search, by marker: each one's number and the search.
    pub(super) shared: HashMap<MarkerId, (usize, Rc<SharedSearch>)>,
    /// What the computed gotos that leave frames share.
    pub(super) levels_shared: Shared<'r>,
}

/// What lowering one code object adds besides its instruction list.
pub(super) struct Additions {
    /// Blocks reached only as handlers, and the searches by number of computed gotos that
    /// leave frames, placed after everything else.
    pub(super) cold: Vec<Item>,
    pub(super) constants: Indexed<ConstantData>,
    pub(super) names: Indexed<String>,
    /// Handlers of searches, whose depth is known only once the code is complete.
    pub(super) unknown_depths: Vec<UnknownDepth>,
}

/// A code object's constants or names, with the index of each value: a search tree over
/// thousands of labels adds a constant per label, so finding one must not scan the list.
pub(super) struct Indexed<T> {
    pub(super) values: Vec<T>,
    /// The first index of each value (nested code objects are left out: they equal only
    /// themselves, and the one lowering may add, a search function, is added as new).
    pub(super) index: HashMap<T, u32>,
}

impl<T: Clone + Eq + std::hash::Hash> Indexed<T> {
    fn new(values: Vec<T>, indexed: impl Fn(&T) -> bool) -> Self {
        let mut index = HashMap::with_capacity(values.len());
        for (at, value) in values.iter().enumerate() {
            if indexed(value) {
                index.entry(value.clone()).or_insert(at as u32);
            }
        }
        Indexed { values, index }
    }

    /// The index of `value`, added if new.
    fn get_or_add(&mut self, value: T) -> u32 {
        if let Some(&at) = self.index.get(&value) {
            return at;
        }
        let at = self.values.len() as u32;
        self.values.push(value.clone());
        self.index.insert(value, at);
        at
    }
}

impl Additions {
    /// The index of `value` among the code object's constants, added if new.
    pub(super) fn constant(&mut self, value: ConstantData) -> u32 {
        self.constants.get_or_add(value)
    }

    /// The index of a constant added that equals no other (a code object, which is not
    /// looked up).
    pub(super) fn new_constant(&mut self, value: ConstantData) -> u32 {
        let at = self.constants.values.len() as u32;
        self.constants.values.push(value);
        at
    }

    /// The index of `name` among the code object's names, added if new.
    pub(super) fn name(&mut self, name: &str) -> u32 {
        self.names.get_or_add(name.to_owned())
    }
}

impl<'r, 'c> Lowering<'r, 'c> {
    /// The context for lowering `sites` of `code` (at least one).
    pub(super) fn new(
        rewriter: &'r Rewriter<'r>,
        code: &'c CodeObject,
        body: Body,
        sites: Vec<Site>,
    ) -> Result<Self, Diagnostic> {
        let first_site = (sites.first())
            .ok_or_else(|| lost_track(TextRange::default(), "a lowering without sites"))?;
        let (scope_id, first) = match first_site.kind {
            SiteKind::Marker(scope, marker) => (scope, marker),
            SiteKind::SwitchEnd(scope, switch) => {
                (scope, rewriter.module.scopes[scope.0].switch(switch).marker)
            }
            SiteKind::Entry(span) | SiteKind::Exit(span) => {
                let trampoline = rewriter.trampoline(span)?;
                (trampoline.scope, trampoline.goto)
            }
        };
        Ok(Lowering {
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
                constants: Indexed::new(code.constants.to_vec(), |constant| {
                    !matches!(constant, ConstantData::Code { .. })
                }),
                names: Indexed::new(code.names.to_vec(), |_| true),
                unknown_depths: Vec::new(),
            },
            copies: HashMap::new(),
            placed: Vec::new(),
            shared: HashMap::new(),
            levels_shared: Shared::default(),
        })
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

    /// An internal error of this code object, at its first site.
    pub(super) fn lost(&self, what: &str) -> Diagnostic {
        lost_track(self.scope.marker(self.first).range, what)
    }
}

/// Where a jump goes, with the handler in force there (a jump takes its target's).
pub(super) type Target = (Label, Option<Handler>);

/// Where each jump target of one code object is.
#[derive(Default)]
pub(super) struct Targets<'n> {
    /// Labels by name and copy.
    pub(super) labels: HashMap<(&'n str, usize), Target>,
    /// Where trampolines start, by span and copy.
    pub(super) entries: HashMap<(Span, usize), Target>,
    /// Case markers by marker and copy.
    pub(super) cases: HashMap<(MarkerId, usize), Target>,
    /// Where each switch's default starts, by switch and copy.
    pub(super) ends: HashMap<(SwitchId, usize), Target>,
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

/// What the places of one code object that leave frames share.
#[derive(Default)]
pub(super) struct Shared<'r> {
    /// The labels kept in this code object, by frame code: each one's number and name, in
    /// source order (so by number).
    pub(super) by_frame: Option<HashMap<i64, Vec<(i64, &'r str)>>>,
    /// The constants of the search function and of the frame code of each label by number
    /// (-1 for none), once a place needs them.
    pub(super) function: Option<(u32, u32)>,
    /// The search by number of each level a place jumps to, with the place that asked for
    /// it first (whose location and marker its instructions take).
    pub(super) entries: Vec<(i64, Label, Site, MarkerId, Instr)>,
    pub(super) entry_of: HashMap<i64, Label>,
}
