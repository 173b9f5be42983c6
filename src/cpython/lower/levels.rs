//! Computed gotos that may leave `for` loops to reach many labels: one search for the whole
//! code object, as a function, instead of a search and a stub per label at each place
//! (G places over L labels cost G plus L, not G times L). The plan decides which ones
//! ([`crate::plan::cases::search_levels`]), and the RustPython lowering does the same.
//!
//! Each such place calls the function, compiled by the interpreter from the plan's text
//! ([`Constant::SearchFunction`]), with the chain of frames whose labels it may reach: it
//! gives the label's number, or 0. The place then tests the frame of that number (a
//! constant table) against each of its levels; for the level found it drops the value and
//! what is under it, leaves the loops below that level with the number kept on top, and
//! goes on to the level's search by number, one per frame for the whole code object, placed
//! after everything else, with a stub per label. A number for which no level matches is 0:
//! the goto raises `ValueError` with the message the function builds.

use std::cell::RefCell;

use super::*;
use crate::cpython::plan::Levels;
use crate::tables::NO_POSITION;

/// The labels of one level: each one's number and the copy of the label its stub jumps to.
type LevelLabels = Vec<(i64, Label)>;

/// What the places of one code object that call the search function share.
#[derive(Default)]
pub(super) struct Shared {
    /// The constants of the search function and of the frame code of each label by number,
    /// once a place needs them.
    function: Option<(u32, u32)>,
    /// Each level's labels, by frame code, chosen once.
    chosen: RefCell<HashMap<i64, Rc<LevelLabels>>>,
    /// The levels whose labels a site has entered (the depth analysis seeds them once).
    entered: RefCell<HashSet<i64>>,
    /// The search by number of each level some place jumps to, in the order they were
    /// first asked for.
    entries: Vec<(i64, Label)>,
    entry_of: HashMap<i64, Label>,
    /// An instruction of the first place, whose code the searches by number are made like
    /// (without its position or handler).
    like: Option<Instr>,
}

impl<'p> Lowering<'p> {
    /// The targets of a computed goto that calls the search function, its levels, from a
    /// stack `base` deep at instruction `site`: each level's labels chosen once, from the
    /// depth a jump there leaves.
    pub(super) fn level_targets(
        &self,
        site: usize,
        base: i64,
        levels: &'p Levels,
        keyword: Position,
    ) -> Result<Targets<'p>, LowerError> {
        let search = self.search_plan(keyword)?;
        for (code, loops) in levels {
            if self.levels.chosen.borrow().contains_key(code) {
                continue;
            }
            let depth = base - self.loop_slots(loops);
            let labels = search
                .labels
                .get(code)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let mut chosen = Vec::with_capacity(labels.len());
            for (number, name) in labels {
                if self.missing.contains(name.as_str()) {
                    return Err(removed(name, keyword));
                }
                let candidates = self
                    .labels
                    .get(name.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let what = || format!("label `.{name}`");
                let copy = self.choose(site, depth, candidates, &what, keyword, false)?;
                chosen.push((*number, candidates[copy]));
            }
            self.levels
                .chosen
                .borrow_mut()
                .insert(*code, Rc::new(chosen));
        }
        Ok(Targets::Levels(levels))
    }

    /// The labels a computed goto that calls the search function enters, each with its
    /// depth (`depth`: below the goto's statement), for the levels no site entered before.
    pub(super) fn levels_entered(&self, levels: &Levels, depth: i64) -> Vec<(Label, i64)> {
        let mut entered = Vec::new();
        for (code, loops) in levels {
            if !self.levels.entered.borrow_mut().insert(*code) {
                continue;
            }
            let there = depth - self.loop_slots(loops);
            if let Some(chosen) = self.levels.chosen.borrow().get(code) {
                entered.extend(chosen.iter().map(|&(_, label)| (label, there)));
            }
        }
        entered
    }

    /// The stack slots of the loops `loops`.
    fn loop_slots(&self, loops: &[&str]) -> i64 {
        loops
            .iter()
            .map(|kind| i64::from(self.shapes().slots(kind)))
            .sum()
    }

    /// The scope's search function, which the plan made for it.
    fn search_plan(&self, at: Position) -> Result<&'p SearchPlan, LowerError> {
        (self.scope.search.as_ref())
            .ok_or_else(|| internal("a computed goto calls a search function never planned", at))
    }

    /// The call of the search function for the value on top of the stack (what was under
    /// it, the `None` or the number of a shared search, stays), from `site`, then the way to
    /// the level of the number it gives. Gives the items and where a value that names no
    /// label goes, the stack as it was.
    pub(super) fn levels_search(
        &mut self,
        site: &Instr,
        levels: &Levels,
    ) -> Result<(Vec<Item>, Label), LowerError> {
        // The value, under the search function and its `NULL`.
        const VALUE: u32 = 3;
        const ARGUMENTS: u32 = 3;
        let (function, frames) = self.search_constants(site.position)?;
        let chain = self.chain(levels);
        let no = self.constant(Constant::Bool(false));
        let miss = self.body.new_label();
        let shapes = self.shapes();
        let (copy, load_const, pop_top, swap) = (
            self.op("COPY")?,
            self.op("LOAD_CONST")?,
            self.op("POP_TOP")?,
            self.op("SWAP")?,
        );
        let failed = || {
            internal(
                format!("CPython {} cannot call a function", shapes.version),
                site.position,
            )
        };
        // The call, under the goto's own handler: the function takes what a comparison
        // raises for no match itself, and anything else (an interrupt) goes on from here.
        let mut call = shapes.function(function).ok_or_else(failed)?;
        call.extend([(copy, VALUE), (load_const, chain), (load_const, no)]);
        call.extend(shapes.call(ARGUMENTS).ok_or_else(failed)?);
        let mut items: Vec<Item> = (call.into_iter())
            .map(|(op, arg)| Item::Instr(self.body.like(site, op, arg, None)))
            .collect();
        // The frame of the number, tested against each level.
        let subscript = shapes.subscript().ok_or_else(failed)?;
        let mut ops = vec![(copy, 1), (load_const, frames), (swap, 2), subscript];
        let (compare, equal) = shapes.comparison(false);
        let mut leaves = Vec::with_capacity(levels.len());
        for (code, _) in levels {
            let level = self.constant(Constant::int(*code));
            ops.extend([(copy, 1), (load_const, level), (compare, equal)]);
            items.extend(
                ops.drain(..)
                    .map(|(op, arg)| Item::Instr(self.body.like(site, op, arg, None))),
            );
            let leave = self.body.new_label();
            items.push(Item::Instr(self.body.like(
                site,
                shapes.jump_if_true,
                0,
                Some(leave),
            )));
            if let Some(not_taken) = shapes.not_taken {
                items.push(Item::Instr(self.body.like(site, not_taken, 0, None)));
            }
            leaves.push(leave);
        }
        // No level: the frame and the number go, the value stays for the error.
        items.push(Item::Instr(self.body.like(site, pop_top, 0, None)));
        items.push(Item::Instr(self.body.like(site, pop_top, 0, None)));
        items.push(Item::Instr(self.body.like(
            site,
            shapes.jump_forward,
            0,
            Some(miss),
        )));
        for ((code, loops), leave) in levels.iter().zip(leaves) {
            items.push(Item::Label(leave));
            // The frame goes, then the value and what is under it, then each loop's slots
            // under the number, which stays on top. None of that can raise: no handler, as
            // for a goto's own cleanup.
            let mut ops = vec![(pop_top, 0)];
            let slots = 2 + self.loop_slots(loops);
            for _ in 0..slots {
                ops.extend([(swap, 2), (pop_top, 0)]);
            }
            let entry = self.level_entry(*code, site);
            ops.push((shapes.jump_forward, 0));
            let last = ops.len() - 1;
            items.extend(ops.into_iter().enumerate().map(|(at, (op, arg))| {
                let target = (at == last).then_some(entry);
                Item::Instr(self.body.new_instr(op, arg, target, site.position))
            }));
        }
        Ok((items, miss))
    }

    /// `raise ValueError(search(value, chain, True))`, the value on top of the stack: the
    /// message the search function builds, which lists the labels of `levels`.
    /// `ValueError` is loaded the way the computed goto `number` loaded `goto`.
    pub(super) fn raise_from_function(
        &mut self,
        site: &Instr,
        number: usize,
        levels: &Levels,
    ) -> Result<Vec<Item>, LowerError> {
        // Once `ValueError`, its `NULL`, the search function and its `NULL` are pushed.
        const VALUE: u32 = 5;
        const ARGUMENTS: u32 = 3;
        let shapes = self.shapes();
        let by_name = (self.name_loads.get(&number)).is_some_and(|&op| shapes.is(op, "LOAD_NAME"));
        let error = self.name("ValueError");
        let (function, _) = self.search_constants(site.position)?;
        let chain = self.chain(levels);
        let yes = self.constant(Constant::Bool(true));
        let (copy, load_const) = (self.op("COPY")?, self.op("LOAD_CONST")?);
        let failed = || {
            internal(
                format!("CPython {} cannot raise an error", shapes.version),
                site.position,
            )
        };
        let mut ops = if by_name {
            shapes
                .callable(&[(self.op("LOAD_NAME")?, error)])
                .ok_or_else(failed)?
        } else {
            vec![(self.op("LOAD_GLOBAL")?, error << 1 | 1)]
        };
        ops.extend(shapes.function(function).ok_or_else(failed)?);
        ops.extend([(copy, VALUE), (load_const, chain), (load_const, yes)]);
        ops.extend(shapes.call(ARGUMENTS).ok_or_else(failed)?);
        ops.extend(shapes.call(1).ok_or_else(failed)?);
        ops.push((self.op("RAISE_VARARGS")?, 1));
        Ok(ops
            .into_iter()
            .map(|(op, arg)| Item::Instr(self.body.like(site, op, arg, None)))
            .collect())
    }

    /// The constants of the search function and of the frame code of each label by number,
    /// added once.
    fn search_constants(&mut self, at: Position) -> Result<(u32, u32), LowerError> {
        if let Some(function) = self.levels.function {
            return Ok(function);
        }
        let search = self.search_plan(at)?;
        let function = self.constant(Constant::SearchFunction(search.text.clone()));
        let frames = (search.frames.iter())
            .map(|code| Constant::int(*code))
            .collect();
        let frames = self.constant(Constant::Tuple(frames));
        self.levels.function = Some((function, frames));
        Ok((function, frames))
    }

    /// The constant of the chain of `levels`: the tuple of their frame codes.
    fn chain(&mut self, levels: &Levels) -> u32 {
        let codes = levels.iter().map(|(code, _)| Constant::int(*code));
        self.constant(Constant::Tuple(codes.collect()))
    }

    /// Where the search by number of the level `code` starts, asked for by `site`.
    fn level_entry(&mut self, code: i64, site: &Instr) -> Label {
        if let Some(&entry) = self.levels.entry_of.get(&code) {
            return entry;
        }
        let entry = self.body.new_label();
        self.levels.entry_of.insert(code, entry);
        self.levels.entries.push((code, entry));
        self.levels.like.get_or_insert_with(|| site.clone());
        entry
    }

    /// The search by number of each level some place jumps to, to go after everything
    /// else: the number on top, a stub per label of the level that drops it and jumps to
    /// the label (the jump takes the label's handler). No position: each place's own line
    /// came before.
    pub(super) fn level_searches(&mut self) -> Result<Vec<Item>, LowerError> {
        let entries = std::mem::take(&mut self.levels.entries);
        let Some(like) = self.levels.like.take() else {
            return Ok(Vec::new());
        };
        let nowhere = Instr {
            position: NO_POSITION,
            handler: None,
            ..like
        };
        let (pop_top, raise) = (self.op("POP_TOP")?, self.op("RAISE_VARARGS")?);
        let jump_forward = self.shapes().jump_forward;
        let mut items = Vec::new();
        for (code, entry) in entries {
            let chosen = (self.levels.chosen.borrow().get(&code).cloned()).unwrap_or_default();
            let mut keys = Vec::with_capacity(chosen.len());
            let mut stubs = Vec::with_capacity(chosen.len() * 3);
            for &(number, label) in chosen.iter() {
                let stub = self.body.new_label();
                keys.push((self.constant(Constant::int(number)), stub));
                stubs.push(Item::Label(stub));
                stubs.push(Item::Instr(self.body.like(&nowhere, pop_top, 0, None)));
                stubs.push(Item::Instr(self.body.like(
                    &nowhere,
                    jump_forward,
                    0,
                    Some(label),
                )));
            }
            // Every number the function gives for this level is a key: no match is a bug,
            // which a bare `raise` reports as a `RuntimeError`.
            let none = self.body.new_label();
            items.push(Item::Label(entry));
            items.extend(self.search(&keys, &nowhere, None, Miss::Keep(none, 1))?);
            items.push(Item::Label(none));
            items.push(Item::Instr(self.body.like(&nowhere, raise, 0, None)));
            items.extend(stubs);
        }
        Ok(items)
    }
}
