//! The stack depth before every reachable instruction, along [`Flow::successors`] and the
//! handler edges, with each instruction's stack effect from the version's table; and the
//! check that every path agrees.
//!
//! It decides nothing about control flow (the edges are [`Flow`]'s) and knows no offset.

use super::flow::Flow;
use super::{Body, BytecodeError};

/// The depths found: one per instruction (`None` where unreachable), and the greatest depth
/// reached.
pub struct Depths {
    /// The depth before each instruction.
    pub before: Vec<Option<i64>>,
    /// The greatest depth any instruction reaches.
    pub highest: i64,
}

impl Body {
    /// The stack depth before each instruction and the greatest depth reached, after checking
    /// that every path agrees: every jump and handler lands on an instruction, no path
    /// reaches an instruction with two depths or falls off the end, nothing pops below the
    /// bottom, and no instruction gotopy inserted sits under a handler deeper than its
    /// stack. `seeds` are more entry points (instruction index, depth); `known`, the depths
    /// an earlier call gave for the same list, whose reachable part is taken as it is (only
    /// what the seeds reach is added).
    pub fn depths(
        &self,
        seeds: &[(usize, i64)],
        known: Option<Vec<Option<i64>>>,
    ) -> Result<Depths, BytecodeError> {
        let flow = Flow::new(self)?;
        flow.depths(seeds, known)
    }
}

impl Flow<'_> {
    /// [`Body::depths`] over this flow.
    pub fn depths(
        &self,
        seeds: &[(usize, i64)],
        known: Option<Vec<Option<i64>>>,
    ) -> Result<Depths, BytecodeError> {
        let body = self.body();
        let count = self.len();
        for index in 0..count {
            let instr = self.instrs[index];
            let named = [instr.target, instr.handler.map(|h| h.target)];
            for label in named.into_iter().flatten() {
                if self.index_of(label).is_none_or(|to| to >= count) {
                    return Err(BytecodeError::new(format!(
                        "{} names a label after the last instruction",
                        body.name(instr.op)
                    )));
                }
            }
        }
        let mut work = Vec::new();
        let mut depths = match known {
            Some(known) if known.len() == count => known,
            Some(_) => return Err(BytecodeError::new("the known depths are for other code")),
            None => {
                let mut depths = vec![None; count];
                if count > 0 {
                    depths[0] = Some(0);
                    work.push(0);
                }
                depths
            }
        };
        for &(index, depth) in seeds {
            if index < count && depths[index].is_none() {
                depths[index] = Some(depth);
                work.push(index);
            }
        }
        let mut highest = depths.iter().flatten().copied().max().unwrap_or(0);
        let name = |index: usize| body.name(self.instrs[index].op);
        let reach = |depths: &mut Vec<Option<i64>>,
                     work: &mut Vec<usize>,
                     to: usize,
                     depth: i64,
                     from: usize|
         -> Result<(), BytecodeError> {
            if to >= count {
                return Err(BytecodeError::new(format!(
                    "{} falls off the end of the code",
                    name(from)
                )));
            }
            if depth < 0 {
                return Err(BytecodeError::new(format!(
                    "{} pops below the bottom of the stack",
                    name(from)
                )));
            }
            match depths[to] {
                None => {
                    depths[to] = Some(depth);
                    work.push(to);
                }
                Some(earlier) if earlier != depth => {
                    return Err(BytecodeError::new(format!(
                        "{} is reached with stack depths {earlier} and {depth}",
                        name(to)
                    )));
                }
                Some(_) => {}
            }
            Ok(())
        };
        while let Some(index) = work.pop() {
            let Some(depth) = depths[index] else {
                continue;
            };
            highest = highest.max(depth);
            let instr = self.instrs[index];
            if let Some((handler, start)) = self.handler(index) {
                if i64::from(handler.depth) > depth {
                    if instr.inserted {
                        return Err(BytecodeError::new(format!(
                            "{} is under a handler deeper than its stack",
                            name(index)
                        )));
                    }
                } else {
                    let entry = i64::from(handler.entry_depth());
                    reach(&mut depths, &mut work, start, entry, index)?;
                }
            }
            for (to, jumped) in self.successors(index).into_iter().flatten() {
                let effect = body
                    .shapes
                    .stack_effect(instr.op, instr.arg, jumped)
                    .ok_or_else(|| {
                        BytecodeError::new(format!("{} has no stack effect", name(index)))
                    })?;
                highest = highest.max(depth + effect.max(0));
                reach(&mut depths, &mut work, to, depth + effect, index)?;
            }
        }
        Ok(Depths {
            before: depths,
            highest,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The check every assembled code object passes (CPython's `code.replace` takes
    //! anything): each way an edit can break a function, made by hand, is refused before a
    //! code object exists; so is code that cannot be decoded.

    use crate::cpython::Version;
    use crate::cpython::bytecode::{Body, Handler, Item};
    use crate::cpython::shapes::Shapes;
    use crate::cpython::testing::function;

    const SOURCE: &str =
        "def f(x):\n    try:\n        x = g(x)\n    except E:\n        pass\n    return x\n";

    /// `f` of `source`, decoded, on every version.
    fn bodies(source: &str) -> Vec<(&'static Shapes, Body)> {
        Version::ALL
            .into_iter()
            .map(|version| {
                let shapes = Shapes::of(version);
                let found = function(version, source, "f");
                (shapes, Body::decode(shapes, found.code.raw()).unwrap())
            })
            .collect()
    }

    fn refused(body: &Body, message: &str) {
        let error = body.assemble().unwrap_err();
        assert!(error.0.contains(message), "{error} (wanted {message:?})");
    }

    fn op(shapes: &Shapes, name: &str) -> u8 {
        shapes.op(name).unwrap()
    }

    #[test]
    fn the_unedited_function_passes() {
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            let found = function(version, SOURCE, "f");
            let body = Body::decode(shapes, found.code.raw()).unwrap();
            assert_eq!(body.assemble().unwrap().code, found.code.code);
        }
    }

    #[test]
    fn a_pop_below_the_bottom_of_the_stack() {
        for (shapes, mut body) in bodies(SOURCE) {
            let first = body.instrs().next().unwrap().clone();
            let pop = body.like(&first, op(shapes, "POP_TOP"), 0, None);
            body.items.insert(0, Item::Instr(pop));
            refused(&body, "POP_TOP pops below the bottom of the stack");
        }
    }

    #[test]
    fn a_path_that_reaches_an_instruction_at_another_depth() {
        for (shapes, mut body) in bodies(SOURCE) {
            // After the first instruction (the stack empty), a value pushed and a jump back.
            let first = body.instrs().next().unwrap().clone();
            let target = body.new_label();
            let load = body.like(&first, op(shapes, "LOAD_CONST"), 0, None);
            let back = body.like(&first, shapes.jump_backward, 0, Some(target));
            body.items.splice(
                1..1,
                [Item::Label(target), Item::Instr(load), Item::Instr(back)],
            );
            refused(&body, "is reached with stack depths 0 and 1");
        }
    }

    #[test]
    fn code_that_falls_off_the_end() {
        for (shapes, mut body) in bodies("def f(x):\n    return x + 1\n") {
            let last = body.items.pop().unwrap();
            let name = shapes.opcodes.name(last.instr().unwrap().op);
            assert!(name.starts_with("RETURN"), "{name}");
            refused(&body, "falls off the end of the code");
        }
    }

    #[test]
    fn a_jump_to_a_label_never_placed() {
        for (shapes, mut body) in bodies(SOURCE) {
            let first = body.instrs().next().unwrap().clone();
            let nowhere = body.new_label();
            let jump = body.like(&first, shapes.jump_forward, 0, Some(nowhere));
            body.items.insert(1, Item::Instr(jump));
            refused(&body, "JUMP_FORWARD names a label that is not placed");
        }
    }

    #[test]
    fn a_jump_to_a_label_after_the_last_instruction() {
        for (shapes, mut body) in bodies(SOURCE) {
            let first = body.instrs().next().unwrap().clone();
            let end = body.new_label();
            let jump = body.like(&first, shapes.jump_forward, 0, Some(end));
            body.items.insert(1, Item::Instr(jump));
            body.items.push(Item::Label(end));
            refused(&body, "names a label after the last instruction");
        }
    }

    #[test]
    fn an_added_instruction_under_a_handler_deeper_than_its_stack() {
        for (shapes, mut body) in bodies(SOURCE) {
            let at = body
                .items
                .iter()
                .position(|item| item.instr().is_some_and(|instr| instr.handler.is_some()))
                .unwrap();
            let covered = body.items[at].instr().unwrap().clone();
            let handler = covered.handler.unwrap();
            let mut nop = body.like(&covered, op(shapes, "NOP"), 0, None);
            nop.handler = Some(Handler {
                depth: 5,
                ..handler
            });
            body.items.insert(at, Item::Instr(nop));
            refused(&body, "NOP is under a handler deeper than its stack");
        }
    }

    #[test]
    fn code_that_cannot_be_decoded() {
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            let found = function(version, SOURCE, "f");
            let code = &found.code.code;
            let prefix = [shapes.extended_arg, 0];
            // Into the middle of the next instruction.
            let jump = [shapes.jump_forward, 1];
            let broken = [
                (
                    "ends inside an instruction",
                    [&code[..code.len() - 2], &prefix].concat(),
                ),
                (
                    "lands inside an instruction",
                    [&jump[..], &prefix, &code[4..]].concat(),
                ),
            ];
            for (message, raw) in broken {
                let mut tables = found.code.raw();
                tables.code = &raw;
                let error = Body::decode(shapes, tables).unwrap_err();
                assert!(error.0.contains(message), "CPython {version}: {error}");
            }
        }
    }
}
