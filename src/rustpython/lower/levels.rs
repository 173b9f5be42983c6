//! Computed gotos that may leave frames: one search for the whole code object, as a
//! function, instead of a search and a stub per label at each place. G computed gotos in G
//! frames over L labels cost G plus L, not G times L.
//!
//! Each such place calls the function, compiled by RustPython from the text
//! [`search_function_text`](crate::plan::cases::search_function_text) writes and added to
//! the code object's constants, with the chain of frames whose labels it may reach: it
//! gives the label's number, or 0. The place then tests the frame of that number (a
//! constant table) against each level of its chain; for the level found it drops the value,
//! leaves the frames below that level with the number kept under each one's values (a `for`
//! loop's iterator: `SWAP 2`, `POP_ITER`), and jumps to the search by number of that level,
//! one per frame for the whole code object, placed after everything else, with a stub per
//! label. A number for which no level matches is 0: the goto raises `ValueError` inside its
//! frames, with the message the function builds (the labels the goto may reach, as the
//! search in line lists them).
//!
//! Places that reach [`IN_LINE_AT_MOST`](crate::plan::cases::IN_LINE_AT_MOST) labels or
//! fewer, that leave no frame, that leave anything but `for` loops and `while switch`
//! bodies (a `with`, a handler: their cleanup would need the number kept under values their
//! own handlers count), or that the code generator compiled more than once keep the search
//! in line (`dispatch`).

use std::collections::HashMap;

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::Mode;
use rustpython_compiler::core::bytecode::{
    Arg, BinaryOperator, ComparisonOperator, ConstantData, Instruction, RaiseKind,
};

use super::context::Lowering;
use super::goto::GotoAt;
use super::search::{Search, TOP, called_and_raised, outer};
use super::{Site, broken, jump_op};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{FrameId, MarkerId};
use crate::plan::cases::{
    SEARCH_FILE, SEARCH_FUNCTION, labels_by_frame, search_levels, search_table,
};
use crate::rustpython::bytecode::{Instr, Item, Label};

/// The levels of one place's chain that hold labels: each one's frame code and how many
/// `for` loops a jump there leaves, innermost level first.
pub(super) struct Levels {
    levels: Vec<(i64, usize)>,
    /// The constant of the chain, the tuple of those frame codes.
    chain: u32,
}

impl<'r> Lowering<'r, '_> {
    /// The levels of the computed goto `marker` at `site` when it goes through the search
    /// function: [`search_levels`] says so, and the code generator compiled it once.
    pub(super) fn levels(
        &mut self,
        site: Site,
        marker: MarkerId,
    ) -> Result<Option<Levels>, Diagnostic> {
        if self
            .copies
            .get(&site.kind)
            .is_some_and(|&copies| copies > 1)
        {
            return Ok(None);
        }
        let scope = self.scope;
        let from = scope.marker(marker).frame;
        let Some(found) = search_levels(scope, from, self.labels_by_frame()) else {
            return Ok(None);
        };
        let levels: Vec<(i64, usize)> = (found.into_iter())
            .map(|(code, fors)| (code, fors.len()))
            .collect();
        let elements = (levels.iter())
            .map(|&(code, _)| ConstantData::Integer { value: code.into() })
            .collect();
        let chain = self.added.constant(ConstantData::Tuple { elements });
        Ok(Some(Levels { levels, chain }))
    }

    /// The labels kept in this code object by frame code, found once.
    fn labels_by_frame(&mut self) -> &HashMap<i64, Vec<(i64, &'r str)>> {
        let scope = self.scope;
        let targets = &self.targets;
        (self.levels_shared.by_frame).get_or_insert_with(|| {
            labels_by_frame(scope, |name| targets.labels.contains_key(&(name, 0)))
        })
    }

    /// The constants of the search function and of the frame code of each label by number,
    /// compiled and added once.
    fn function(&mut self, marker: MarkerId) -> Result<(u32, u32), Diagnostic> {
        if let Some(function) = self.levels_shared.function {
            return Ok(function);
        }
        let scope = self.scope;
        let (text, frames) = search_table(scope, self.labels_by_frame());
        let Some(code) = compiled_search(&text) else {
            return Err(broken(
                scope,
                marker,
                "RustPython could not compile the search of computed gotos".to_owned(),
            ));
        };
        let function = self.added.new_constant(ConstantData::Code {
            code: Box::new(code),
        });
        let elements = (frames.into_iter())
            .map(|code| ConstantData::Integer { value: code.into() })
            .collect();
        let frames = self.added.constant(ConstantData::Tuple { elements });
        self.levels_shared.function = Some((function, frames));
        Ok((function, frames))
    }

    /// The call of the search function for the value `slot` deep on the stack, at the
    /// location of `at`, then the way to the level of the number it gives.
    /// Gives the items and where a value that names no label goes, the stack as it was.
    pub(super) fn function_search(
        &mut self,
        site: Site,
        marker: MarkerId,
        at: &Instr,
        levels: &Levels,
        slot: u32,
    ) -> Result<(Vec<Item>, Label), Diagnostic> {
        // The value, under the search function and its NULL.
        const OVER_VALUE: u32 = 2;
        const ARGUMENTS: u32 = 3;
        let (function, frames) = self.function(marker)?;
        let miss = self.body.new_label();
        // The call, under the goto's own handler: the function takes what a comparison
        // raises for no match itself, and anything else (an interrupt) goes on from here.
        let mut items = make_search_function(function, at);
        let no = self.added.constant(false_constant());
        items.extend(
            [
                (Instruction::Copy { i: Arg::marker() }, slot + OVER_VALUE),
                (load_const(), levels.chain),
                (load_const(), no),
                (
                    Instruction::Call {
                        argc: Arg::marker(),
                    },
                    ARGUMENTS,
                ),
                // The frame of the number, tested against each level.
                (Instruction::Copy { i: Arg::marker() }, 1),
                (load_const(), frames),
                (Instruction::Swap { i: Arg::marker() }, 2),
                (
                    Instruction::BinaryOp { op: Arg::marker() },
                    u32::from(BinaryOperator::Subscr),
                ),
            ]
            .map(|(op, arg)| Item::Instr(outer(at, op, arg, None))),
        );
        let mut leaves = Vec::new();
        for &(code, _) in &levels.levels {
            let leave = self.body.new_label();
            let level = self
                .added
                .constant(ConstantData::Integer { value: code.into() });
            items.extend([
                Item::Instr(outer(at, Instruction::Copy { i: Arg::marker() }, 1, None)),
                Item::Instr(outer(at, load_const(), level, None)),
                Item::Instr(outer(
                    at,
                    Instruction::CompareOp {
                        opname: Arg::marker(),
                    },
                    u32::from(ComparisonOperator::Equal),
                    None,
                )),
                Item::Instr(outer(
                    at,
                    Instruction::PopJumpIfTrue {
                        delta: Arg::marker(),
                    },
                    0,
                    Some(leave),
                )),
            ]);
            leaves.push(leave);
        }
        // No level: the frame and the number go, the value stays for the error.
        items.push(Item::Instr(outer(at, Instruction::PopTop, 0, None)));
        items.push(Item::Instr(outer(at, Instruction::PopTop, 0, None)));
        items.push(Item::Instr(outer(at, jump_op(), 0, Some(miss))));
        for (&(code, fors), leave) in levels.levels.iter().zip(leaves) {
            items.push(Item::Label(leave));
            items.push(Item::Instr(Instr::like(at, Instruction::PopTop, 0, None)));
            // The value (and a shared search's number over it) goes; the number stays on
            // top while each `for` loop's iterator under it goes.
            for _ in 0..slot {
                items.push(Item::Instr(swap_two(at)));
                items.push(Item::Instr(Instr::like(at, Instruction::PopTop, 0, None)));
            }
            for _ in 0..fors {
                items.push(Item::Instr(swap_two(at)));
                items.push(Item::Instr(Instr::like(at, Instruction::PopIter, 0, None)));
            }
            let entry = self.level_entry(code, site, marker, at);
            items.push(Item::Instr(Instr::like(at, jump_op(), 0, Some(entry))));
        }
        Ok((items, miss))
    }

    /// `raise ValueError(search(value, chain, True))`, the value on the stack: the message
    /// the search function builds, which lists the labels of `levels`.
    pub(super) fn raise_from_function(
        &mut self,
        site: &Instr,
        levels: &Levels,
    ) -> Result<Vec<Item>, Diagnostic> {
        // Once `ValueError`, its NULL, the search function and its NULL are pushed.
        const VALUE_BELOW: u32 = 5;
        const ARGUMENTS: u32 = 3;
        let (function, _) = self.levels_shared.function.ok_or_else(|| {
            self.lost("a computed goto raises through a search function never made")
        })?;
        let mut items: Vec<Item> = (self.load_value_error(site).into_iter())
            .map(|(op, arg)| Item::Instr(outer(site, op, arg, None)))
            .collect();
        items.extend(make_search_function(function, site));
        let message = self.added.constant(true_constant());
        items.extend(
            [
                (Instruction::Copy { i: Arg::marker() }, VALUE_BELOW),
                (load_const(), levels.chain),
                (load_const(), message),
                (
                    Instruction::Call {
                        argc: Arg::marker(),
                    },
                    ARGUMENTS,
                ),
            ]
            .into_iter()
            .chain(called_and_raised())
            .map(|(op, arg)| Item::Instr(outer(site, op, arg, None))),
        );
        Ok(items)
    }

    /// Where the search by number of the level `code` starts, asked for by `site`.
    fn level_entry(&mut self, code: i64, site: Site, marker: MarkerId, at: &Instr) -> Label {
        if let Some(&entry) = self.levels_shared.entry_of.get(&code) {
            return entry;
        }
        let entry = self.body.new_label();
        self.levels_shared.entry_of.insert(code, entry);
        (self.levels_shared.entries).push((code, entry, site, marker, at.clone()));
        entry
    }

    /// The search by number of each level some place jumps to, after everything else: the
    /// number on top, a stub per label of the level that drops it and jumps, under the
    /// label's handler. No line: each place's own line came before.
    pub(super) fn level_searches(&mut self) -> Result<Vec<Item>, Diagnostic> {
        let entries = std::mem::take(&mut self.levels_shared.entries);
        let mut items = Vec::new();
        for (code, entry, site, marker, at) in entries {
            let nowhere = Instr {
                handler: None,
                ..self.nowhere(&at)
            };
            let labels = (self.labels_by_frame().get(&code).cloned()).unwrap_or_default();
            let mut keys = Vec::with_capacity(labels.len());
            let mut stubs = Vec::with_capacity(labels.len());
            for (number, name) in labels {
                let stub = self.body.new_label();
                let key = self.added.constant(ConstantData::Integer {
                    value: number.into(),
                });
                keys.push((key, stub));
                stubs.push((stub, name));
            }
            // Every number the function gives for this level is a key: no match is a bug.
            let none = self.body.new_label();
            items.push(Item::Label(entry));
            let search = Search {
                site: &nowhere,
                guard: None,
                miss: none,
                consume: None,
                slot: TOP,
            };
            search.emit(&keys, &mut self.body, &mut items);
            items.push(Item::Label(none));
            items.push(Item::Instr(Instr::like(
                &nowhere,
                Instruction::RaiseVarargs {
                    argc: Arg::marker(),
                },
                u32::from(RaiseKind::BareRaise),
                None,
            )));
            let anchor = (code > 0).then(|| FrameId(code as usize - 1));
            for (stub, label) in stubs {
                items.push(Item::Label(stub));
                items.push(Item::Instr(Instr::like(
                    &nowhere,
                    Instruction::PopTop,
                    0,
                    None,
                )));
                let goto = GotoAt {
                    marker,
                    from: anchor,
                    label,
                };
                items.extend(self.lower_goto(&nowhere, &site, goto)?);
            }
        }
        Ok(items)
    }
}

/// The search function made from its constant, with the NULL of its call, at the location
/// of `site` and under its handler.
fn make_search_function(function: u32, site: &Instr) -> Vec<Item> {
    [
        (load_const(), function),
        (Instruction::MakeFunction, 0),
        (Instruction::PushNull, 0),
    ]
    .map(|(op, arg)| Item::Instr(outer(site, op, arg, None)))
    .to_vec()
}

fn load_const() -> Instruction {
    Instruction::LoadConst {
        consti: Arg::marker(),
    }
}

fn swap_two(at: &Instr) -> Instr {
    Instr::like(at, Instruction::Swap { i: Arg::marker() }, 2, None)
}

fn false_constant() -> ConstantData {
    ConstantData::Boolean { value: false }
}

fn true_constant() -> ConstantData {
    ConstantData::Boolean { value: true }
}

/// The search function's code object, compiled by RustPython from its text.
fn compiled_search(text: &str) -> Option<CodeObject> {
    let opts = rustpython_compiler::CompileOpts::default();
    let module = rustpython_compiler::compile(text, Mode::Exec, SEARCH_FILE, opts).ok()?;
    module.constants.iter().find_map(|constant| match constant {
        ConstantData::Code { code } if code.obj_name == SEARCH_FUNCTION => Some((**code).clone()),
        _ => None,
    })
}
