//! Lowering the markers of one code object that CPython compiled from a prepared tree.
//!
//! The front end's plan ([`ScopePlan`]) says where each label and goto is (the position its
//! load of `label` or `goto` carries) and which frames each goto leaves; the shell made the
//! guards, trampolines and switches the plan asked for (a computed goto is CPython's code of
//! `goto * expr`). Here, on the instruction list, in steps over one context ([`Lowering`]):
//!
//! 1. one pass over the code finds the sites: a guard (`if label:` around a `return`,
//!    `raise`, `break`, `continue` or a `with` body, `while label:` for a constant-true
//!    test) is deleted, so the statement is unconditional again (where its jump was "if
//!    true", as 3.11's test at the bottom of a `while`, it becomes a jump); a trampoline's
//!    guard becomes a jump over the copy, so only gotos enter it; a label, a case and a
//!    switch's end become positions; gotos, switches and computed gotos are recorded;
//! 2. `decide` chooses every site's targets on the code as CPython laid it out (`targets`;
//!    `copies` pairs the copies CPython made of `finally` bodies);
//! 3. what each site becomes, back to front, then all spliced in one pass: a goto becomes
//!    the cleanup of each frame it leaves then a jump (`goto`), a switch or computed goto a
//!    search (`dispatch`);
//! 4. every inserted jump takes its target's handler, local loads a goto made unsafe are
//!    checked again (`locals`), and the list is assembled.

mod copies;
mod dispatch;
mod goto;
mod handlers;
mod levels;
mod locals;
mod targets;

pub(crate) use handlers::jumps_on_their_labels_side;
pub(crate) use locals::check_local_loads;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use super::bytecode::{Body, BytecodeError, Flow, Instr, InstrId, Item, Label};
use super::code::{Code, Constant, Lowered};
use super::plan::{
    CaseConstant, ComputedPlan, ComputedSearch, GotoPlan, Levels, Plan, ScopePlan, SearchPlan,
    SwitchPlan,
};
use super::shapes::Shapes;
use crate::splice::{Splice, splice_all};
use crate::tables::Position;
use dispatch::{Miss, SharedPlace, Way};
use targets::Analysis;

/// Why a code object could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LowerError {
    /// A construct refused by design (`G200`): what, where, and what to write instead.
    Refused {
        /// What cannot be rewritten.
        message: String,
        /// Where, as CPython gives positions.
        at: Position,
        /// What to write instead.
        help: &'static str,
    },
    /// Something gotopy expects of CPython's code did not hold (`G900`).
    Internal {
        /// What did not hold.
        message: String,
        /// Where, if known.
        at: Option<Position>,
    },
    /// The rewritten code fails the check, or cannot be decoded (`G900`).
    Check(BytecodeError),
}

impl From<BytecodeError> for LowerError {
    fn from(error: BytecodeError) -> LowerError {
        LowerError::Check(error)
    }
}

/// The help of a label CPython removed before gotopy could see it.
const REMOVED: &str = "CPython's compiler drops code under a condition it can prove false (`if False:`, \
     `while 0:`), and after a loop on a test it computes to be true (`while 1 + 1:`); move \
     the label, or test a variable instead";

/// The help of a goto whose copy of its target cannot be told.
const COPIES: &str = "CPython compiles a `finally` body once for each way out of its `try`; move the \
     jump and its target out of the `finally` body (into a function it calls, for \
     example), or out of the code that copies it";

/// The refusal of a goto to the label `name`, which CPython removed as unreachable.
fn removed(name: &str, at: Position) -> LowerError {
    LowerError::Refused {
        message: format!("CPython's compiler removed label `.{name}` as unreachable"),
        at,
        help: REMOVED,
    }
}

fn internal(message: impl Into<String>, at: Position) -> LowerError {
    LowerError::Internal {
        message: message.into(),
        at: Some(at),
    }
}

/// What a site's jumps go to, once chosen.
enum Targets<'p> {
    /// The copy of its label (or trampoline entry) a goto goes to.
    Goto(usize),
    /// Where each case of a switch goes, and its end.
    Switch { cases: Vec<Label>, end: Label },
    /// A computed goto: each reachable label with the copy it goes to (shared by the
    /// computed gotos of one place).
    Computed(Rc<Vec<(&'p GotoPlan, usize)>>),
    /// A computed goto that calls the search function: its levels (`levels`).
    Levels(&'p Levels),
}

/// One site: where it is in the list after the first pass, and what it is.
#[derive(Clone, Copy)]
enum Site<'p> {
    Goto(usize, &'p GotoPlan),
    /// At the `POP_TOP` that ends the subject's statement.
    Switch(usize, &'p SwitchPlan),
    /// At the `*` of `goto *value`, the statement's `POP_TOP` after it; the index of its
    /// plan.
    Computed(usize, usize),
}

impl Site<'_> {
    fn at(self) -> usize {
        match self {
            Site::Goto(at, _) | Site::Switch(at, _) | Site::Computed(at, _) => at,
        }
    }

    /// The stack slots its statement has above the depth its jumps leave from: a switch's
    /// subject; a computed goto's value and the `None` under it that replaced `goto`.
    fn above(self) -> i64 {
        match self {
            Site::Goto(..) => 0,
            Site::Switch(..) => 1,
            Site::Computed(..) => 2,
        }
    }
}

/// The lowering of one code object.
pub struct Lowering<'p> {
    body: Body,
    code: &'p Code,
    scope: &'p ScopePlan,
    /// `with` item positions by where their statement starts.
    withs: HashMap<(i32, i32), &'p [Position]>,
    finally_bodies: Vec<Position>,
    guards: HashSet<Position>,
    trampolines: HashSet<Position>,
    /// Every copy of each trampoline's entry, by position, in code order.
    entries: HashMap<Position, Vec<Label>>,
    /// The instruction (a marker's or a guard's load) each label and entry stands for.
    marker_of: HashMap<Label, InstrId>,
    /// An instruction at the depth each trampoline's entry starts with (the guard's), in
    /// the order they were found.
    entry_depth_of: Vec<(Label, InstrId)>,
    /// Every copy of each label in code order: CPython compiles a `finally` body more than
    /// once (and 3.12 copies small exit blocks).
    labels: HashMap<&'p str, Vec<Label>>,
    /// Likewise for each case and end of a switch, by the position of its marker.
    places: HashMap<Position, Vec<Label>>,
    /// The opcode that loads `goto` in each computed goto, by the plan's index: its error
    /// loads `ValueError` the same way.
    name_loads: HashMap<usize, u8>,
    /// Which copy of each `finally` body each instruction is in.
    copies_of: HashMap<InstrId, HashMap<usize, usize>>,
    /// The first unbinding of each `as` name in the code, found when a goto first needs one.
    unbindings: Option<HashMap<&'p str, [(u8, u32); 3]>>,
    /// Where each `with` statement's exit may be, found when a goto first needs one.
    exits: Option<goto::Exits>,
    /// Labels CPython removed as unreachable.
    missing: HashSet<&'p str>,
    constants: Vec<Constant>,
    added: Vec<Constant>,
    /// Names added to `co_names`.
    names: Vec<String>,
    /// The index in `co_names` of each name the lowering loads.
    name_index: HashMap<String, u32>,
    constant_index: Option<HashMap<Constant, u32>>,
    analysis: Option<Analysis>,
    /// What the computed gotos that call the search function share.
    levels: levels::Shared,
}

impl<'p> Lowering<'p> {
    /// Lowers the markers of `code`, the code object of `scope`, as `plan` says.
    pub fn lower(
        shapes: &'static Shapes,
        code: &'p Code,
        scope: &'p ScopePlan,
        plan: &'p Plan,
    ) -> Result<Lowered, LowerError> {
        let body = Body::decode(shapes, code.raw())?;
        let mut finally_bodies = plan.finally_bodies.clone();
        finally_bodies.sort_unstable();
        finally_bodies.dedup();
        let mut lowering = Lowering {
            body,
            code,
            scope,
            withs: plan
                .withs
                .iter()
                .map(|with| (with.at, with.items.as_slice()))
                .collect(),
            finally_bodies,
            guards: plan.guards.iter().copied().collect(),
            trampolines: plan.trampolines.iter().map(|t| t.span).collect(),
            entries: HashMap::new(),
            marker_of: HashMap::new(),
            entry_depth_of: Vec::new(),
            labels: HashMap::new(),
            places: HashMap::new(),
            name_loads: HashMap::new(),
            copies_of: HashMap::new(),
            unbindings: None,
            exits: None,
            missing: HashSet::new(),
            constants: code.constants.clone(),
            added: Vec::new(),
            names: Vec::new(),
            name_index: HashMap::new(),
            constant_index: None,
            analysis: None,
            levels: levels::Shared::default(),
        };
        lowering.run()
    }

    fn shapes(&self) -> &'static Shapes {
        self.body.shapes
    }

    /// The name an instruction loads or stores, for the opcodes markers and guards use.
    fn name_of(&self, instr: &Instr) -> Option<&'p str> {
        let code = self.code;
        self.shapes()
            .name_of(instr.op, instr.arg, &code.names, &code.locals)
    }

    /// The attribute name of a `word .name` statement whose load is `items[index]`.
    fn marker_at(&self, items: &[Item], index: usize, word: &str) -> Option<&'p str> {
        let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop)] =
            items.get(index..index + 3)?
        else {
            return None;
        };
        let shapes = self.shapes();
        if !shapes.is(attr.op, "LOAD_ATTR") || !shapes.is(pop.op, "POP_TOP") {
            return None;
        }
        if self.name_of(load) != Some(word) {
            return None;
        }
        self.name_of(attr)
    }

    fn run(&mut self) -> Result<Lowered, LowerError> {
        let scope = self.scope;
        let labels: HashMap<Position, &str> = scope
            .labels
            .iter()
            .map(|label| (label.keyword, label.name.as_str()))
            .collect();
        let mut gotos: HashMap<Position, Vec<&GotoPlan>> = HashMap::new();
        for goto in &scope.gotos {
            gotos.entry(goto.keyword).or_default().push(goto);
        }
        // Cases and the ends of switches are places like labels, by their markers' positions.
        let mut places: HashSet<Position> = scope
            .switches
            .iter()
            .flat_map(|switch| switch.cases.iter().map(|case| case.keyword))
            .collect();
        places.extend(scope.switches.iter().map(|switch| switch.end));
        let dispatches: HashMap<Position, &SwitchPlan> =
            scope.switches.iter().map(|s| (s.dispatch, s)).collect();
        let computed: HashMap<Position, usize> = (scope.computed.iter().enumerate())
            .map(|(index, c)| (c.keyword, index))
            .collect();
        // The computed gotos whose load of `goto` the pass has met and whose `*` it has not,
        // by the span of their statement (which the `*` carries).
        let mut multiplying: HashMap<Position, usize> = HashMap::new();
        // Where each computed goto's load of `goto` became one of `None`, by plan index.
        let mut none_loads: HashMap<usize, usize> = HashMap::new();
        self.copies_of = copies::finally_copies(&self.body, &self.finally_bodies)?;
        // First pass: guards, trampolines, labels and places, whose positions the sites
        // (gotos, switches and computed gotos) need.
        let items = std::mem::take(&mut self.body.items);
        let mut out: Vec<Item> = Vec::with_capacity(items.len());
        let mut sites: Vec<Site<'p>> = Vec::new();
        let mut index = 0;
        while index < items.len() {
            let item = &items[index];
            let Item::Instr(load) = item else {
                out.push(item.clone());
                index += 1;
                continue;
            };
            if let Some(number) = self.computed_jump(&items, index, &mut multiplying)? {
                sites.push(Site::Computed(out.len(), number));
                out.extend(items[index..index + 2].iter().cloned());
                index += 2;
                continue;
            }
            if !self.shapes().is_name_load(load.op) {
                out.push(item.clone());
                index += 1;
                continue;
            }
            let span = load.position;
            let word = self.name_of(load);
            if word == Some("label")
                && (self.guards.contains(&span) || self.trampolines.contains(&span))
            {
                let trampoline = self.trampolines.contains(&span);
                index = self.remove_guard(&items, index, trampoline, &mut out)?;
                continue;
            }
            if word == Some("label")
                && let Some(&name) = labels.get(&span)
                && self.marker_at(&items, index, "label") == Some(name)
            {
                self.place(name, None, load, &mut out);
                index += 3;
                continue;
            }
            if let Some(word @ ("case" | "switch")) = word
                && places.contains(&span)
                && self.marker_at(&items, index, word) == Some(word)
            {
                self.place(word, Some(span), load, &mut out);
                index += 3;
                continue;
            }
            // A switch's marker, its subject on the stack before it.
            if word == Some("switch")
                && let Some(&switch) = dispatches.get(&span)
                && self.marker_at(&items, index, "switch") == Some("switch")
            {
                let at = self.subject_statement_end(&out, switch.subject)?;
                sites.push(Site::Switch(at, switch));
                out.extend(items[index..index + 3].iter().cloned());
                index += 3;
                continue;
            }
            // `goto *value` as CPython compiles it: the load of `goto`, the value, `*` and
            // the `POP_TOP` of the statement. The load becomes one of `None`, which keeps
            // every depth CPython computed inside the value; the `*` and the `POP_TOP`
            // become the site.
            if word == Some("goto")
                && let Some(&number) = computed.get(&span)
            {
                let mut none_load = load.clone();
                none_load.op = self.op("LOAD_CONST")?;
                none_load.arg = self.constant(Constant::None);
                none_loads.insert(number, out.len());
                out.push(Item::Instr(none_load));
                multiplying.insert(scope.computed[number].statement, number);
                self.name_loads.insert(number, load.op);
                index += 1;
                continue;
            }
            if word == Some("goto")
                && let Some(plans) = gotos.get(&span)
            {
                let name = self.marker_at(&items, index, "goto");
                if let Some(plan) = plans.iter().find(|goto| Some(goto.name.as_str()) == name) {
                    sites.push(Site::Goto(out.len(), plan));
                    out.extend(items[index..index + 3].iter().cloned());
                    index += 3;
                    continue;
                }
            }
            out.push(item.clone());
            index += 1;
        }
        if let Some(&number) = multiplying.values().next() {
            return Err(internal(
                "cannot find the `*` of a computed goto in the compiled code",
                scope.computed[number].keyword,
            ));
        }
        self.body.items = out;
        self.missing = labels
            .values()
            .copied()
            .filter(|name| !self.labels.contains_key(name))
            .collect();
        // Every target is chosen on the code as CPython laid it out, before any splice.
        let decided = self.decide(&sites)?;
        let shared = self.shared_searches(&sites, &decided)?;
        // Second pass: what each site becomes, back to front (the order in which labels,
        // constants and instructions are numbered), all read on the code as the first pass
        // left it: what a lowering copies (a `with` exit, an unbinding) is never part of a
        // site. Then every replacement in one pass over the code.
        let mut splices = Vec::with_capacity(sites.len());
        for (site, targets) in sites.into_iter().zip(decided).rev() {
            let at = site.at();
            let Some(targets) = targets else {
                // A switch or computed goto in code that never runs: a switch's markers go,
                // and the value its statement computes is dropped as CPython compiled it; a
                // computed goto's `*` becomes a `POP_TOP`, which drops the value before the
                // statement's drops the `None`.
                let splice = match site {
                    Site::Computed(..) => {
                        let multiply = self.instr_at(at)?;
                        let pop_top = self.op("POP_TOP")?;
                        let mut pop = multiply;
                        pop.op = pop_top;
                        pop.arg = 0;
                        Splice {
                            at,
                            len: 1,
                            items: vec![Item::Instr(pop)],
                        }
                    }
                    _ => {
                        let end = (at + 4).min(self.body.items.len());
                        Splice {
                            at: at + 1,
                            len: end.saturating_sub(at + 1),
                            items: Vec::new(),
                        }
                    }
                };
                splices.push(splice);
                continue;
            };
            let (len, items) = match (site, targets) {
                (Site::Goto(_, plan), Targets::Goto(copy)) => {
                    let load = self.instr_at(at)?;
                    (3, self.lower_goto(&load, at, plan, copy)?)
                }
                (Site::Switch(_, plan), Targets::Switch { cases, end }) => {
                    let marker = self.instr_at(at + 1)?;
                    self.own_reference(at - 1);
                    (4, self.lower_switch(&marker, plan, cases, end)?)
                }
                (Site::Computed(_, number), Targets::Computed(chosen)) => {
                    let shared = shared.get(&number);
                    let way = Way::InLine(&chosen);
                    (
                        2,
                        self.lower_computed_site(at, number, way, shared, &none_loads)?,
                    )
                }
                (Site::Computed(_, number), Targets::Levels(levels)) => {
                    let shared = shared.get(&number);
                    let way = Way::Levels(levels);
                    (
                        2,
                        self.lower_computed_site(at, number, way, shared, &none_loads)?,
                    )
                }
                _ => {
                    return Err(internal(
                        "a site's targets are of another kind",
                        self.first_marker(),
                    ));
                }
            };
            splices.push(Splice { at, len, items });
        }
        splices.reverse();
        // The searches by number of the levels the search function's places jump to, last.
        splices.push(Splice {
            at: self.body.items.len(),
            len: 0,
            items: self.level_searches()?,
        });
        let items = std::mem::take(&mut self.body.items);
        let Some((items, _)) = splice_all(items, splices) else {
            return Err(internal(
                "the sites of the lowering overlap",
                self.first_marker(),
            ));
        };
        self.body.items = items;
        handlers::jumps_on_their_labels_side(&mut self.body)?;
        if self.shapes().unchecked_local_loads {
            locals::check_local_loads(&mut self.body, self.code)?;
        }
        let assembled = self.body.assemble()?;
        Ok(Lowered {
            code: assembled.code,
            locations: assembled.locations,
            exceptions: assembled.exceptions,
            stacksize: assembled.depth.max(self.code.stacksize),
            added: std::mem::take(&mut self.added),
            names: std::mem::take(&mut self.names),
        })
    }

    /// The opcode `name`, which every version this lowering runs on has.
    fn op(&self, name: &str) -> Result<u8, LowerError> {
        self.shapes().op(name).ok_or_else(|| {
            internal(
                format!("CPython {} has no {name}", self.shapes().version),
                self.first_marker(),
            )
        })
    }

    /// The instruction at `at` in the list, a copy.
    fn instr_at(&self, at: usize) -> Result<Instr, LowerError> {
        match self.body.items.get(at) {
            Some(Item::Instr(instr)) => Ok(instr.clone()),
            _ => Err(internal(
                "a site is not on an instruction",
                self.first_marker(),
            )),
        }
    }

    /// Where the scope's first marker is, for an error about the whole scope.
    fn first_marker(&self) -> Position {
        first_marker(self.scope).unwrap_or([1, 1, 0, 0])
    }

    /// Replaces a label's (or a place's) marker with a new copy of it: a label `name`, or
    /// the place at `place` (a case, or the end of a switch when `name` is `switch`). A
    /// label or a case keeps a `NOP` at its marker's position, as CPython keeps one for
    /// `pass`: reaching it is a line event (tracers, debuggers, coverage), and an exception
    /// a tracer raises there meets the handlers the marker had.
    fn place(
        &mut self,
        name: &'p str,
        place: Option<Position>,
        marker: &Instr,
        out: &mut Vec<Item>,
    ) {
        let label = self.body.new_label();
        out.push(Item::Label(label));
        match place {
            Some(span) => self.places.entry(span).or_default().push(label),
            None => self.labels.entry(name).or_default().push(label),
        }
        self.marker_of.insert(label, marker.id);
        if name != "switch" {
            let nop = self.shapes().nop;
            out.push(Item::Instr(self.body.like(marker, nop, 0, None)));
        }
    }

    /// The index in `out` of the `POP_TOP` that ends the statement computing a switch's
    /// subject, just before its marker: it carries the value's position (or none, when
    /// CPython folded a constant or joined branches), after code of the value.
    fn subject_statement_end(&self, out: &[Item], subject: Position) -> Result<usize, LowerError> {
        let pop = out.last().and_then(Item::instr);
        let value = out[..out.len().saturating_sub(1)]
            .iter()
            .rev()
            .find_map(Item::instr);
        if let (Some(pop), Some(value)) = (pop, value)
            && self.shapes().is(pop.op, "POP_TOP")
            && (pop.position == subject || pop.position == crate::tables::NO_POSITION)
            && within(value.position, subject)
        {
            return Ok(out.len() - 1);
        }
        Err(BytecodeError::new("cannot find where the compiled code computes this value").into())
    }

    /// The plan's index of the computed goto whose `*` is `items[index]`, which it takes out
    /// of `multiplying` (the computed gotos whose load of `goto` came before, by the span of
    /// their statement): the `*` carries the statement's span, its `POP_TOP` follows.
    fn computed_jump(
        &self,
        items: &[Item],
        index: usize,
        multiplying: &mut HashMap<Position, usize>,
    ) -> Result<Option<usize>, LowerError> {
        let shapes = self.shapes();
        let Some(Item::Instr(multiply)) = items.get(index) else {
            return Ok(None);
        };
        if multiplying.is_empty()
            || !shapes.is(multiply.op, "BINARY_OP")
            || multiply.arg != shapes.multiply
        {
            return Ok(None);
        }
        let Some(number) = multiplying.remove(&multiply.position) else {
            return Ok(None);
        };
        match items.get(index + 1) {
            Some(Item::Instr(pop)) if shapes.is(pop.op, "POP_TOP") => Ok(Some(number)),
            _ => Err(
                BytecodeError::new("a computed goto's `*` is not a statement of its own").into(),
            ),
        }
    }

    /// Deletes the guard whose load is `items[index]`; the index after it.
    fn remove_guard(
        &mut self,
        items: &[Item],
        index: usize,
        trampoline: bool,
        out: &mut Vec<Item>,
    ) -> Result<usize, LowerError> {
        let shapes = self.shapes();
        let Some(Item::Instr(load)) = items.get(index) else {
            return Err(internal(
                "a guard is not on an instruction",
                self.first_marker(),
            ));
        };
        let not_found = || {
            internal(
                "cannot find the test of a guard in the compiled code",
                load.position,
            )
        };
        let mut at = index + 1;
        if items
            .get(at)
            .and_then(Item::instr)
            .is_some_and(|instr| shapes.is(instr.op, "TO_BOOL"))
        {
            at += 1;
        }
        let Some(Item::Instr(jump)) = items.get(at) else {
            return Err(not_found());
        };
        let (Some(taken_if_true), Some(target)) = (shapes.jumps_if(jump.op), jump.target) else {
            return Err(not_found());
        };
        at += 1;
        if items
            .get(at)
            .and_then(Item::instr)
            .is_some_and(|instr| shapes.is(instr.op, "NOT_TAKEN"))
        {
            at += 1;
        }
        let jump_forward = shapes.jump_forward;
        if trampoline && !taken_if_true {
            // Ordinary flow jumps over the copy; gotos enter it after the jump.
            let over = self.body.like(load, jump_forward, 0, Some(target));
            let over_id = over.id;
            out.push(Item::Instr(over));
            let entry = self.body.new_label();
            out.push(Item::Label(entry));
            self.entries.entry(load.position).or_default().push(entry);
            self.marker_of.insert(entry, load.id);
            self.set_entry_depth(entry, over_id);
        } else if trampoline {
            // CPython laid the copy out at the jump's target: ordinary flow falls through.
            self.entries.entry(load.position).or_default().push(target);
            self.marker_of.insert(target, load.id);
            if let Some(after) = items[at..].iter().find_map(Item::instr) {
                self.set_entry_depth(target, after.id);
            }
        } else if taken_if_true {
            let jump = self.body.like(load, jump_forward, 0, Some(target));
            out.push(Item::Instr(jump));
        } else {
            // The guarded statement's line stays a line event where its test was: CPython
            // keeps a `NOP` for `while True:`, which the guard `while label:` stood for.
            out.push(Item::Instr(self.body.like(load, shapes.nop, 0, None)));
        }
        Ok(at)
    }

    fn set_entry_depth(&mut self, entry: Label, reference: InstrId) {
        match self
            .entry_depth_of
            .iter_mut()
            .find(|(label, _)| *label == entry)
        {
            Some(found) => found.1 = reference,
            None => self.entry_depth_of.push((entry, reference)),
        }
    }

    /// Makes the load of a value that a search keeps on the stack (the item before the
    /// `POP_TOP` gotopy removes) a strong reference: CPython 3.14 borrows a local's
    /// reference only for a value consumed in its own basic block, and the search spans
    /// several.
    fn own_reference(&mut self, at: usize) {
        let shapes = self.shapes();
        if let Some(load_fast) = shapes.op("LOAD_FAST")
            && let Some(Item::Instr(value)) = self.body.items.get_mut(at)
            && shapes.is(value.op, "LOAD_FAST_BORROW")
        {
            value.op = load_fast;
        }
    }

    /// The index of `value` (`None`, an `int`, a `str` or `bytes`) in `co_consts`, added if
    /// needed.
    fn constant(&mut self, value: Constant) -> u32 {
        let constants = &self.constants;
        let index = self.constant_index.get_or_insert_with(|| {
            let mut found = HashMap::new();
            for (index, existing) in constants.iter().enumerate() {
                if matches!(
                    existing,
                    Constant::None | Constant::Int(_) | Constant::Str(_) | Constant::Bytes(_)
                ) {
                    found.entry(existing.clone()).or_insert(index as u32);
                }
            }
            found
        });
        if let Some(&at) = index.get(&value) {
            return at;
        }
        let at = self.constants.len() as u32;
        index.insert(value.clone(), at);
        self.constants.push(value.clone());
        self.added.push(value);
        at
    }

    /// The index of `name` in `co_names`, added if needed; `co_names` is searched once for
    /// each name.
    fn name(&mut self, name: &str) -> u32 {
        if let Some(&at) = self.name_index.get(name) {
            return at;
        }
        let names = &self.code.names;
        let at = names.iter().position(|existing| existing == name);
        let at = at.unwrap_or_else(|| {
            self.names.push(name.to_owned());
            names.len() + self.names.len() - 1
        });
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        self.name_index.insert(name.to_owned(), at);
        at
    }

    /// Whether `instr` loads `None`.
    fn is_none(&self, instr: &Instr) -> bool {
        is_none(self.shapes(), &self.constants, instr)
    }
}

/// Whether `instr` loads `None` (3.15 has `LOAD_COMMON_CONSTANT` for it).
pub(crate) fn is_none(shapes: &Shapes, constants: &[Constant], instr: &Instr) -> bool {
    if shapes.is(instr.op, "LOAD_CONST") {
        return constants.get(instr.arg as usize) == Some(&Constant::None);
    }
    shapes.is(instr.op, "LOAD_COMMON_CONSTANT") && shapes.common_none == Some(instr.arg)
}

/// Whether the code from instruction `a` and from `b` (`instr` gives the instruction at an
/// index) is the same up to a return, raise or unconditional jump: the same instructions,
/// jumps and handlers (and source positions).
pub(crate) fn same_block<'i>(
    instr: impl Fn(usize) -> Option<&'i Instr>,
    shapes: &Shapes,
    a: usize,
    b: usize,
    positions: bool,
) -> bool {
    for step in 0..64 {
        let (Some(x), Some(y)) = (instr(a + step), instr(b + step)) else {
            return false;
        };
        if (x.op, x.arg, x.handler) != (y.op, y.arg, y.handler) || x.target != y.target {
            return false;
        }
        if positions && x.position != y.position {
            return false;
        }
        if shapes.is_terminal(x.op) || shapes.is_unconditional(x.op) {
            return true;
        }
    }
    false
}

/// Whether a position starts inside `span`.
fn within(position: Position, span: Position) -> bool {
    let [line, _, column, _] = position;
    if line < 0 || column < 0 {
        return false;
    }
    (span[0], span[2]) <= (line, column) && (line, column) < (span[1], span[3])
}

/// Where a scope's first marker is, for an error about the whole scope.
pub(crate) fn first_marker(scope: &ScopePlan) -> Option<Position> {
    let keywords = scope
        .labels
        .iter()
        .map(|label| label.keyword)
        .chain(scope.gotos.iter().map(|goto| goto.keyword))
        .chain(scope.computed.iter().map(|computed| computed.keyword))
        .chain(scope.switches.iter().map(|switch| switch.dispatch));
    keywords.min()
}

/// A case value as Python's `repr` shows it.
fn case_repr(value: &CaseConstant) -> String {
    match value {
        CaseConstant::Int(hex) => {
            let (negative, digits) = match hex.strip_prefix('-') {
                Some(digits) => (true, digits),
                None => (false, hex.as_str()),
            };
            let magnitude =
                malachite_bigint::BigInt::parse_bytes(digits.as_bytes(), 16).unwrap_or_default();
            format!("{}{magnitude}", if negative { "-" } else { "" })
        }
        CaseConstant::Str(text) => crate::literal::str_literal(text, '\''),
        CaseConstant::Bytes(bytes) => crate::literal::bytes_literal(bytes),
    }
}

#[cfg(test)]
mod tests;
