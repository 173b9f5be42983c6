//! Switches and computed gotos: a balanced binary search ([`crate::search`]) of comparisons
//! over the value the subject's statement left on the stack, under a handler of its own so
//! that a comparison that raises goes where no match goes.

use std::collections::HashMap;

use super::{LowerError, Lowering, internal};
use crate::cpython::bytecode::{Handler, Instr, Item, Label};
use crate::cpython::code::Constant;
use crate::cpython::plan::{CaseConstant, GotoPlan, SwitchPlan};
use crate::search::{Step, balanced};

/// Where a search goes when nothing matches.
enum Miss {
    /// A switch: the leaf's `==` takes the value off the stack, and no match goes to the
    /// switch's end (its default).
    End(Label),
    /// A computed goto: the value stays on the stack for the error that reports it.
    Keep(Label),
}

impl Lowering<'_> {
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
        let mut items = self.search(&keys, marker, guard, Miss::End(end))?;
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

    /// The search that replaces the `*` and the `POP_TOP` of `goto *value`, whose load of
    /// `goto` left a `None` under the value: each leaf that matches goes to a stub that
    /// drops both and goes to its label as `goto .name` would; no match (or anything raised
    /// by a comparison) raises `ValueError`, which formats the value.
    pub(super) fn lower_computed(
        &mut self,
        multiply: &Instr,
        at: usize,
        number: usize,
        chosen: Vec<(&GotoPlan, usize)>,
    ) -> Result<Vec<Item>, LowerError> {
        let plan = &self.scope.computed[number];
        // The search and the error span the keyword `goto`, as its marker would.
        let site = Instr {
            position: plan.keyword,
            ..multiply.clone()
        };
        let pop_top = self.op("POP_TOP")?;
        let analysis = self.analysis()?;
        let depth = analysis
            .index_of
            .get(multiply.id)
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
        for (target, copy) in chosen {
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
            stubs.extend(self.lower_goto(&site, at, target, copy)?);
        }
        let mut items = self.search(&keys, &site, guard, Miss::Keep(miss))?;
        items.extend(stubs);
        items.push(Item::Label(guard.target));
        items.push(Item::Instr(self.body.like(&site, pop_top, 0, None)));
        items.push(Item::Label(miss));
        items.extend(self.raise_no_such_label(&site, number)?);
        Ok(items)
    }

    /// `raise ValueError(f"{before}{value!r}{after}")` with the plan's texts, as this
    /// version's compiler writes it, the value on top of the stack (a copy of it formatted),
    /// `ValueError` loaded the way the computed goto loaded `goto`.
    fn raise_no_such_label(
        &mut self,
        site: &Instr,
        number: usize,
    ) -> Result<Vec<Item>, LowerError> {
        // Once `ValueError`, its `NULL` and the text before the value are pushed.
        const VALUE_BELOW_CALLEE_NULL_AND_TEXT: u32 = 4;
        let plan = &self.scope.computed[number];
        let (before, after) = (plan.before.to_owned(), plan.after.clone());
        let shapes = self.shapes();
        let by_name = (self.name_loads.get(&number)).is_some_and(|&op| shapes.is(op, "LOAD_NAME"));
        let error = self.name("ValueError");
        let before = self.constant(Constant::Str(before));
        let after = self.constant(Constant::Str(after));
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

    /// The search for the value on top of the stack among `keys` (constant index, where to
    /// go when equal), sorted as Python orders them. The comparisons run under `guard`; the
    /// jumps under the site's own handler, so an interrupt on a backward jump is not taken
    /// for a failed comparison.
    fn search(
        &mut self,
        keys: &[(u32, Label)],
        site: &Instr,
        guard: Handler,
        miss: Miss,
    ) -> Result<Vec<Item>, LowerError> {
        let shapes = self.shapes();
        let (copy, load_const, pop_top) = (
            self.op("COPY")?,
            self.op("LOAD_CONST")?,
            self.op("POP_TOP")?,
        );
        let (after, consumes) = match miss {
            Miss::End(end) => (end, true),
            Miss::Keep(miss) => (miss, false),
        };
        let mut out = Vec::new();
        let mut places: HashMap<usize, Label> = HashMap::new();
        let position = site.position;
        let body = &mut self.body;
        let guarded =
            |body: &mut crate::cpython::bytecode::Body, op: u8, arg: u32, target: Option<Label>| {
                let mut instr = body.new_instr(op, arg, target, position);
                instr.handler = Some(guard);
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
                        out.push(guarded(body, copy, 1, None));
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
                    out.push(guarded(body, copy, 1, None));
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

/// A case value of the plan as a constant.
fn case_constant(value: &CaseConstant) -> Constant {
    match value {
        CaseConstant::Int(hex) => Constant::Int(hex.clone()),
        CaseConstant::Str(text) => Constant::Str(text.clone()),
        CaseConstant::Bytes(bytes) => Constant::Bytes(bytes.clone()),
    }
}
