//! Switches and computed gotos: a balanced binary search ([`crate::search`]) of comparisons
//! over the value the subject's statement left on the stack, under a handler of its own so
//! that a comparison that raises goes where no match goes; the computed gotos of one place
//! share one search (which ones, and how).

use std::collections::HashMap;
use std::rc::Rc;

use super::{LowerError, Lowering, Site, Targets, internal};
use crate::cpython::bytecode::{Handler, Instr, Item, Label};
use crate::cpython::code::Constant;
use crate::cpython::plan::{CaseConstant, ComputedSearch, GotoPlan, Levels, SwitchPlan};
use crate::plan::cases::NO_SUCH_LABEL;
use crate::search::{Step, balanced};
use crate::tables::NO_POSITION;

/// Where a search goes when nothing matches.
pub(super) enum Miss {
    /// A switch: the leaf's `==` takes the value off the stack, and no match goes to the
    /// switch's end (its default).
    End(Label),
    /// A computed goto: the value stays on the stack for the error that reports it. The
    /// search compares the slot this deep (1: the top).
    Keep(Label, u32),
}

/// How a computed goto finds its label: by a search in line among the labels it may reach,
/// each with the copy it goes to, or through the scope's search function, by its levels
/// (`levels`).
#[derive(Clone, Copy)]
pub(super) enum Way<'a, 'p> {
    InLine(&'a [(&'p GotoPlan, usize)]),
    Levels(&'p Levels),
}

/// Where a computed goto's search may be shared with the others there: the labels of one
/// frame (the plan's place), reached from the same stack depth under the same handler.
pub(super) type SharedPlace = (usize, i64, Option<Handler>);

/// The one search of the computed gotos of one place, in the code of the last of them:
/// each other one pushes its number (where one alone pushes `None`) and jumps forward to
/// it. A value no label has goes on to a search of those numbers, which raises the error on
/// the goto's own line.
pub(super) struct SharedSearch {
    /// Where the search starts.
    entry: Label,
    /// The plan indices of the computed gotos, in the order of the code: the k-th pushes k.
    numbers: Vec<usize>,
    /// Where each one's error is raised, in that order.
    raises: Vec<Label>,
}

impl<'p> Lowering<'p> {
    /// The search that replaces a switch's subject `POP_TOP` and dispatch marker: the
    /// subject stays on the stack, each leaf's `==` takes it off and jumps to its case, and
    /// no match (or anything raised by a comparison) goes to the end.
    pub(super) fn lower_switch(
        &mut self,
        marker: &Instr,
        plan: &SwitchPlan,
        cases: Vec<Label>,
        end: Label,
    ) -> Result<Vec<Item>, LowerError> {
        let depth = self.analysis()?.depth_at(end).unwrap_or(0);
        let guard = Handler {
            target: self.body.new_label(),
            depth: u32::try_from(depth).unwrap_or(0),
            lasti: false,
        };
        let keys: Vec<(u32, Label)> = plan
            .cases
            .iter()
            .zip(cases)
            .map(|(case, label)| (self.constant(case_constant(&case.value)), label))
            .collect();
        let mut items = self.search(&keys, marker, Some(guard), Miss::End(end))?;
        let pop_top = self.op("POP_TOP")?;
        let jump_forward = self.shapes().jump_forward;
        items.push(Item::Label(guard.target));
        items.push(Item::Instr(self.body.like(marker, pop_top, 0, None)));
        items.push(Item::Instr(self.body.like(
            marker,
            jump_forward,
            0,
            Some(end),
        )));
        Ok(items)
    }

    /// What replaces the `*` and the `POP_TOP` of the computed goto `number` at `at`: its
    /// search as `way` says, or its part of the search it shares with others of its place,
    /// its load of `goto` (at `none_loads`) then one of its number there.
    pub(super) fn lower_computed_site(
        &mut self,
        at: usize,
        number: usize,
        way: Way<'_, 'p>,
        shared: Option<&(usize, Rc<SharedSearch>)>,
        none_loads: &HashMap<usize, usize>,
    ) -> Result<Vec<Item>, LowerError> {
        let multiply = self.instr_at(at)?;
        self.own_reference(at - 1);
        let Some((own, search)) = shared else {
            return self.lower_computed(&multiply, at, number, way);
        };
        let constant = self.constant(Constant::Int(format!("{own:x}")));
        if let Some(load) = (none_loads.get(&number))
            .and_then(|&load| self.body.items.get_mut(load))
            .and_then(Item::instr_mut)
        {
            load.arg = constant;
        }
        self.lower_shared(&multiply, at, *own, search, way)
    }

    /// The search that replaces the `*` and the `POP_TOP` of `goto *value`, whose load of
    /// `goto` left a `None` under the value: each leaf that matches goes to a stub that
    /// drops both and goes to its label as `goto .name` would; no match (or anything raised
    /// by a comparison) raises `ValueError`, which formats the value.
    fn lower_computed(
        &mut self,
        multiply: &Instr,
        at: usize,
        number: usize,
        way: Way<'_, 'p>,
    ) -> Result<Vec<Item>, LowerError> {
        // The search and the error span the keyword `goto`, as its marker would.
        let site = Instr {
            position: self.scope.computed[number].keyword,
            ..multiply.clone()
        };
        let (mut items, miss) = self.find(&site, at, way)?;
        items.push(Item::Label(miss));
        let texts = self.no_such_label_texts(number);
        items.extend(self.raise_unknown(&site, number, way, texts)?);
        Ok(items)
    }

    /// The search for the value on top of the stack that `way` says, from `site` at `at`
    /// in the list; where no match goes, the value still on the stack.
    fn find(
        &mut self,
        site: &Instr,
        at: usize,
        way: Way<'_, 'p>,
    ) -> Result<(Vec<Item>, Label), LowerError> {
        match way {
            Way::InLine(chosen) => self.computed_search(site, at, chosen),
            Way::Levels(levels) => self.levels_search(site, levels),
        }
    }

    /// The `ValueError` of the computed goto `number` for the value on top of the stack:
    /// formatted with the place's `texts` in line, or built by the search function.
    fn raise_unknown(
        &mut self,
        site: &Instr,
        number: usize,
        way: Way<'_, 'p>,
        texts: Option<(u32, u32)>,
    ) -> Result<Vec<Item>, LowerError> {
        match (way, texts) {
            (Way::Levels(levels), _) => self.raise_from_function(site, number, levels),
            (Way::InLine(_), Some(texts)) => self.raise_no_such_label(site, number, texts),
            (Way::InLine(_), None) => Err(internal(
                "a computed goto's error has no text",
                site.position,
            )),
        }
    }

    /// What replaces the `*` and the `POP_TOP` of the `own`-th computed goto of a place
    /// that shares `search`, its load of `goto` now one of `own`: a jump to the search, or
    /// for the last one the search itself. The search and its stubs carry no position (no
    /// line event, no line of another goto); a value no label has goes on to a search of
    /// the numbers, which finds the goto whose error to raise, on its own line (there the
    /// line is an event again). The jumps to the search and those of both searches go
    /// forward: 3.11 has no backward conditional jumps, and a forward jump is never
    /// interrupted, so never taken for a failed comparison by the guard it lands under.
    fn lower_shared(
        &mut self,
        multiply: &Instr,
        at: usize,
        own: usize,
        search: &SharedSearch,
        way: Way<'_, 'p>,
    ) -> Result<Vec<Item>, LowerError> {
        // The number sits under the value.
        const NUMBER: u32 = 2;
        if own + 1 < search.numbers.len() {
            let jump_forward = self.shapes().jump_forward;
            let site = Instr {
                position: self.scope.computed[search.numbers[own]].keyword,
                ..multiply.clone()
            };
            return Ok(vec![Item::Instr(self.body.like(
                &site,
                jump_forward,
                0,
                Some(search.entry),
            ))]);
        }
        let nowhere = Instr {
            position: NO_POSITION,
            ..multiply.clone()
        };
        let mut items = vec![Item::Label(search.entry)];
        let (found, miss) = self.find(&nowhere, at, way)?;
        items.extend(found);
        items.push(Item::Label(miss));
        let keys: Vec<(u32, Label)> = (search.raises.iter().enumerate())
            .map(|(own, &raise)| (self.constant(Constant::Int(format!("{own:x}"))), raise))
            .collect();
        let miss = Miss::Keep(search.raises[0], NUMBER);
        items.extend(self.search(&keys, &nowhere, None, miss)?);
        // The texts are the place's: added once, not once per goto.
        let texts = self.no_such_label_texts(search.numbers[own]);
        for (&number, &raise) in search.numbers.iter().zip(&search.raises) {
            let site = Instr {
                position: self.scope.computed[number].keyword,
                ..multiply.clone()
            };
            items.push(Item::Label(raise));
            items.extend(self.raise_unknown(&site, number, way, texts)?);
        }
        Ok(items)
    }

    /// The search among the labels `chosen` of a computed goto whose `*` is `site` (at `at`
    /// in the list), each leaf that matches going to a stub that drops the value and what
    /// is under it and goes to its label as `goto .name` would; then the guard of its
    /// comparisons, which drops what they raised. Returns where no match goes, the value
    /// still on the stack: the caller places it.
    fn computed_search(
        &mut self,
        site: &Instr,
        at: usize,
        chosen: &[(&GotoPlan, usize)],
    ) -> Result<(Vec<Item>, Label), LowerError> {
        let pop_top = self.op("POP_TOP")?;
        let analysis = self.analysis()?;
        let depth = analysis
            .index_of
            .get(site.id)
            .and_then(|at| analysis.stack[at])
            .unwrap_or(0);
        let guard = Handler {
            target: self.body.new_label(),
            depth: u32::try_from(depth).unwrap_or(0),
            lasti: false,
        };
        let miss = self.body.new_label();
        let mut keys = Vec::with_capacity(chosen.len());
        let mut stubs = Vec::new();
        for &(target, copy) in chosen {
            let stub = self.body.new_label();
            keys.push((self.constant(Constant::Str(target.name.clone())), stub));
            stubs.push(Item::Label(stub));
            for _ in 0..2 {
                stubs.push(Item::Instr(self.body.new_instr(
                    pop_top,
                    0,
                    None,
                    site.position,
                )));
            }
            stubs.extend(self.lower_goto(site, at, target, copy)?);
        }
        let mut items = self.search(&keys, site, Some(guard), Miss::Keep(miss, 1))?;
        items.extend(stubs);
        items.push(Item::Label(guard.target));
        items.push(Item::Instr(self.body.like(site, pop_top, 0, None)));
        Ok((items, miss))
    }

    /// `raise ValueError(f"{before}{value!r}{after}")` with the plan's texts, as this
    /// version's compiler writes it, the value on top of the stack (a copy of it formatted),
    /// `ValueError` loaded the way the computed goto loaded `goto`.
    fn raise_no_such_label(
        &mut self,
        site: &Instr,
        number: usize,
        (before, after): (u32, u32),
    ) -> Result<Vec<Item>, LowerError> {
        // Once `ValueError`, its `NULL` and the text before the value are pushed.
        const VALUE_BELOW_CALLEE_NULL_AND_TEXT: u32 = 4;
        let shapes = self.shapes();
        let by_name = (self.name_loads.get(&number)).is_some_and(|&op| shapes.is(op, "LOAD_NAME"));
        let error = self.name("ValueError");
        let copy = (self.op("COPY")?, VALUE_BELOW_CALLEE_NULL_AND_TEXT);
        let ops = shapes
            .raise_formatted(by_name, error, before, copy, after)
            .ok_or_else(|| {
                internal(
                    format!("CPython {} cannot raise an error", shapes.version),
                    site.position,
                )
            })?;
        Ok(ops
            .into_iter()
            .map(|(op, arg)| Item::Instr(self.body.like(site, op, arg, None)))
            .collect())
    }

    /// The constants of the texts before and after the value in the error of the computed
    /// goto `number` (the same for every computed goto of its place); none through the
    /// search function, which builds its message.
    fn no_such_label_texts(&mut self, number: usize) -> Option<(u32, u32)> {
        let ComputedSearch::InLine { after, .. } = &self.scope.computed[number].search else {
            return None;
        };
        let after = after.to_string();
        Some((
            self.constant(Constant::Str(NO_SUCH_LABEL.to_owned())),
            self.constant(Constant::Str(after)),
        ))
    }

    /// The search for the value on top of the stack (or the slot [`Miss::Keep`] says)
    /// among `keys` (constant index, where to go when equal), sorted as Python orders them.
    /// The comparisons run under `guard` (when they may raise); the jumps under the site's
    /// own handler, so an interrupt on a backward jump is not taken for a failed comparison.
    pub(super) fn search(
        &mut self,
        keys: &[(u32, Label)],
        site: &Instr,
        guard: Option<Handler>,
        miss: Miss,
    ) -> Result<Vec<Item>, LowerError> {
        let shapes = self.shapes();
        let (copy, load_const, pop_top) = (
            self.op("COPY")?,
            self.op("LOAD_CONST")?,
            self.op("POP_TOP")?,
        );
        let (after, consumes, slot) = match miss {
            Miss::End(end) => (end, true, 1),
            Miss::Keep(miss, slot) => (miss, false, slot),
        };
        let mut out = Vec::new();
        let mut places: HashMap<usize, Label> = HashMap::new();
        let position = site.position;
        let body = &mut self.body;
        let guarded =
            |body: &mut crate::cpython::bytecode::Body, op: u8, arg: u32, target: Option<Label>| {
                let mut instr = body.new_instr(op, arg, target, position);
                instr.handler = guard.or(site.handler);
                Item::Instr(instr)
            };
        for step in balanced(keys.len()) {
            match step {
                Step::Nothing => {
                    if consumes {
                        out.push(Item::Instr(body.like(site, pop_top, 0, None)));
                    }
                    out.push(Item::Instr(body.like(
                        site,
                        shapes.jump_forward,
                        0,
                        Some(after),
                    )));
                }
                Step::Equal(key) => {
                    let (constant, hit) = keys[key];
                    if !consumes {
                        out.push(guarded(body, copy, slot, None));
                    }
                    out.push(guarded(body, load_const, constant, None));
                    let (compare, arg) = shapes.comparison(false);
                    out.push(guarded(body, compare, arg, None));
                    out.push(guarded(body, shapes.jump_if_true, 0, Some(hit)));
                    if let Some(not_taken) = shapes.not_taken {
                        out.push(Item::Instr(body.like(site, not_taken, 0, None)));
                    }
                    out.push(Item::Instr(body.like(
                        site,
                        shapes.jump_forward,
                        0,
                        Some(after),
                    )));
                }
                Step::Less { pivot, below } => {
                    let label = body.new_label();
                    places.insert(below, label);
                    out.push(guarded(body, copy, slot, None));
                    out.push(guarded(body, load_const, keys[pivot].0, None));
                    let (compare, arg) = shapes.comparison(true);
                    out.push(guarded(body, compare, arg, None));
                    out.push(guarded(body, shapes.jump_if_true, 0, Some(label)));
                    if let Some(not_taken) = shapes.not_taken {
                        out.push(Item::Instr(body.like(site, not_taken, 0, None)));
                    }
                }
                Step::Below(place) => out.push(Item::Label(places[&place])),
            }
        }
        Ok(out)
    }
}

impl<'p> Lowering<'p> {
    /// The computed gotos that share a search with others of their place (two or more in
    /// one place, outside every copy of a `finally` body), by plan index: each one's
    /// number in its group, and the group's search.
    pub(super) fn shared_searches(
        &mut self,
        sites: &[Site<'p>],
        decided: &[Option<Targets<'p>>],
    ) -> Result<HashMap<usize, (usize, Rc<SharedSearch>)>, LowerError> {
        let mut group_of: HashMap<SharedPlace, usize> = HashMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (&site, targets) in sites.iter().zip(decided) {
            let (Site::Computed(_, number), Some(_)) = (site, targets) else {
                continue;
            };
            let index = self.analysis()?.site_index(&self.body, site)?;
            let Some(place) = self.shared_place(index, number) else {
                continue;
            };
            let next = groups.len();
            let group = *group_of.entry(place).or_insert(next);
            if group == next {
                groups.push(Vec::new());
            }
            groups[group].push(number);
        }
        let mut shared = HashMap::new();
        for numbers in groups.into_iter().filter(|numbers| numbers.len() > 1) {
            let search = Rc::new(SharedSearch {
                entry: self.body.new_label(),
                raises: numbers.iter().map(|_| self.body.new_label()).collect(),
                numbers,
            });
            for (own, &number) in search.numbers.iter().enumerate() {
                shared.insert(number, (own, Rc::clone(&search)));
            }
        }
        Ok(shared)
    }

    /// Where the computed goto whose `*` is instruction `index` may share its search: not
    /// in a copy of a `finally` body, where the copy of each label it goes to depends on
    /// its own.
    pub(super) fn shared_place(&self, index: usize, number: usize) -> Option<SharedPlace> {
        let analysis = self.analysis.as_ref()?;
        let instr = analysis.instr(&self.body, index)?;
        let depth = analysis.stack.get(index).copied().flatten()?;
        let outside_finally = self.copies_of.get(&instr.id).is_none_or(HashMap::is_empty);
        let one_copy = analysis.ranks.get(&index) == Some(&(0, 1));
        (outside_finally && one_copy)
            .then(|| (self.scope.computed[number].place, depth, instr.handler))
    }
}

/// A case value of the plan as a constant.
fn case_constant(value: &CaseConstant) -> Constant {
    match value {
        CaseConstant::Int(hex) => Constant::Int(hex.clone()),
        CaseConstant::Str(text) => Constant::Str(text.clone()),
        CaseConstant::Bytes(bytes) => Constant::Bytes(bytes.clone()),
    }
}
