//! A goto: the cleanup of each frame it leaves, innermost first, then its jump. The cleanup
//! is CPython's own where it has one to copy: a `with` statement's exit (the front end
//! guards every `with` body that may end abruptly, so CPython always compiles the normal
//! exit) and an `except ... as name` handler's unbinding; dropping a `for` loop's slots and
//! `POP_EXCEPT` are single instructions.

use std::collections::HashMap;

use super::{LowerError, Lowering, internal};
use crate::cpython::bytecode::{Handler, Instr, Item, Label};
use crate::cpython::plan::{GotoPlan, Leave};

/// The places that may be a `with` statement's exit, by the line and column of their first
/// instruction: (first, last) indices in the list.
pub(super) type Exits = HashMap<(i32, i32), Vec<(usize, usize)>>;

impl<'p> Lowering<'p> {
    /// The cleanup and jump that replace the goto whose load is `site`, at `at` in the list,
    /// to copy `copy` of its target.
    pub(super) fn lower_goto(
        &mut self,
        site: &Instr,
        at: usize,
        plan: &GotoPlan,
        copy: usize,
    ) -> Result<Vec<Item>, LowerError> {
        let mut cleanup = Vec::new();
        for leave in &plan.leaves {
            // Dropping a slot, restoring the previous exception and unbinding a name cannot
            // raise: those need no handler.
            match leave.kind {
                "for" | "async for" => {
                    let pop_top = self.op("POP_TOP")?;
                    for _ in 0..self.shapes().slots(leave.kind) {
                        cleanup.push(Item::Instr(self.body.new_instr(
                            pop_top,
                            0,
                            None,
                            site.position,
                        )));
                    }
                }
                "except" => {
                    let pop_except = self.op("POP_EXCEPT")?;
                    cleanup.push(Item::Instr(self.body.new_instr(
                        pop_except,
                        0,
                        None,
                        site.position,
                    )));
                    if let Some(name) = &leave.name {
                        cleanup.extend(self.unbind(site, name, plan)?);
                    }
                }
                _ => cleanup.extend(self.with_exit(at, leave, plan)?),
            }
        }
        // The goto's line is a line event before a `with` exit's (which carries the `with`
        // statement's line) runs, as CPython puts a `NOP` before the cleanup of a `break`
        // (the search shared by computed gotos has no line: each had its own).
        if site.position[0] >= 0
            && cleanup
                .first()
                .and_then(Item::instr)
                .is_some_and(|first| first.position[0] != site.position[0])
        {
            let nop = self.shapes().nop;
            cleanup.insert(0, Item::Instr(self.body.like(site, nop, 0, None)));
        }
        let candidates = self.candidates(plan);
        let Some(&target) = candidates.get(copy) else {
            return Err(internal(
                "cannot find the copy of the `finally` body in the compiled code",
                plan.keyword,
            ));
        };
        let jump_forward = self.shapes().jump_forward;
        cleanup.push(Item::Instr(self.body.new_instr(
            jump_forward,
            0,
            Some(target),
            site.position,
        )));
        Ok(cleanup)
    }

    /// `LOAD_CONST None; STORE name; DELETE name`, as the handler's own exit has it.
    fn unbind(
        &mut self,
        site: &Instr,
        name: &str,
        plan: &GotoPlan,
    ) -> Result<Vec<Item>, LowerError> {
        if self.unbindings.is_none() {
            self.unbindings = Some(self.find_unbindings());
        }
        let found = self
            .unbindings
            .as_ref()
            .and_then(|found| found.get(name).copied());
        let Some(found) = found else {
            return Err(internal(
                format!("cannot find how this function unbinds `{name}`"),
                plan.keyword,
            ));
        };
        Ok(found
            .into_iter()
            .map(|(op, arg)| Item::Instr(self.body.new_instr(op, arg, None, site.position)))
            .collect())
    }

    /// The first `LOAD_CONST None; STORE name; DELETE name` of each name in the code, in
    /// one pass (a goto out of a handler asks for one; there may be thousands).
    fn find_unbindings(&self) -> HashMap<&'p str, [(u8, u32); 3]> {
        let shapes = self.shapes();
        let instrs: Vec<&Instr> = self.body.instrs().collect();
        crate::splice::count(instrs.len());
        let mut found = HashMap::new();
        for window in instrs.windows(3) {
            let [first, store, delete] = window else {
                continue;
            };
            let store_name = shapes.opcodes.name(store.op);
            let Some(kind) = store_name.strip_prefix("STORE_") else {
                continue;
            };
            if self.is_none(first)
                && shapes.opcodes.name(delete.op).strip_prefix("DELETE_") == Some(kind)
                && store.arg == delete.arg
                && let Some(name) = self.name_of(store)
            {
                found.entry(name).or_insert([
                    (first.op, first.arg),
                    (store.op, store.arg),
                    (delete.op, delete.arg),
                ]);
            }
        }
        found
    }

    /// A copy of the `with` statement's exit: three `None`s, the call and what follows it up
    /// to the `POP_TOP` of its result, found after the goto (at `start` in the list).
    fn with_exit(
        &mut self,
        start: usize,
        leave: &Leave,
        plan: &GotoPlan,
    ) -> Result<Vec<Item>, LowerError> {
        let [line, _, column, _] = leave.header;
        // Where the exit is, by the position its first instruction carries and which of the
        // exits there: the statement's, where its items' exits are innermost first; or the
        // item's (3.13 and later).
        let at_statement = Some((line, column, leave.inner));
        let spans = self.withs.get(&(line, column)).copied().unwrap_or_default();
        let at_item = (spans.len() > leave.inner).then(|| {
            let [line, _, column, _] = spans[spans.len() - 1 - leave.inner];
            (line, column, 0)
        });
        // CPython's 3.12 releases since mid-2024 place it at the item too (gh-93691 backported:
        // 3.12.1 has the statement's position, 3.12.9 the item's), so the other place is
        // looked at second. Neither finds the other's exit: an item never starts where a
        // `with` keyword does.
        let places = if self.shapes().with_exit_at_item {
            [at_item, at_statement]
        } else {
            [at_statement, at_item]
        };
        if self.exits.is_none() {
            self.exits = Some(self.find_exits());
        }
        for (line, column, skip) in places.into_iter().flatten() {
            let mut found: Vec<(bool, usize, usize)> = self
                .exits
                .as_ref()
                .and_then(|exits| exits.get(&(line, column)))
                .map(|regions| {
                    regions
                        .iter()
                        .map(|&(index, end)| (index < start, index, end))
                        .collect()
                })
                .unwrap_or_default();
            // Any copy is the same exit; the first after the goto, for the sake of locality.
            found.sort_unstable();
            if let Some(&(_, index, end)) = found.get(skip) {
                let region: Vec<Item> = self.body.items[index..=end].to_vec();
                return Ok(self.copy(&region));
            }
        }
        Err(internal(
            format!(
                "cannot find this `{}` statement's exit in the compiled code",
                leave.kind
            ),
            plan.keyword,
        ))
    }

    /// Every place that may be a `with` statement's exit, by the line and column of its
    /// first instruction: three `None`s, up to the next `POP_TOP`, as (first, last) indices
    /// in the list, in one pass from the back.
    fn find_exits(&self) -> Exits {
        let items = &self.body.items;
        crate::splice::count(items.len());
        let mut exits = Exits::new();
        let mut next_pop = None;
        // Whether each of the two items after the current one loads `None`.
        let mut none_after = [false, false];
        for index in (0..items.len()).rev() {
            // The region's `POP_TOP` comes after its three `None`s.
            if items
                .get(index + 3)
                .and_then(Item::instr)
                .is_some_and(|instr| self.shapes().is(instr.op, "POP_TOP"))
            {
                next_pop = Some(index + 3);
            }
            let instr = items[index].instr();
            let none = instr.is_some_and(|instr| self.is_none(instr));
            if let Some(first) = instr
                && none
                && none_after == [true, true]
                && let Some(end) = next_pop
            {
                exits
                    .entry((first.position[0], first.position[2]))
                    .or_default()
                    .push((index, end));
            }
            none_after = [none, none_after[0]];
        }
        exits
    }

    /// `region` with fresh labels for those placed in it, under the same handlers.
    fn copy(&mut self, region: &[Item]) -> Vec<Item> {
        let mut renamed: HashMap<Label, Label> = HashMap::new();
        for item in region {
            if let Item::Label(label) = item {
                let fresh = self.body.new_label();
                renamed.insert(*label, fresh);
            }
        }
        let rename = |label: Label| renamed.get(&label).copied().unwrap_or(label);
        region
            .iter()
            .map(|item| match item {
                Item::Label(label) => Item::Label(rename(*label)),
                Item::Instr(instr) => {
                    // The `CLEANUP_THROW` of an awaited `__aexit__` (3.12+) is in the region.
                    let handler = instr.handler.map(|handler| Handler {
                        target: rename(handler.target),
                        ..handler
                    });
                    Item::Instr(Instr {
                        target: instr.target.map(rename),
                        handler,
                        inserted: false,
                        id: self.body.new_id(),
                        ..instr.clone()
                    })
                }
            })
            .collect()
    }
}
