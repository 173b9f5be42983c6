//! Assembling: a [`Body`] laid out again as CPython's assembler lays out code: relative
//! jumps (an inserted unconditional jump forward or backward as its target lies),
//! `EXTENDED_ARG` prefixes recomputed until sizes settle, zeroed inline caches, the location
//! table (one run per instruction on 3.11, per stretch at one position from 3.12), the
//! exception table (consecutive instructions under one handler in one entry), and the
//! greatest stack depth, after the check of `stack`.
//!
//! This is the only place of the backend that computes offsets.

use super::flow::Flow;
use super::{Body, BytecodeError};
use crate::tables::{ExceptionEntry, Position, encode_exceptions, encode_locations};

/// A code object's new tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    /// `co_code`.
    pub code: Vec<u8>,
    /// `co_linetable`.
    pub locations: Vec<u8>,
    /// `co_exceptiontable`.
    pub exceptions: Vec<u8>,
    /// The greatest stack depth the code reaches.
    pub depth: u32,
}

/// The `EXTENDED_ARG` prefixes an argument needs.
fn prefixes(arg: u32) -> u32 {
    match arg {
        0..0x100 => 0,
        0x100..0x1_0000 => 1,
        0x1_0000..0x100_0000 => 2,
        _ => 3,
    }
}

impl Body {
    /// The instructions laid out again, after the check.
    pub fn assemble(&self) -> Result<Assembled, BytecodeError> {
        let flow = Flow::new(self)?;
        let count = flow.len();
        if count == 0 {
            return Err(BytecodeError::new("no instructions"));
        }
        let highest = flow.depths(&[], None)?.highest;
        let opcodes = self.opcodes;
        let shapes = self.shapes;
        let mut ops: Vec<u8> = flow.instrs.iter().map(|instr| instr.op).collect();
        let mut args: Vec<u32> = flow.instrs.iter().map(|instr| instr.arg).collect();
        let size = |op: u8, arg: u32| 1 + prefixes(arg) + u32::from(opcodes.caches(op));
        let mut sizes: Vec<u32> = ops
            .iter()
            .zip(&args)
            .map(|(&op, &arg)| size(op, arg))
            .collect();
        // Each jump once, with its target and whether gotopy inserted it unconditional (its
        // direction is chosen here): the passes below read these, not the instructions.
        let jumps: Vec<(usize, usize, bool)> = (0..count)
            .filter_map(|index| {
                let target = flow.target(index)?;
                let chosen = flow.instrs[index].inserted && shapes.is_unconditional(ops[index]);
                Some((index, target, chosen))
            })
            .collect();
        let mut starts = vec![0u32; count + 1];
        loop {
            for index in 0..count {
                starts[index + 1] = starts[index] + sizes[index];
            }
            let mut changed = false;
            for &(index, target, chosen) in &jumps {
                let destination = i64::from(starts[target]);
                let end = i64::from(starts[index + 1]);
                if chosen {
                    let wanted = if destination < end {
                        shapes.jump_backward
                    } else {
                        shapes.jump_forward
                    };
                    if wanted != ops[index] {
                        ops[index] = wanted;
                        changed = true;
                    }
                }
                let mut distance = destination - end;
                if shapes.is_backward(ops[index]) {
                    distance = -distance;
                }
                let Ok(distance) = u32::try_from(distance) else {
                    return Err(BytecodeError::new(format!(
                        "{} cannot reach its target in its direction",
                        opcodes.name(ops[index])
                    )));
                };
                args[index] = distance;
                let new = size(ops[index], distance);
                if new != sizes[index] {
                    sizes[index] = new;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut code = Vec::with_capacity(2 * starts[count] as usize);
        for index in 0..count {
            let (op, arg) = (ops[index], args[index]);
            let caches = u32::from(opcodes.caches(op));
            for shift in (1..sizes[index] - caches).rev() {
                code.extend([shapes.extended_arg, (arg >> (8 * shift)) as u8]);
            }
            code.extend([op, arg as u8]);
            code.resize(code.len() + 2 * caches as usize, 0);
        }
        let mut entries: Vec<ExceptionEntry> = Vec::new();
        for index in 0..count {
            let Some((handler, at)) = flow.handler(index) else {
                continue;
            };
            let entry = ExceptionEntry {
                start: starts[index],
                end: starts[index + 1],
                target: starts[at],
                depth: handler.depth,
                lasti: handler.lasti,
            };
            match entries.last_mut() {
                Some(last)
                    if last.end == entry.start
                        && (last.target, last.depth, last.lasti)
                            == (entry.target, entry.depth, entry.lasti) =>
                {
                    last.end = entry.end;
                }
                _ => entries.push(entry),
            }
        }
        let mut runs: Vec<(Position, u32)> = Vec::new();
        for (instr, &units) in flow.instrs.iter().zip(&sizes) {
            match runs.last_mut() {
                Some(last) if shapes.merged_location_runs && last.0 == instr.position => {
                    last.1 += units;
                }
                _ => runs.push((instr.position, units)),
            }
        }
        let locations = encode_locations(runs, self.first_line);
        Ok(Assembled {
            code,
            locations,
            exceptions: encode_exceptions(&entries),
            depth: u32::try_from(highest).unwrap_or(u32::MAX),
        })
    }
}
