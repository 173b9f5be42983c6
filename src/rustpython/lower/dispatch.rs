//! Lowering `while switch` and computed `goto *expr`: a balanced binary search of
//! comparisons over the value the marker left on the stack, under handlers whose depth is
//! set once the code object is complete (`set_search_depths`).

use std::collections::HashMap;
use std::rc::Rc;

use rustpython_compiler::core::bytecode::{Arg, ConstantData, ConvertValueOparg, Instruction};
use rustpython_compiler::core::{OneIndexed, SourceLocation};

use super::context::Lowering;
use super::goto::GotoAt;
use super::levels::Levels;
use super::search::{Search, SharedSearch, TOP, UnknownDepth, called_and_raised, outer};
use super::{REMOVED_AS_UNREACHABLE, Site, SiteKind, broken, jump_op, refuse};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{CaseKey, FrameId, MarkerId, MarkerKind, SwitchId};
use crate::plan::cases::{NO_SUCH_LABEL, computed_targets, no_such_label_text, switch_cases};
use crate::rustpython::bytecode::{Handler, Instr, Item, Label, LineEntry};
use crate::rustpython::shapes;

/// A search handler that unwinds to the search's start, keeping the value on the stack for
/// `miss` to drop or report.
pub(super) const KEEPS_VALUE: u32 = 0;
/// A search handler that unwinds to one value below the search's start, dropping the value.
const DROPS_VALUE: u32 = 1;

impl<'r> Lowering<'r, '_> {
    /// A switch: the subject is on the stack; search the case values, then drop the
    /// subject and jump to the matching case, or to the end of the switch (the default).
    pub(super) fn lower_switch(
        &mut self,
        site: Site,
        marker: MarkerId,
        switch: SwitchId,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = self.scope;
        let (end, _) = self.targets.end(switch, site.copy, scope, marker)?;
        let start_instr = self.dispatch_start(&site, marker)?;
        let mut keys = Vec::new();
        for (value, case) in switch_cases(scope, switch) {
            let Some(&(target, _)) = self.targets.cases.get(&(case, site.copy)) else {
                return Err(refuse(
                    scope,
                    case,
                    "the code generator removed this case as unreachable".to_owned(),
                    REMOVED_AS_UNREACHABLE,
                ));
            };
            let Some(value) = constant(value) else {
                return Err(broken(
                    scope,
                    case,
                    "an invalid case value got past the checker".to_owned(),
                ));
            };
            keys.push((self.added.constant(value), target));
        }
        let mut items = Vec::new();
        let miss = self.body.new_label();
        let start = self.body.new_label();
        items.push(Item::Label(start));
        let guard = self.guard_handler(&start_instr, (start, KEEPS_VALUE), miss);
        // At a leaf the value is gone: anything raised there goes straight to the end.
        let leaf_guard = self.guard_handler(&start_instr, (start, DROPS_VALUE), end);
        let search = Search {
            site: &start_instr,
            guard: Some(guard),
            miss,
            consume: Some((end, leaf_guard)),
            slot: TOP,
        };
        search.emit(&keys, &mut self.body, &mut items);
        items.push(Item::Label(miss));
        items.push(Item::Instr(outer(
            &start_instr,
            Instruction::PopTop,
            0,
            None,
        )));
        // The end is in the same blocks as the start, so the jump keeps the start's handler.
        // (Not the end's: RustPython 0.5 can cover the code after a switch whose body never
        // finishes with the handler of a `with` in the body, deeper than the stack there.)
        items.push(Item::Instr(outer(&start_instr, jump_op(), 0, Some(end))));
        Ok(items)
    }

    /// `goto *expr`: the value is on the stack; search the names of the labels this goto
    /// may jump to, then drop the value and go there as `goto .name` would; any other value
    /// raises `ValueError`.
    pub(super) fn lower_computed_goto(
        &mut self,
        site: Site,
        marker: MarkerId,
    ) -> Result<Vec<Item>, Diagnostic> {
        if let Some((own, search)) = self.shared.get(&marker).cloned() {
            return self.lower_shared(site, marker, own, &search);
        }
        let start_instr = self.dispatch_start(&site, marker)?;
        let start = self.body.new_label();
        let mut items = vec![Item::Label(start)];
        let way = self.way(site, marker)?;
        let (found, miss) = self.search_by(&way, site, marker, &start_instr, start, TOP)?;
        items.extend(found);
        items.push(Item::Label(miss));
        let raise = self.raise_for(way);
        items.extend(self.raise(&start_instr, &raise)?);
        Ok(items)
    }

    /// How the computed goto `marker` at `site` (and the others of its place) finds its
    /// label: through the search function (`levels`), or by a search in line over the
    /// labels it may reach.
    fn way(&mut self, site: Site, marker: MarkerId) -> Result<Way<'r>, Diagnostic> {
        Ok(match self.levels(site, marker)? {
            Some(levels) => Way::Function(levels),
            None => Way::InLine(self.reachable_labels(&site, marker)?),
        })
    }

    /// The search `way` gives, for the value `slot` deep on the stack from `start`, at the
    /// location of `at`: the items and where a value that names no label goes.
    fn search_by(
        &mut self,
        way: &Way<'r>,
        site: Site,
        marker: MarkerId,
        at: &Instr,
        start: Label,
        slot: u32,
    ) -> Result<(Vec<Item>, Label), Diagnostic> {
        match way {
            Way::Function(levels) => self.function_search(site, marker, at, levels, slot),
            Way::InLine(names) => self.label_search(site, marker, at, start, names, slot),
        }
    }

    /// How the gotos that go `way` raise their `ValueError`: the texts of its message are
    /// made once for all of them.
    fn raise_for(&mut self, way: Way<'r>) -> Raise {
        match way {
            Way::Function(levels) => Raise::Function(levels),
            Way::InLine(names) => Raise::Texts(self.no_such_label_texts(&names)),
        }
    }

    /// The `ValueError` of a computed goto at `site`, the value on the stack.
    fn raise(&mut self, site: &Instr, raise: &Raise) -> Result<Vec<Item>, Diagnostic> {
        match raise {
            Raise::Function(levels) => self.raise_from_function(site, levels),
            &Raise::Texts(texts) => Ok(self.raise_no_such_label(site, texts)),
        }
    }

    /// The search among the labels `names` of the computed goto `marker` for the value
    /// `slot` deep on the stack, from `start`, at the location of `at`: each match drops
    /// the value and what is over it and goes to its label as `goto .name` would. Gives the
    /// items and where no match goes (or what a comparison raised), the stack as it was.
    fn label_search(
        &mut self,
        site: Site,
        marker: MarkerId,
        at: &Instr,
        start: Label,
        names: &[&'r str],
        slot: u32,
    ) -> Result<(Vec<Item>, Label), Diagnostic> {
        let mut items = Vec::new();
        let miss = self.body.new_label();
        let guard = self.guard_handler(at, (start, KEEPS_VALUE), miss);
        let mut stubs = Vec::new();
        let mut keys = Vec::new();
        for &name in names {
            let stub = self.body.new_label();
            let key = self
                .added
                .constant(ConstantData::Str { value: name.into() });
            keys.push((key, stub));
            stubs.push((name, stub));
        }
        let search = Search {
            site: at,
            guard: Some(guard),
            miss,
            consume: None,
            slot,
        };
        search.emit(&keys, &mut self.body, &mut items);
        let from = self.scope.marker(marker).frame;
        for (label, stub) in stubs {
            items.push(Item::Label(stub));
            for _ in 0..slot {
                items.push(Item::Instr(outer(at, Instruction::PopTop, 0, None)));
            }
            let goto = GotoAt {
                marker,
                from,
                label,
            };
            items.extend(self.lower_goto(at, &site, goto)?);
        }
        Ok((items, miss))
    }

    /// The computed goto `marker`, the `own`-th of a place that shares `search`: it pushes
    /// its number over the value and jumps forward to the search, or for the last one is
    /// the search. A match drops both and goes to its label as `goto .name` would; a value
    /// no label has goes on to a search of the numbers, which raises the error of the goto
    /// it finds at that goto's location. The search and its stubs have no line in the line
    /// table, and the function's first line as their location: never another goto's.
    fn lower_shared(
        &mut self,
        site: Site,
        marker: MarkerId,
        own: usize,
        search: &SharedSearch,
    ) -> Result<Vec<Item>, Diagnostic> {
        const VALUE_UNDER_NUMBER: u32 = 2;
        let start_instr = self.dispatch_start(&site, marker)?;
        let number = self
            .added
            .constant(ConstantData::Integer { value: own.into() });
        let load = Instruction::LoadConst {
            consti: Arg::marker(),
        };
        let mut items = vec![Item::Instr(outer(&start_instr, load, number, None))];
        if own + 1 < search.gotos.len() {
            items.push(Item::Instr(outer(
                &start_instr,
                jump_op(),
                0,
                Some(search.entry),
            )));
            return Ok(items);
        }
        let nowhere = self.nowhere(&start_instr);
        items.push(Item::Label(search.entry));
        let way = self.way(site, marker)?;
        let (found, miss) = self.search_by(
            &way,
            site,
            marker,
            &nowhere,
            search.entry,
            VALUE_UNDER_NUMBER,
        )?;
        items.extend(found);
        items.push(Item::Label(miss));
        let keys: Vec<(u32, Label)> = (search.raises.iter().enumerate())
            .map(|(own, &raise)| {
                let value = own.into();
                (self.added.constant(ConstantData::Integer { value }), raise)
            })
            .collect();
        let numbers = Search {
            site: &nowhere,
            guard: None,
            miss: search.raises[0],
            consume: None,
            slot: TOP,
        };
        numbers.emit(&keys, &mut self.body, &mut items);
        let raise = self.raise_for(way);
        for ((_, goto), &at) in search.gotos.iter().zip(&search.raises) {
            items.push(Item::Label(at));
            items.push(Item::Instr(outer(goto, Instruction::PopTop, 0, None)));
            items.extend(self.raise(goto, &raise)?);
        }
        Ok(items)
    }

    /// The computed gotos that share a search with others of their place, by marker: each
    /// one's number in its group and the group's search. A place is the frames a goto is in
    /// (which decide the labels it may reach, what leaving its frames takes and the stack
    /// depth) and the handler of its statement, outside every `finally` body the code
    /// generator compiled more than once (where a marker has a site in each copy).
    pub(super) fn shared_searches(
        &mut self,
    ) -> Result<HashMap<MarkerId, (usize, Rc<SharedSearch>)>, Diagnostic> {
        type Place = (Option<FrameId>, Option<Handler>);
        let mut group_of: HashMap<Place, usize> = HashMap::new();
        let mut groups: Vec<Vec<(MarkerId, Instr)>> = Vec::new();
        for site in self.sites() {
            let SiteKind::Marker(_, marker) = site.kind else {
                continue;
            };
            let goto = self.scope.marker(marker);
            if !matches!(goto.kind, MarkerKind::ComputedGoto { .. })
                || self
                    .copies
                    .get(&site.kind)
                    .is_some_and(|&copies| copies > 1)
            {
                continue;
            }
            let start = self.dispatch_start(&site, marker)?;
            let next = groups.len();
            let group = *(group_of.entry((goto.frame, start.handler))).or_insert(next);
            if group == next {
                groups.push(Vec::new());
            }
            groups[group].push((marker, start));
        }
        let mut shared = HashMap::new();
        for gotos in groups.into_iter().filter(|gotos| gotos.len() > 1) {
            let search = Rc::new(SharedSearch {
                entry: self.body.new_label(),
                raises: gotos.iter().map(|_| self.body.new_label()).collect(),
                gotos,
            });
            for (own, &(marker, _)) in search.gotos.iter().enumerate() {
                shared.insert(marker, (own, Rc::clone(&search)));
            }
        }
        Ok(shared)
    }

    /// The labels a computed goto may jump to ([`computed_targets`]) that the code
    /// generator kept in this copy.
    fn reachable_labels(&self, site: &Site, marker: MarkerId) -> Result<Vec<&'r str>, Diagnostic> {
        let names = computed_targets(self.scope, marker)?;
        Ok(names
            .iter()
            .copied()
            .filter(|&name| self.targets.labels.contains_key(&(name, site.copy)))
            .collect())
    }

    /// `raise ValueError(f"goto *: no label named {value!r} ...")`, the value still on the
    /// stack, with the constants of the texts before and after the value.
    fn raise_no_such_label(&mut self, site: &Instr, (before, after): (u32, u32)) -> Vec<Item> {
        // Once `ValueError`, its NULL and the text before the value are pushed.
        const VALUE_BELOW_CALLEE_NULL_AND_TEXT: u32 = 4;
        const PARTS: u32 = 3;
        let mut raise = self.load_value_error(site);
        let load_const = || Instruction::LoadConst {
            consti: Arg::marker(),
        };
        raise.extend([
            (load_const(), before),
            (
                Instruction::Copy { i: Arg::marker() },
                VALUE_BELOW_CALLEE_NULL_AND_TEXT,
            ),
            (
                Instruction::ConvertValue {
                    oparg: Arg::marker(),
                },
                u32::from(ConvertValueOparg::Repr),
            ),
            (Instruction::FormatSimple, 0),
            (load_const(), after),
            (
                Instruction::BuildString {
                    count: Arg::marker(),
                },
                PARTS,
            ),
        ]);
        raise.extend(called_and_raised());
        raise
            .into_iter()
            .map(|(op, arg)| Item::Instr(outer(site, op, arg, None)))
            .collect()
    }

    /// `ValueError`, then a NULL, loaded the way the marker at `site` loads its name.
    pub(super) fn load_value_error(&mut self, site: &Instr) -> Vec<(Instruction, u32)> {
        let error = self.added.name("ValueError");
        if shapes::loads_by_name(site) {
            let load = Instruction::LoadName {
                namei: Arg::marker(),
            };
            vec![(load, error), (Instruction::PushNull, 0)]
        } else {
            let load = Instruction::LoadGlobal {
                namei: Arg::marker(),
            };
            vec![(load, shapes::load_global_with_null(error))]
        }
    }

    /// The constants of the message's text before and after the value.
    fn no_such_label_texts(&mut self, names: &[&str]) -> (u32, u32) {
        let after = no_such_label_text(&self.scope.qualname, names);
        let before = self.added.constant(ConstantData::Str {
            value: NO_SUCH_LABEL.into(),
        });
        let after = self.added.constant(ConstantData::Str {
            value: after.as_str().into(),
        });
        (before, after)
    }

    /// An instruction like `like` with no line of its own, for code that several gotos share.
    /// RustPython's line events and tracebacks read each instruction's location, which
    /// cannot be empty: it takes the first line of the function (its `def`), never another
    /// goto's.
    pub(super) fn nowhere(&self, like: &Instr) -> Instr {
        let first = SourceLocation {
            line: self.code.first_line_number.unwrap_or(OneIndexed::MIN),
            character_offset: OneIndexed::MIN,
        };
        Instr {
            line: LineEntry::NONE,
            location: (first, first),
            ..like.clone()
        }
    }

    /// The instruction whose location and handler a dispatch's instructions take (the
    /// marker's load), checking that the value is there to be searched.
    fn dispatch_start(&self, site: &Site, marker: MarkerId) -> Result<Instr, Diagnostic> {
        self.body
            .items
            .get(site.at..site.at + site.len)
            .and_then(shapes::dispatch_start)
            .ok_or_else(|| {
                broken(
                    self.scope,
                    marker,
                    "cannot find where the compiled code computes this value".to_owned(),
                )
            })
    }

    /// The handler of a search's comparisons: it drops what was raised and goes to `miss`
    /// as if nothing matched. Its block goes into the cold blocks. It unwinds the stack to
    /// the depth at `start` (where the search begins with the value on top) less `below`:
    /// [`KEEPS_VALUE`] keeps the value for `miss` to drop or report, [`DROPS_VALUE`] drops
    /// it too. That depth is computed on the finished code, once every jump that reaches the
    /// search is in place ([`set_search_depths`]).
    pub(super) fn guard_handler(
        &mut self,
        site: &Instr,
        (start, below): (Label, u32),
        miss: Label,
    ) -> Handler {
        let target = self.body.new_label();
        let cold = &mut self.added.cold;
        cold.push(Item::Label(target));
        cold.push(Item::Instr(outer(site, Instruction::PopTop, 0, None)));
        cold.push(Item::Instr(outer(site, jump_op(), 0, Some(miss))));
        self.added.unknown_depths.push(UnknownDepth {
            handler: target,
            start,
            below,
        });
        Handler {
            target,
            depth: 0,
            lasti: false,
        }
    }
}

/// How the computed gotos of one place find their label.
enum Way<'r> {
    /// A search in line over the labels they may reach, sorted.
    InLine(Vec<&'r str>),
    /// A call of the search function, then the way out to the level of the label found.
    Function(Levels),
}

/// How the computed gotos of one place raise their `ValueError`.
enum Raise {
    /// With the constants of the message's text before and after the value.
    Texts((u32, u32)),
    /// With the message the search function builds.
    Function(Levels),
}

/// A case value as a constant (`None` for an invalid value, which the checker rejects).
fn constant(key: &CaseKey) -> Option<ConstantData> {
    Some(match key {
        CaseKey::Int(value) => ConstantData::Integer {
            value: value.clone(),
        },
        CaseKey::Str(value) => ConstantData::Str {
            value: value.as_str().into(),
        },
        CaseKey::Bytes(value) => ConstantData::Bytes {
            value: value.clone(),
        },
        CaseKey::Invalid => return None,
    })
}
