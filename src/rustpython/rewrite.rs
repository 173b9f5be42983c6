//! Rewriting a code object that RustPython compiled without gotopy: what the run-time
//! decorator `goto(f)` does (SPEC section 6) for code made by `exec`, `compile` or another
//! embedder.
//!
//! Without the source there is no syntax tree, so markers are found by their shape alone:
//! `LOAD_GLOBAL`/`LOAD_NAME goto` (or `label`), `LOAD_ATTR name`, `POP_TOP`. A label becomes
//! nothing and a goto a jump, when that is provably all it takes. The proof is a data-flow
//! analysis of the stack (`stack_owners`): for every reachable instruction, which
//! instruction put each stack slot there. A `for`, `with` or `except` block keeps its state
//! in slots it owns (the `FOR_ITER`'s iterator, the `with`'s exit, the saved exception), so
//! a goto is only a jump when its label's slots are exactly the goto's lowest ones, owner
//! for owner, every slot above them is the iterator of a `for` loop around the goto
//! (each dropped with `POP_ITER`), and both are under the same exception handler: the jump
//! then leaves only `for` loops and enters no block. Anything else is refused with an
//! error that says to compile the file through gotopy, which rewrites every legal case and
//! explains the rest; so is a label RustPython's own compiler already removed as
//! unreachable, a label or goto the analysis cannot place, and `goto *expr`/`while switch`,
//! which need the syntax tree.

use std::collections::HashMap;

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{Instruction, InstructionMetadata};

use crate::rustpython::bytecode::{
    Body, BytecodeError, Handler, Instr, Item, Label, for_each_code_mut,
};
use crate::rustpython::lower::jump_op;
use crate::rustpython::shapes::{self, Keyword, MARKER_LEN};

/// Why a code object could not be rewritten: a message and the source line it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RewriteError {
    /// What went wrong.
    pub message: String,
    /// The file the code object says it comes from.
    pub path: String,
    /// 1-based, when known.
    pub line: Option<u32>,
    /// Whether this is a failure inside gotopy (code it cannot decode, or a rewrite that
    /// fails verification) rather than a goto it refuses to rewrite.
    pub internal: bool,
}

/// Rewrites every marker of `code` and of the code objects nested in it, in place.
///
/// A code object without markers (for example one gotopy already compiled) is left as it
/// is, so rewriting twice changes nothing.
///
/// ```
/// use rustpython_compiler::{CompileOpts, Mode, compile};
///
/// let text = "def f(n):\n    label .top\n    n -= 1\n    if n:\n        goto .top\n    return n\n";
/// let mut code = compile(text, Mode::Exec, "<demo>", CompileOpts::default()).unwrap();
/// gotopy::rewrite::rewrite_code(&mut code).unwrap();
/// let listing = gotopy::bytecode::disassemble(&code).unwrap();
/// assert!(listing.contains("JUMP_BACKWARD") && !listing.contains("LOAD_ATTR"));
/// ```
/// Returns whether anything changed.
pub fn rewrite_code(code: &mut CodeObject) -> Result<bool, RewriteError> {
    let mut changed = false;
    for_each_code_mut(code, &mut |code| {
        changed |= rewrite_one(code)?;
        Ok(())
    })?;
    Ok(changed)
}

/// [`rewrite_code`] of a code object in RustPython's marshal format (the run-time
/// decorator's copy of a live one): `None` when nothing changed, or why its bytes could not
/// be read. Reading and rewriting recurse into each nested code object, so bytes that may
/// hold more than a few dozen nested in one another move the work to gotopy's deep stack.
pub fn rewrite_marshalled(
    bytes: &[u8],
) -> Result<Result<Option<CodeObject>, RewriteError>, String> {
    let work = || {
        let mut owned = crate::rustpython::bytecode::unmarshal(bytes)
            .ok_or_else(|| "not one marshalled code object".to_owned())?;
        Ok(rewrite_code(&mut owned).map(|changed| changed.then_some(owned)))
    };
    if crate::rustpython::bytecode::may_nest_deeply(bytes) {
        crate::front::depth::on_big_stack(work)
    } else {
        work()
    }
}

/// A marker found by shape.
struct Found {
    at: usize,
    keyword: Keyword,
    name: String,
    /// The keyword's load, whose location and handler a goto's jump starts from.
    load: Instr,
    line: u32,
}

/// Where a label is: its `Label`, its position and the handler in force there.
struct Placed {
    label: Label,
    at: usize,
    handler: Option<Handler>,
}

/// The code object a refusal is about.
struct Origin {
    path: String,
    qualname: String,
}

impl Origin {
    fn of(code: &CodeObject) -> Origin {
        Origin {
            path: code.source_path.to_string(),
            qualname: code.qualname.to_string(),
        }
    }

    /// A refusal, about `line` when known.
    fn error(&self, message: String, line: Option<u32>) -> RewriteError {
        RewriteError {
            message,
            path: self.path.clone(),
            line,
            internal: false,
        }
    }

    /// A failure inside gotopy.
    fn internal(&self, e: BytecodeError) -> RewriteError {
        RewriteError {
            internal: true,
            ..self.error(
                format!(
                    "internal error: cannot rewrite `{}`: {e} (a bug in gotopy, not in your \
                     program; please report it)",
                    self.qualname
                ),
                None,
            )
        }
    }
}

/// One code object the decorator rewrites, once its markers are found: place the labels,
/// prove each goto, then splice.
struct Decoration {
    origin: Origin,
    body: Body,
    found: Vec<Found>,
    labels: HashMap<String, Placed>,
}

fn rewrite_one(code: &mut CodeObject) -> Result<bool, RewriteError> {
    let origin = Origin::of(code);
    let mut body = Body::decode(code).map_err(|e| origin.internal(e))?;
    body.repair_handlers().map_err(|e| origin.internal(e))?;
    refuse_unsupported(&body, code).map_err(|(message, line)| origin.error(message, line))?;
    let found = find(&body, code);
    if found.is_empty() {
        return Ok(false);
    }
    let stacks = stack_owners(&body).map_err(|message| {
        let qualname = &origin.qualname;
        origin.error(
            format!("cannot rewrite `{qualname}`: its stack cannot be analysed: {message}"),
            None,
        )
    })?;
    let mut decoration = Decoration {
        origin,
        body,
        found,
        labels: HashMap::new(),
    };
    decoration.place_labels()?;
    let replacements = decoration.plan(&stacks)?;
    decoration.apply(replacements);
    decoration.body.fold_line_events(code);
    decoration
        .body
        .assemble(code)
        .map_err(|e| decoration.origin.internal(e))?;
    Ok(true)
}

impl Decoration {
    fn error(&self, message: String, line: Option<u32>) -> RewriteError {
        self.origin.error(message, line)
    }

    /// Splices the replacements in, from the end, so that each splice leaves the positions
    /// before it as they were.
    fn apply(&mut self, replacements: Vec<(usize, Vec<Item>)>) {
        for (at, replacement) in replacements.into_iter().rev() {
            let end = (at + MARKER_LEN).min(self.body.items.len());
            self.body.items.splice(at..end, replacement);
        }
    }

    /// A `Label` for every label statement; a name defined twice is refused.
    fn place_labels(&mut self) -> Result<(), RewriteError> {
        for marker in self.found.iter().filter(|m| m.keyword == Keyword::Label) {
            let placed = Placed {
                label: self.body.new_label(),
                at: marker.at,
                handler: marker.load.handler,
            };
            if self.labels.insert(marker.name.clone(), placed).is_some() {
                return Err(self.error(
                    format!(
                        "duplicate label `.{}` in `{}`",
                        marker.name, self.origin.qualname
                    ),
                    Some(marker.line),
                ));
            }
        }
        Ok(())
    }

    /// What replaces each marker, in code order. Every goto is proved on the code as
    /// compiled, before any edit moves an item, and the first one in code order that
    /// cannot be is the one reported.
    fn plan(&self, stacks: &[Option<Vec<Owner>>]) -> Result<Vec<(usize, Vec<Item>)>, RewriteError> {
        let mut replacements = Vec::with_capacity(self.found.len());
        for marker in &self.found {
            let Some(placed) = self.labels.get(&marker.name) else {
                return Err(self.error(
                    format!(
                        "label `.{}` not found in `{}`: it does not exist, or the \
                         interpreter's compiler removed it as unreachable (after a \
                         `return`, `raise`, `break`, `continue` or an endless loop); \
                         compile the file through gotopy, which keeps such labels",
                        marker.name, self.origin.qualname
                    ),
                    Some(marker.line),
                ));
            };
            let replacement = match marker.keyword {
                Keyword::Label => vec![
                    Item::Label(placed.label),
                    Item::Instr(Instr::line_event(&marker.load)),
                ],
                Keyword::Goto => self.jump(marker, placed, stacks)?,
            };
            replacements.push((marker.at, replacement));
        }
        Ok(replacements)
    }

    /// A goto as `POP_ITER` for each `for` loop it leaves, then a jump, once proved.
    fn jump(
        &self,
        goto: &Found,
        label: &Placed,
        stacks: &[Option<Vec<Owner>>],
    ) -> Result<Vec<Item>, RewriteError> {
        let unknown = None;
        let stack_at = |at: usize| stacks.get(at).unwrap_or(&unknown);
        let iterators = prove_jump(
            stack_at(goto.at),
            stack_at(label.at),
            goto.load.handler == label.handler,
        )
        .map_err(|refusal| {
            let message = refusal.explain(&self.body, &goto.name, &self.origin.qualname);
            self.error(message, Some(goto.line))
        })?;
        let mut items: Vec<Item> = (0..iterators)
            .map(|_| Item::Instr(Instr::like(&goto.load, Instruction::PopIter, 0, None)))
            .collect();
        let mut jump = Instr::like(&goto.load, jump_op(), 0, Some(label.label));
        jump.handler = label.handler;
        items.push(Item::Instr(jump));
        Ok(items)
    }
}

/// What put a value on the stack, as far as the proof of a goto needs to know: two
/// positions whose stacks have the same owners, slot by slot, are inside the same `for`,
/// `with` and `except` blocks (each block keeps its state in a slot it owns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// The iterator of the `for` loop whose `FOR_ITER` is the instruction at this index:
    /// every `FOR_ITER` leaves its iterator in the slot it took it from.
    Loop(usize),
    /// The iterator of the `async for` loop whose `GET_ANEXT` is at this index.
    AsyncLoop(usize),
    /// A value the instruction at this index pushed.
    Pushed(usize),
    /// What the exception handler starting at this instruction index receives.
    Caught(usize),
    /// The saved exception below the active one inside an `except` clause: the clauses of
    /// one `try` share that slot (and, unnamed, their cleanup handler), so the slot is told
    /// apart by the clause test it passed (the `POP_JUMP_IF_FALSE` after `CHECK_EXC_MATCH`
    /// at this index) and its outcome.
    Clause {
        /// The index of the clause's conditional jump.
        test: usize,
        /// Whether the clause matched (its body) or not (the next clause's test).
        matched: bool,
    },
    /// Paths that reach this position disagree about the slot.
    Unknown,
}

/// The owners of every stack slot before each item (`None` for labels and for code no path
/// reaches), by a forward data-flow analysis over jumps, fall-through and exception
/// handlers. Where paths meet with different owners for a slot, the slot becomes
/// [`Owner::Unknown`]; where they meet with different depths, or an instruction pops more
/// than the stack holds, the analysis fails with a message.
fn stack_owners(body: &Body) -> Result<Vec<Option<Vec<Owner>>>, String> {
    use crate::rustpython::bytecode::EdgeKind;
    let flow = body.flow();
    let mut stacks: Vec<Option<Vec<Owner>>> = vec![None; flow.len()];
    let mut work = Vec::new();
    if !flow.is_empty() {
        enter(&mut stacks, &mut work, 0, Vec::new())?;
    }
    while let Some(index) = work.pop() {
        let (Some(instr), Some(stack)) = (flow.instr(index), stacks[index].clone()) else {
            continue;
        };
        // What the jump and going on carry; an instruction that cannot run on this stack
        // still raises into its handler first.
        let after = transfer(index, instr, &stack);
        // An `except` clause's test: [saved, exception, match] becomes [saved, exception]
        // on both edges, with the saved slot tagged by the clause and outcome.
        let is_clause_test = |test: &usize| {
            flow.instr(*test)
                .is_some_and(|test| shapes::is_except_clause_test(test.op, instr.op))
        };
        let clause_test = matches!(stack.last(), Some(Owner::Pushed(test)) if is_clause_test(test));
        let tag = |mut stack: Vec<Owner>, matched: bool| {
            if clause_test && let Some(slot) = stack.len().checked_sub(2) {
                stack[slot] = Owner::Clause {
                    test: index,
                    matched,
                };
            }
            stack
        };
        for edge in flow.successors(index) {
            let edge = edge.map_err(|error| error.to_string())?;
            let incoming = match edge.kind {
                EdgeKind::Handler(handler) if handler.reached_at(stack.len()) => {
                    let mut caught = stack[..handler.depth as usize].to_vec();
                    let pushed = handler.pushes() as usize;
                    caught.extend(std::iter::repeat_n(Owner::Caught(edge.to), pushed));
                    caught
                }
                EdgeKind::Handler(_) => continue,
                EdgeKind::JumpKeepingStack => tag(stack.clone(), false),
                EdgeKind::Jump => tag(after.clone()?, false),
                EdgeKind::FallThrough => tag(after.clone()?, true),
            };
            enter(&mut stacks, &mut work, edge.to, incoming)?;
        }
        after?;
    }
    let mut by_item = vec![None; body.items.len()];
    for (stack, &at) in stacks.into_iter().zip(flow.items()) {
        by_item[at] = stack;
    }
    Ok(by_item)
}

/// How many values `WITH_EXCEPT_START` reads (in RustPython 0.5 as in CPython 3.14): the
/// `with` statement's exit and its `self`, and what the exception handler pushed above them.
const WITH_EXCEPT_START_READS: usize = 5;

/// The owners after instruction `index` (`instr`) runs on `stack`, when it goes on to the
/// next instruction or jumps.
///
/// A slot keeps its owner only where the instruction provably leaves it alone; what it
/// pops and pushes back belongs to it. RustPython's table of pops and pushes counts a value
/// an instruction passes through as popped and pushed again, so where the slot was
/// [`Owner::Unknown`] it stays so: the instruction may have left it as it was.
fn transfer(
    index: usize,
    instr: &crate::rustpython::bytecode::Instr,
    stack: &[Owner],
) -> Result<Vec<Owner>, String> {
    let depth = stack.len();
    let short =
        |needed: usize| format!("instruction {index} needs {needed} values on a stack of {depth}");
    let mut after = stack.to_vec();
    match instr.op {
        // Each loop's iterator is the one in the slot its `FOR_ITER` takes it from, which
        // is what a `for` body's slot means, whatever path brought it there.
        Instruction::ForIter { .. } | Instruction::GetANext => {
            let top = after.last_mut().ok_or_else(|| short(1))?;
            *top = if matches!(instr.op, Instruction::ForIter { .. }) {
                Owner::Loop(index)
            } else {
                Owner::AsyncLoop(index)
            };
            after.push(Owner::Pushed(index));
        }
        // Exact where the table is not: a swap moves owners, a copy and
        // `WITH_EXCEPT_START` (which reads five values) only push.
        Instruction::Swap { .. } => {
            let below = usize::try_from(instr.arg)
                .ok()
                .filter(|&n| (2..=depth).contains(&n))
                .ok_or_else(|| short(instr.arg as usize))?;
            after.swap(depth - 1, depth - below);
        }
        Instruction::Copy { .. } => {
            usize::try_from(instr.arg)
                .ok()
                .filter(|&n| (1..=depth).contains(&n))
                .ok_or_else(|| short(instr.arg as usize))?;
            after.push(Owner::Pushed(index));
        }
        Instruction::WithExceptStart => {
            if depth < WITH_EXCEPT_START_READS {
                return Err(short(WITH_EXCEPT_START_READS));
            }
            after.push(Owner::Pushed(index));
        }
        _ => {
            if i32::try_from(instr.arg).is_err() {
                return Err(format!("instruction {index} has argument {}", instr.arg));
            }
            let effect = instr.op.stack_effect_info(instr.arg);
            let (pushed, popped) = (effect.pushed() as usize, effect.popped() as usize);
            let kept = depth.checked_sub(popped).ok_or_else(|| short(popped))?;
            after.truncate(kept);
            after.extend((0..pushed).map(|k| match stack.get(kept + k) {
                Some(Owner::Unknown) => Owner::Unknown,
                _ => Owner::Pushed(index),
            }));
        }
    }
    Ok(after)
}

/// Merges the stack `incoming` into what is known at instruction `index`, and queues the
/// instruction when that changed anything.
fn enter(
    stacks: &mut [Option<Vec<Owner>>],
    work: &mut Vec<usize>,
    index: usize,
    incoming: Vec<Owner>,
) -> Result<(), String> {
    match &mut stacks[index] {
        None => stacks[index] = Some(incoming),
        Some(known) if known.len() != incoming.len() => {
            return Err(format!(
                "instruction {index} is reached with {} and with {} values on the stack",
                known.len(),
                incoming.len()
            ));
        }
        Some(known) => {
            let mut changed = false;
            for (slot, new) in known.iter_mut().zip(incoming) {
                if *slot != new && *slot != Owner::Unknown {
                    *slot = Owner::Unknown;
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
        }
    }
    work.push(index);
    Ok(())
}

/// Why a goto cannot be proved to be just a jump (with `POP_ITER`s).
#[derive(Debug)]
enum Refusal {
    /// The label is inside the block that owns this slot, and the goto is not.
    Enters(Owner),
    /// The goto is inside a block other than a `for` loop, owner of this slot, that the
    /// label is not in.
    Leaves(Owner),
    /// The goto and the label are under different exception handlers.
    Handler,
    /// No path reaches the goto or the label, or paths reach the label with different
    /// blocks open: nothing can be proved.
    Unknown,
}

/// How many `for` loops a goto leaves to reach its label, when that is provably all the
/// jump does: the label's stack is the goto's with the top removed, slot owner for slot
/// owner (so the label is inside no block the goto is not in), every removed slot is the
/// iterator of a `for` loop around the goto, and both are under the same handler.
fn prove_jump(
    goto: &Option<Vec<Owner>>,
    label: &Option<Vec<Owner>>,
    same_handler: bool,
) -> Result<u32, Refusal> {
    let (Some(goto), Some(label)) = (goto, label) else {
        return Err(Refusal::Unknown);
    };
    for (depth, &owner) in label.iter().enumerate() {
        match (owner, goto.get(depth)) {
            (Owner::Unknown, _) | (_, Some(Owner::Unknown)) => return Err(Refusal::Unknown),
            (owner, Some(&other)) if owner == other => {}
            (owner, _) => return Err(Refusal::Enters(owner)),
        }
    }
    let left = &goto[label.len()..];
    if left.contains(&Owner::Unknown) {
        return Err(Refusal::Unknown);
    }
    if let Some(&block) = left.iter().find(|owner| !matches!(owner, Owner::Loop(_))) {
        return Err(Refusal::Leaves(block));
    }
    if !same_handler {
        return Err(Refusal::Handler);
    }
    u32::try_from(left.len()).map_err(|_| Refusal::Unknown)
}

impl Refusal {
    /// The error message for `goto .name` in `qualname`.
    fn explain(&self, body: &Body, name: &str, qualname: &str) -> String {
        let through = "compile the file through gotopy (`gotopy run`, the import hook or \
                       `gotopy compile`); `gotopy check` gives the full diagnostic";
        match self {
            Refusal::Enters(owner) => format!(
                "cannot rewrite `goto .{name}` in `{qualname}` at run time: it would enter {} \
                 from outside it; {through}",
                describe(body, *owner)
            ),
            Refusal::Leaves(owner) => format!(
                "cannot rewrite `goto .{name}` in `{qualname}` at run time: it leaves {}, \
                 whose cleanup needs the source; {through}",
                describe(body, *owner)
            ),
            Refusal::Handler => format!(
                "cannot rewrite `goto .{name}` in `{qualname}` at run time: it leaves or \
                 enters a `try` block (the goto and its label are under different exception \
                 handlers), whose handling needs the source; {through}"
            ),
            Refusal::Unknown => format!(
                "cannot rewrite `goto .{name}` in `{qualname}` at run time: the blocks around \
                 the goto or its label cannot be told from the bytecode (code no path reaches, \
                 or a label reached from places inside different blocks); {through}"
            ),
        }
    }
}

/// The block whose state a slot holds, with the line that opens it: "the `for` body at
/// line 6".
fn describe(body: &Body, owner: Owner) -> String {
    let instr = |index: usize| body.instrs().nth(index);
    let line = |index: usize| instr(index).and_then(|i| u32::try_from(i.line.line).ok());
    let (block, line) = match owner {
        Owner::Loop(index) => ("`for` body", line(index)),
        Owner::AsyncLoop(index) => ("`async for` body", line(index)),
        Owner::Clause {
            test,
            matched: true,
        } => ("`except` handler", line(test)),
        Owner::Clause { test, .. } => ("`except` handler that follows the one", line(test)),
        Owner::Caught(index) => ("`except` or `finally` body", line(index)),
        Owner::Pushed(index) => match instr(index).map(|i| i.op) {
            Some(Instruction::PushExcInfo | Instruction::CheckEgMatch) => {
                ("`except` or `finally` body", line(index))
            }
            Some(Instruction::Swap { .. } | Instruction::LoadSpecial { .. }) => {
                ("`with` body", line(index))
            }
            _ => ("block", line(index)),
        },
        Owner::Unknown => ("block", None),
    };
    match line {
        Some(line) => format!("the {block} at line {line}"),
        None => format!("the {block}"),
    }
}

/// Every `goto .name` and `label .name` statement, in order.
fn find(body: &Body, code: &CodeObject) -> Vec<Found> {
    let mut found = Vec::new();
    for (at, window) in body.items.windows(MARKER_LEN).enumerate() {
        let Some((keyword, name, load)) = shapes::named_marker(window, code) else {
            continue;
        };
        found.push(Found {
            at,
            keyword,
            name: name.to_owned(),
            load: load.clone(),
            line: u32::try_from(load.line.line).unwrap_or(0),
        });
    }
    found
}

/// Refuses what needs the syntax tree (`goto *expr`, `while switch`, `case[...]`) rather
/// than leave it to fail at run time.
fn refuse_unsupported(body: &Body, code: &CodeObject) -> Result<(), (String, Option<u32>)> {
    let instrs: Vec<&Instr> = body.instrs().collect();
    let Some((what, load)) = shapes::needing_syntax_tree(&instrs, code) else {
        return Ok(());
    };
    Err((
        format!(
            "{what} in `{}` cannot be rewritten at run time: it needs the source; compile \
             the file through gotopy",
            code.qualname
        ),
        u32::try_from(load.line.line).ok(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTER: Owner = Owner::Loop(3);
    const INNER: Owner = Owner::Loop(9);

    #[test]
    fn a_goto_may_leave_for_loops_only() {
        let at = |stack: &[Owner]| Some(stack.to_vec());
        assert_eq!(prove_jump(&at(&[OUTER]), &at(&[OUTER]), true).ok(), Some(0));
        assert_eq!(
            prove_jump(&at(&[OUTER, INNER]), &at(&[]), true).ok(),
            Some(2)
        );
        let left_with = prove_jump(&at(&[OUTER, Owner::Pushed(5)]), &at(&[OUTER]), true);
        assert!(matches!(left_with, Err(Refusal::Leaves(Owner::Pushed(5)))));
        let other_handler = prove_jump(&at(&[OUTER]), &at(&[OUTER]), false);
        assert!(matches!(other_handler, Err(Refusal::Handler)));
    }

    #[test]
    fn a_goto_never_enters_a_block_or_what_it_cannot_place() {
        let at = |stack: &[Owner]| Some(stack.to_vec());
        let sibling = prove_jump(&at(&[OUTER]), &at(&[INNER]), true);
        assert!(matches!(sibling, Err(Refusal::Enters(INNER))));
        let deeper = prove_jump(&at(&[OUTER]), &at(&[OUTER, INNER]), true);
        assert!(matches!(deeper, Err(Refusal::Enters(INNER))));
        for (goto, label) in [
            (at(&[OUTER]), None),
            (None, at(&[])),
            (at(&[Owner::Unknown]), at(&[Owner::Unknown])),
            (at(&[OUTER, Owner::Unknown]), at(&[OUTER])),
        ] {
            let refused = prove_jump(&goto, &label, true);
            assert!(
                matches!(refused, Err(Refusal::Unknown)),
                "{goto:?} {label:?}"
            );
        }
    }

    #[test]
    fn paths_that_disagree_make_a_slot_unknown() {
        let mut stacks = vec![None];
        let mut work = Vec::new();
        enter(&mut stacks, &mut work, 0, vec![OUTER, INNER]).unwrap();
        enter(&mut stacks, &mut work, 0, vec![OUTER, INNER]).unwrap();
        assert_eq!(work, [0]);
        enter(&mut stacks, &mut work, 0, vec![OUTER, OUTER]).unwrap();
        assert_eq!(stacks[0], Some(vec![OUTER, Owner::Unknown]));
        assert_eq!(work, [0, 0]);
        assert!(enter(&mut stacks, &mut work, 0, vec![OUTER]).is_err());
    }
}
