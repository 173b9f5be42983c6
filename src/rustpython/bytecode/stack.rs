//! Stack-depth analysis and the verifier: the depth before every reachable instruction,
//! propagated along [`Flow::successors`] with each instruction's stack effect, and the
//! checks that make a code object safe to emit (one depth per instruction, no pop from an
//! empty stack, no handler of gotopy's code deeper than the stack).
//!
//! It decides nothing about control flow (the edges are [`Flow`]'s) and computes no
//! offsets: it runs on instruction indices, with each instruction's own stack effect (a
//! jump's does not depend on its argument, so the layout's resolved jumps would give the
//! same), and asks the assembler's layout for offsets only to say where an error is. The
//! analyses before assembling (the repair of handlers, the depths of search handlers) lay
//! nothing out.

use rustpython_compiler::core::bytecode::InstructionMetadata;

use super::assemble::Layout;
use super::flow::{EdgeKind, Flow};
use super::{Body, BytecodeError, Handler, Item, LabelMap};

/// The state of one analysis: the depths found so far and the instructions to visit.
struct Analysis<'a> {
    /// Handlers whose depth is still to be decided: not followed.
    unknown: &'a LabelMap<()>,
    depths: Vec<Option<u32>>,
    work: Vec<usize>,
    max_depth: u32,
}

/// Why an analysis failed, by instruction index; [`Failure::at`] says it with offsets.
enum Failure {
    /// The flow graph could not be walked.
    Flow(BytecodeError),
    /// The instruction at `index` pops more than the stack holds.
    Underflow { index: usize, depth: u32, pops: i32 },
    /// The instruction at `from` enters the one at `index` with another depth than before.
    Mismatch {
        from: usize,
        index: usize,
        depth: u32,
        known: u32,
    },
    /// An instruction gotopy inserted, at `index`, raises into a handler deeper than the stack.
    TooDeep {
        index: usize,
        handler: u32,
        depth: u32,
    },
}

impl Failure {
    /// The error, with the offsets of `layout`.
    fn at(self, layout: &Layout) -> BytecodeError {
        let offset = |index: usize| layout.offsets.get(index).copied().unwrap_or(layout.size);
        let (index, message) = match self {
            Failure::Flow(error) => return error,
            Failure::Underflow { index, depth, pops } => {
                (index, format!("pops {pops} values from a stack of {depth}"))
            }
            Failure::Mismatch {
                from,
                index,
                depth,
                known,
            } => (
                from,
                format!(
                    "reaches offset {} with depth {depth}, but it is entered elsewhere with \
                     {known}",
                    offset(index)
                ),
            ),
            Failure::TooDeep {
                index,
                handler,
                depth,
            } => (
                index,
                format!("the handler unwinds to depth {handler} but the stack holds {depth}"),
            ),
        };
        BytecodeError::StackDepth {
            at: offset(index),
            message,
        }
    }
}

impl Body {
    /// Checks that every reachable instruction is entered with one stack depth, that no
    /// instruction pops more than the stack holds, and that handlers are consistent;
    /// returns the maximum depth.
    pub(super) fn verify(&self, layout: &Layout) -> Result<u32, BytecodeError> {
        self.analyse(&self.flow(), &LabelMap::default())
            .map(|(_, max_depth)| max_depth)
            .map_err(|failure| failure.at(layout))
    }

    /// The analysis of [`Body::verify`] before anything is laid out: a failure lays the
    /// body out to say where it is.
    fn analyse_unplaced(
        &self,
        flow: &Flow,
        unknown: &LabelMap<()>,
    ) -> Result<Vec<Option<u32>>, BytecodeError> {
        match self.analyse(flow, unknown) {
            Ok((depths, _)) => Ok(depths),
            Err(failure) => Err(failure.at(&self.layout()?)),
        }
    }

    /// The stack depth before each item (`None` for labels and unreachable instructions),
    /// by the same analysis as the verifier.
    pub fn stack_depths(&self) -> Result<Vec<Option<u32>>, BytecodeError> {
        let by_instr = self.analyse_unplaced(&self.flow(), &LabelMap::default())?;
        let mut by_instr = by_instr.into_iter();
        Ok(self
            .items
            .iter()
            .map(|item| match item {
                Item::Instr(_) => by_instr.next().flatten(),
                Item::Label(_) => None,
            })
            .collect())
    }

    /// Gives every reachable instruction that a handler deeper than the stack covers the
    /// handler of that handler's own code instead, outwards until one fits or none is left.
    ///
    /// RustPython 0.5 lets the cleanup handler of a `with` whose body never finishes
    /// normally cover the code after the `with` (see [`Handler::reached_at`]). That code
    /// runs when `__exit__` suppresses an exception, and if it raises, RustPython's VM
    /// unwinds below its stack and panics. The cleanup's code is covered by the handler
    /// around the whole `with` statement, which is the handler CPython's compiler gives
    /// the code after it; so this gives it that one too. An instruction whose handler fits
    /// its stack keeps it, so code without that flaw is unchanged. Both rewrites call this
    /// on every body they decode, so no instruction of theirs keeps such a handler.
    pub fn repair_handlers(&mut self) -> Result<(), BytecodeError> {
        // Code no handler covers has nothing to repair (a big generated function often has
        // none): no analysis of its millions of instructions.
        if self.instrs().all(|instr| instr.handler.is_none()) {
            return Ok(());
        }
        // A repaired instruction can make a handler's code reachable that was not, and
        // that code may have the same flaw: repeat until nothing changes.
        let bound = self.items.len();
        for _ in 0..bound {
            let depths = self.stack_depths()?;
            let enclosing = self.handlers_at_labels();
            let mut changed = false;
            // Each step moves to the handler of a handler's code; a chain longer than the
            // code is a cycle, left as it is for the verifier to report.
            let fitting = |depth: usize, mut handler: Option<Handler>| {
                for _ in 0..bound {
                    match handler {
                        Some(h) if !h.reached_at(depth) => {
                            handler = enclosing.get(h.target).copied().flatten();
                        }
                        _ => return Some(handler),
                    }
                }
                None
            };
            for (item, depth) in self.items.iter_mut().zip(depths) {
                let (Item::Instr(instr), Some(depth)) = (item, depth) else {
                    continue;
                };
                if let Some(handler) = fitting(depth as usize, instr.handler)
                    && handler != instr.handler
                {
                    instr.handler = handler;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Ok(())
    }

    /// The handler that covers the instruction each placed label names.
    fn handlers_at_labels(&self) -> LabelMap<Option<Handler>> {
        let mut at = LabelMap::default();
        let mut pending = Vec::new();
        for item in &self.items {
            match item {
                Item::Label(label) => pending.push(*label),
                Item::Instr(instr) => {
                    for label in pending.drain(..) {
                        at.insert(label, instr.handler);
                    }
                }
            }
        }
        at
    }

    /// The stack depth at each placed label that reachable code gets to (the depth before
    /// the instruction that follows it), by the verifier's analysis with the handlers whose
    /// target is in `unknown` left out: those are handlers whose depth is still to be
    /// decided, from what this finds.
    pub fn depths_at_labels(&self, unknown: &LabelMap<()>) -> Result<LabelMap<u32>, BytecodeError> {
        let flow = self.flow();
        let depths = self.analyse_unplaced(&flow, unknown)?;
        let mut at_labels = LabelMap::default();
        for (label, &index) in flow.labels() {
            if let Some(&Some(depth)) = depths.get(index) {
                at_labels.insert(label, depth);
            }
        }
        Ok(at_labels)
    }

    /// The depth before each instruction, and the maximum depth; handlers whose target is in
    /// `unknown` are not followed.
    fn analyse(
        &self,
        flow: &Flow,
        unknown: &LabelMap<()>,
    ) -> Result<(Vec<Option<u32>>, u32), Failure> {
        let mut analysis = Analysis {
            unknown,
            depths: vec![None; flow.len()],
            work: Vec::new(),
            max_depth: 0,
        };
        if !flow.is_empty() {
            analysis.enter(0, 0, 0)?;
        }
        while let Some(index) = analysis.work.pop() {
            analysis.step(flow, index)?;
        }
        Ok((analysis.depths, analysis.max_depth))
    }
}

impl Analysis<'_> {
    /// Records that the instruction at `index` is entered with `depth`, coming from the
    /// instruction at `from`, and queues it the first time.
    fn enter(&mut self, index: usize, depth: u32, from: usize) -> Result<(), Failure> {
        match self.depths[index] {
            None => {
                self.depths[index] = Some(depth);
                self.work.push(index);
                Ok(())
            }
            Some(known) if known == depth => Ok(()),
            Some(known) => Err(Failure::Mismatch {
                from,
                index,
                depth,
                known,
            }),
        }
    }

    /// Enters every successor of the instruction at `index` with the depth its edge gives.
    fn step(&mut self, flow: &Flow, index: usize) -> Result<(), Failure> {
        let (Some(instr), Some(depth)) = (flow.instr(index), self.depths[index]) else {
            return Ok(());
        };
        let effect = instr.op.stack_effect(instr.unplaced_arg());
        let after = depth.checked_add_signed(effect);
        let underflow = || Failure::Underflow {
            index,
            depth,
            pops: -effect,
        };
        for edge in flow.successors(index) {
            let edge = edge.map_err(Failure::Flow)?;
            let entry = match edge.kind {
                EdgeKind::Handler(handler) => {
                    match self.handler_entry(handler, depth, instr.inserted, index)? {
                        Some(entry) => entry,
                        None => continue,
                    }
                }
                EdgeKind::JumpKeepingStack => depth,
                EdgeKind::Jump | EdgeKind::FallThrough => after.ok_or_else(underflow)?,
            };
            self.max_depth = self.max_depth.max(entry);
            self.enter(edge.to, entry, index)?;
        }
        self.max_depth = self.max_depth.max(after.ok_or_else(underflow)?);
        Ok(())
    }

    /// The depth `handler`'s code starts with when the instruction at `index`, run with
    /// `depth`, raises into it; `None` when that is no edge: the handler's depth is still to
    /// be decided, or it is deeper than the stack (RustPython's over-wide cleanup ranges,
    /// see [`Handler::reached_at`]; tolerated in its code, never in what gotopy inserted).
    fn handler_entry(
        &self,
        handler: Handler,
        depth: u32,
        inserted: bool,
        index: usize,
    ) -> Result<Option<u32>, Failure> {
        if self.unknown.contains(handler.target) {
            return Ok(None);
        }
        if handler.reached_at(depth as usize) {
            return Ok(Some(handler.entry_depth()));
        }
        if !inserted {
            return Ok(None);
        }
        Err(Failure::TooDeep {
            index,
            handler: handler.depth,
            depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use rustpython_compiler::core::bytecode::Instruction;
    use rustpython_compiler::{CompileOpts, Mode, compile};

    use crate::rustpython::bytecode::{Body, BytecodeError, Instr, Item, code_objects};

    /// The decoded body of `f` in `source`, and its code object.
    fn function(source: &str) -> (Body, rustpython_compiler::CodeObject) {
        let code = compile(source, Mode::Exec, "<test>", CompileOpts::default()).unwrap();
        let function = code_objects(&code)
            .into_iter()
            .find(|code| code.qualname.as_str() == "f")
            .unwrap()
            .clone();
        (Body::decode(&function).unwrap(), function)
    }

    /// `op` inserted before item `at`, like the instruction there.
    fn insert(body: &mut Body, at: usize, op: Instruction) {
        let Some(Item::Instr(like)) = body.items.get(at) else {
            panic!("item {at} is no instruction");
        };
        let instr = Instr::like(like, op, 0, None);
        body.items.insert(at, Item::Instr(instr));
    }

    /// Both analyses refuse it alike: the one before anything is laid out and the verifier
    /// of the assembler.
    fn refusal(body: &Body, code: &mut rustpython_compiler::CodeObject) -> BytecodeError {
        let early = body.stack_depths().unwrap_err();
        let verified = body.assemble(code).unwrap_err();
        assert_eq!(early, verified);
        early
    }

    #[test]
    fn a_pop_from_an_empty_stack_is_refused_at_its_offset() {
        let (mut body, mut code) = function("def f(x):\n    return x\n");
        insert(&mut body, 0, Instruction::PopTop);
        assert_eq!(
            refusal(&body, &mut code),
            BytecodeError::StackDepth {
                at: 0,
                message: "pops 1 values from a stack of 0".to_owned(),
            }
        );
    }

    #[test]
    fn a_loop_entered_with_two_depths_is_refused_where_the_second_comes_from() {
        let (mut body, mut code) =
            function("def f(x):\n    while x:\n        x -= 1\n    return x\n");
        let back = (body.items.iter())
            .position(|item| {
                matches!(item, Item::Instr(instr) if matches!(instr.op, Instruction::JumpBackward { .. }))
            })
            .unwrap();
        insert(&mut body, back, Instruction::PushNull);
        let BytecodeError::StackDepth { at, message } = refusal(&body, &mut code) else {
            panic!("not a stack-depth error");
        };
        // Said at the jump back, which brings the second depth.
        let layout = body.layout().unwrap();
        let jump = body
            .instrs()
            .position(|instr| matches!(instr.op, Instruction::JumpBackward { .. }));
        assert_eq!(Some(at), jump.map(|index| layout.offsets[index]));
        assert!(
            message.ends_with("with depth 1, but it is entered elsewhere with 0"),
            "{message}"
        );
    }
}
