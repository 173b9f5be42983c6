//! Decoding: a code object's `co_code`, exception table and location table to a [`Body`].
//! Each instruction's `EXTENDED_ARG` prefixes are folded into its argument and its inline
//! caches are implied by its opcode; jump targets and handlers become [`Label`]s placed
//! before the instructions they name; each instruction gets the position of its opcode's
//! unit. Offsets are read here and forgotten.

use super::{Body, BytecodeError, Handler, Instr, InstrId, Item, Label};
use crate::cpython::shapes::Shapes;
use crate::tables::{decode_exceptions, decode_locations};

/// The raw tables of one code object.
#[derive(Clone, Copy, Debug)]
pub struct RawCode<'a> {
    /// `co_code`.
    pub code: &'a [u8],
    /// `co_exceptiontable`.
    pub exceptions: &'a [u8],
    /// `co_linetable`.
    pub locations: &'a [u8],
    /// `co_firstlineno`.
    pub first_line: i32,
}

/// Where an instruction starts: its first unit (its first prefix), its opcode's unit, its
/// argument and the unit after it.
struct Start {
    first: usize,
    op_at: usize,
    arg: u32,
    end: usize,
}

impl Body {
    /// Decodes the instructions of a code object compiled by the version of `shapes`.
    pub fn decode(shapes: &'static Shapes, raw: RawCode<'_>) -> Result<Body, BytecodeError> {
        let opcodes = shapes.opcodes;
        let code = raw.code;
        if !code.len().is_multiple_of(2) {
            return Err(BytecodeError::new("the code ends inside an instruction"));
        }
        let units = code.len() / 2;
        let extended_arg = shapes.extended_arg;
        let mut starts: Vec<Start> = Vec::with_capacity(units);
        let mut extended = 0u32;
        let mut first = None;
        let mut at = 0;
        while at < units {
            let (op, byte) = (code[2 * at], u32::from(code[2 * at + 1]));
            let arg = extended.wrapping_shl(8) | byte;
            let start = *first.get_or_insert(at);
            if op == extended_arg {
                extended = arg;
                at += 1;
                continue;
            }
            let end = at + 1 + usize::from(opcodes.caches(op));
            starts.push(Start {
                first: start,
                op_at: at,
                arg,
                end,
            });
            at = end;
            extended = 0;
            first = None;
        }
        if first.is_some() || at != units {
            return Err(BytecodeError::new("the code ends inside an instruction"));
        }
        let mut index_at = vec![u32::MAX; units];
        for (index, start) in starts.iter().enumerate() {
            index_at[start.first] = index as u32;
        }
        let instruction_at = |unit: i64| -> Result<usize, BytecodeError> {
            usize::try_from(unit)
                .ok()
                .and_then(|unit| index_at.get(unit).copied())
                .filter(|&index| index != u32::MAX)
                .map(|index| index as usize)
                .ok_or_else(|| {
                    BytecodeError::new(format!(
                        "a jump or handler lands inside an instruction at {}",
                        2 * unit
                    ))
                })
        };
        let positions = decode_locations(raw.locations, raw.first_line, units)
            .map_err(|error| BytecodeError::new(error.0))?;
        let count = starts.len();
        let mut targets: Vec<Option<usize>> = Vec::with_capacity(count);
        for start in &starts {
            let op = code[2 * start.op_at];
            targets.push(if opcodes.jumps(op) {
                let distance = i64::from(start.arg);
                let end = start.end as i64;
                let unit = if shapes.is_backward(op) {
                    end - distance
                } else {
                    end + distance
                };
                Some(instruction_at(unit)?)
            } else {
                None
            });
        }
        let mut entries = Vec::new();
        let mut handler_of: Vec<Option<usize>> = vec![None; count];
        for entry in
            decode_exceptions(raw.exceptions).map_err(|error| BytecodeError::new(error.0))?
        {
            let target = instruction_at(i64::from(entry.target))?;
            let handler = entries.len();
            entries.push((target, entry.depth, entry.lasti));
            // The instructions that start in the entry's range, found by bisection (a
            // switch's search alternates handlers, so the table can be as long as the code).
            let (begin, end) = (entry.start as usize, entry.end as usize);
            let first = starts.partition_point(|start| start.first < begin);
            let last = starts.partition_point(|start| start.first < end);
            for slot in &mut handler_of[first..last.max(first)] {
                *slot = Some(handler);
            }
        }
        // A label before each instruction a jump or handler names.
        let mut body = Body::new(shapes, raw.first_line);
        let mut labels: Vec<Option<Label>> = vec![None; count];
        let mut placed = 0;
        for &at in targets
            .iter()
            .flatten()
            .chain(entries.iter().map(|(at, _, _)| at))
        {
            if labels[at].is_none() {
                labels[at] = Some(body.new_label());
                placed += 1;
            }
        }
        let label = |at: usize| labels[at].expect("a label before every named instruction");
        let handlers: Vec<Handler> = entries
            .iter()
            .map(|&(at, depth, lasti)| Handler {
                target: label(at),
                depth,
                lasti,
            })
            .collect();
        body.items.reserve(count + placed);
        for (index, start) in starts.iter().enumerate() {
            if let Some(label) = labels[index] {
                body.items.push(Item::Label(label));
            }
            let id = InstrId(index as u32);
            body.items.push(Item::Instr(Instr {
                op: code[2 * start.op_at],
                arg: start.arg,
                target: targets[index].map(label),
                handler: handler_of[index].map(|handler| handlers[handler]),
                position: positions[start.op_at],
                inserted: false,
                id,
            }));
        }
        body.reserve_ids(count as u32);
        Ok(body)
    }
}
