//! CPython code objects as instruction lists, and back: the decoder, the verifier and the
//! assembler under `gotopy/_bytecode.py`, for whichever CPython runs them.
//!
//! Nothing here knows a version. Opcode numbers, inline cache sizes, which opcodes jump and
//! in which direction, and stack effects come from the running interpreter, through
//! [`Opcodes`], which `_bytecode` builds once from `opcode` and `dis`; the one layout fact
//! that differs between versions (whether the location table merges consecutive
//! instructions at one position) comes from `_versions`. The exception-table and
//! location-table formats are the same from 3.11 to 3.15 (`Objects/exception_handling_notes.txt`,
//! `Objects/locations.md`).
//!
//! An [`Instructions`] holds a decoded code object as parallel arrays: jump targets and
//! handlers name instructions by index, so nothing in it is an offset. Python builds its
//! editable view (`Instr` and `Label` objects) from those arrays only for the code it
//! rewrites, and hands the edited list back the same way; decoding and assembling a code
//! object nobody edits never leaves Rust.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

create_exception!(
    _gotopy,
    BytecodeError,
    PyException,
    "A code object that cannot be decoded, or an edited one that fails the check."
);

/// `(line, end_line, column, end_column)` as `co_positions()` gives it, `-1` for `None`.
type Position = [i32; 4];

const NO_POSITION: Position = [-1; 4];

/// One exception-table entry: the instruction it goes to, the depth it unwinds to, and
/// whether it pushes the offset of the raising instruction.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Handler {
    target: u32,
    depth: u32,
    lasti: bool,
}

/// A decoded (or edited) code object's instructions, as parallel arrays.
#[pyclass(frozen, module = "gotopy._gotopy")]
pub struct Instructions {
    ops: Vec<u8>,
    args: Vec<u32>,
    /// The instruction a jump lands on.
    targets: Vec<Option<u32>>,
    /// The index in `handlers` of the entry covering each instruction.
    handler_of: Vec<Option<u32>>,
    handlers: Vec<Handler>,
    positions: Vec<Position>,
    /// What gotopy added: an unconditional jump whose direction the layout decides, and an
    /// instruction that must not sit under a handler deeper than its stack.
    inserted: Vec<bool>,
}

/// Python's view of one handler: `(target, depth, lasti)`.
type HandlerView = (u32, u32, bool);
/// Python's view of one position.
type PositionView = (Option<i32>, Option<i32>, Option<i32>, Option<i32>);
/// Python's view of the arrays: `(ops, args, targets, handler_of, handlers, positions)`.
type View = (
    Vec<u8>,
    Vec<u32>,
    Vec<Option<u32>>,
    Vec<Option<u32>>,
    Vec<HandlerView>,
    Vec<PositionView>,
);
/// `(co_code, co_linetable, co_exceptiontable, greatest stack depth)`.
type Assembled<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    i64,
);

fn position_view(position: Position) -> PositionView {
    let one = |value: i32| (value >= 0).then_some(value);
    (
        one(position[0]),
        one(position[1]),
        one(position[2]),
        one(position[3]),
    )
}

fn position_from(view: PositionView) -> Position {
    let one = |value: Option<i32>| value.unwrap_or(-1);
    [one(view.0), one(view.1), one(view.2), one(view.3)]
}

#[pymethods]
impl Instructions {
    /// The arrays of an edited list, each by instruction (targets and handlers by index).
    #[new]
    #[pyo3(signature = (ops, args, targets, handler_of, handlers, positions, inserted))]
    fn new(
        ops: Vec<u8>,
        args: Vec<u32>,
        targets: Vec<Option<u32>>,
        handler_of: Vec<Option<u32>>,
        handlers: Vec<HandlerView>,
        positions: Vec<PositionView>,
        inserted: Vec<bool>,
    ) -> PyResult<Self> {
        let count = ops.len();
        let lengths = [
            args.len(),
            targets.len(),
            handler_of.len(),
            positions.len(),
            inserted.len(),
        ];
        if lengths.iter().any(|&length| length != count) {
            return Err(BytecodeError::new_err(
                "the instruction arrays differ in length",
            ));
        }
        if handler_of
            .iter()
            .flatten()
            .any(|&h| h as usize >= handlers.len())
        {
            return Err(BytecodeError::new_err(
                "an instruction names no handler entry",
            ));
        }
        Ok(Self {
            ops,
            args,
            targets,
            handler_of,
            handlers: handlers
                .into_iter()
                .map(|(target, depth, lasti)| Handler {
                    target,
                    depth,
                    lasti,
                })
                .collect(),
            positions: positions.into_iter().map(position_from).collect(),
            inserted,
        })
    }

    /// `(ops, args, targets, handler_of, handlers, positions)` (`ops` as `bytes`), what `new`
    /// takes back (with `inserted`, false on everything decoded).
    fn view(&self) -> View {
        (
            self.ops.clone(),
            self.args.clone(),
            self.targets.clone(),
            self.handler_of.clone(),
            self.handlers
                .iter()
                .map(|h| (h.target, h.depth, h.lasti))
                .collect(),
            self.positions.iter().copied().map(position_view).collect(),
        )
    }
}

const JUMP: u8 = 1;
/// Encoded backwards (`END_ASYNC_FOR` from 3.14 too, though it is no jump).
const BACKWARD: u8 = 2;
/// Has a target but does not go there (`END_ASYNC_FOR`).
const NOT_CONTROL: u8 = 4;
const UNCONDITIONAL: u8 = 8;
const TERMINAL: u8 = 16;

/// Stack effects by `(op, arg, jump)`, asked of `dis.stack_effect` once each.
#[derive(Default)]
struct Effects {
    /// Arguments below `SMALL`: `(op * 2 + jump) * SMALL + arg`, `i32::MIN` when not yet asked.
    small: Vec<i32>,
    large: HashMap<(u8, u32, bool), i32>,
}

const SMALL: u32 = 512;

/// The running interpreter's opcode facts, and the decoder, verifier and assembler that use
/// them.
#[pyclass(frozen, module = "gotopy._gotopy")]
pub struct Opcodes {
    /// Inline cache units after each opcode.
    caches: [u8; 256],
    kinds: [u8; 256],
    names: Vec<String>,
    extended_arg: u8,
    jump_forward: u8,
    jump_backward: u8,
    /// Whether the location table has one entry per run of instructions at one position
    /// (3.12 and later) or one per instruction (3.11).
    merged_location_runs: bool,
    /// `(op, arg, jump) -> int`: `dis.stack_effect` as `_versions` fixes it.
    stack_effect: Py<PyAny>,
    effects: Mutex<Effects>,
}

fn error(message: impl Into<String>) -> PyErr {
    BytecodeError::new_err(message.into())
}

fn prefixes(arg: u32) -> u32 {
    match arg {
        0..0x100 => 0,
        0x100..0x1_0000 => 1,
        0x1_0000..0x100_0000 => 2,
        _ => 3,
    }
}

#[pymethods]
impl Opcodes {
    #[new]
    #[pyo3(signature = (
        *, caches, names, jumps, backward, not_control, unconditional, terminal, extended_arg,
        jump_forward, jump_backward, merged_location_runs, stack_effect
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        caches: Vec<u8>,
        names: Vec<String>,
        jumps: Vec<u8>,
        backward: Vec<u8>,
        not_control: Vec<u8>,
        unconditional: Vec<u8>,
        terminal: Vec<u8>,
        extended_arg: u8,
        jump_forward: u8,
        jump_backward: u8,
        merged_location_runs: bool,
        stack_effect: Py<PyAny>,
    ) -> PyResult<Self> {
        if caches.len() != 256 || names.len() != 256 {
            return Err(error("one cache size and one name per opcode"));
        }
        let mut kinds = [0; 256];
        for (ops, kind) in [
            (jumps, JUMP),
            (backward, BACKWARD),
            (not_control, NOT_CONTROL),
            (unconditional, UNCONDITIONAL),
            (terminal, TERMINAL),
        ] {
            for op in ops {
                kinds[usize::from(op)] |= kind;
            }
        }
        let mut cache_table = [0; 256];
        cache_table.copy_from_slice(&caches);
        Ok(Self {
            caches: cache_table,
            kinds,
            names,
            extended_arg,
            jump_forward,
            jump_backward,
            merged_location_runs,
            stack_effect,
            effects: Mutex::new(Effects::default()),
        })
    }

    /// A code object's `co_code`, `co_exceptiontable` and `co_linetable` decoded;
    /// `first_line` is its `co_firstlineno`.
    fn decode(
        &self,
        code: &[u8],
        exceptions: &[u8],
        locations: &[u8],
        first_line: i32,
    ) -> PyResult<Instructions> {
        if !code.len().is_multiple_of(2) {
            return Err(error("the code ends inside an instruction"));
        }
        let units = code.len() / 2;
        // Each instruction's first unit (its first prefix), its opcode's unit, its argument
        // and the unit after it.
        let mut starts: Vec<(usize, usize, u32, usize)> = Vec::with_capacity(units);
        let mut extended = 0u32;
        let mut start = None;
        let mut at = 0;
        while at < units {
            let (op, byte) = (code[2 * at], u32::from(code[2 * at + 1]));
            let arg = extended.wrapping_shl(8) | byte;
            let first = *start.get_or_insert(at);
            if op == self.extended_arg {
                extended = arg;
                at += 1;
                continue;
            }
            let end = at + 1 + usize::from(self.caches[usize::from(op)]);
            starts.push((first, at, arg, end));
            at = end;
            extended = 0;
            start = None;
        }
        if start.is_some() || at != units {
            return Err(error("the code ends inside an instruction"));
        }
        let mut index_at = vec![u32::MAX; units];
        for (index, &(first, _, _, _)) in starts.iter().enumerate() {
            index_at[first] = index as u32;
        }
        let instruction_at = |unit: i64| -> PyResult<u32> {
            usize::try_from(unit)
                .ok()
                .and_then(|unit| index_at.get(unit).copied())
                .filter(|&index| index != u32::MAX)
                .ok_or_else(|| {
                    error(format!(
                        "a jump or handler lands inside an instruction at {}",
                        2 * unit
                    ))
                })
        };
        let unit_positions = decode_locations(locations, first_line, units)?;
        let count = starts.len();
        let mut decoded = Instructions {
            ops: Vec::with_capacity(count),
            args: Vec::with_capacity(count),
            targets: Vec::with_capacity(count),
            handler_of: vec![None; count],
            handlers: Vec::new(),
            positions: Vec::with_capacity(count),
            inserted: vec![false; count],
        };
        for &(_, op_at, arg, end) in &starts {
            let op = code[2 * op_at];
            let kind = self.kinds[usize::from(op)];
            let target = if kind & JUMP != 0 {
                let distance = i64::from(arg);
                let end = end as i64;
                let unit = if kind & BACKWARD != 0 {
                    end - distance
                } else {
                    end + distance
                };
                Some(instruction_at(unit)?)
            } else {
                None
            };
            decoded.ops.push(op);
            decoded.args.push(arg);
            decoded.targets.push(target);
            decoded.positions.push(unit_positions[op_at]);
        }
        let mut read = Varints {
            data: exceptions,
            at: 0,
        };
        while read.at < exceptions.len() {
            let begin = read.big_endian()?;
            let length = read.big_endian()?;
            let target = read.big_endian()?;
            let packed = read.big_endian()?;
            let handler = decoded.handlers.len() as u32;
            decoded.handlers.push(Handler {
                target: instruction_at(target as i64)?,
                depth: (packed >> 1) as u32,
                lasti: packed & 1 == 1,
            });
            // The instructions that start in the entry's range: a run, found by bisection (a
            // switch's search alternates handlers, so the table can be as long as the code).
            let (begin, end) = (begin as usize, begin.saturating_add(length) as usize);
            let first = starts.partition_point(|&(unit, _, _, _)| unit < begin);
            let last = starts.partition_point(|&(unit, _, _, _)| unit < end);
            for slot in &mut decoded.handler_of[first..last.max(first)] {
                *slot = Some(handler);
            }
        }
        Ok(decoded)
    }

    /// The stack depth before each instruction (`None` where unreachable) and the greatest
    /// depth reached, after checking that every path agrees. `seeds` are more entry points
    /// (instruction index: depth); with `known`, the depths an earlier call gave for the
    /// same code, only what the seeds reach is added.
    #[pyo3(signature = (instructions, seeds = HashMap::new(), known = None))]
    fn depths(
        &self,
        py: Python<'_>,
        instructions: &Instructions,
        seeds: HashMap<usize, i64>,
        known: Option<Vec<Option<i64>>>,
    ) -> PyResult<(Vec<Option<i64>>, i64)> {
        let mut seeds: Vec<(usize, i64)> = seeds.into_iter().collect();
        seeds.sort_unstable();
        self.check_depths(py, instructions, &seeds, known)
    }

    /// `(co_code, co_linetable, co_exceptiontable, greatest stack depth)` for the
    /// instructions laid out again, after the check: relative jumps, `EXTENDED_ARG` prefixes
    /// until sizes settle, zeroed inline caches; `first_line` is the `co_firstlineno` the
    /// location table starts from.
    fn assemble<'py>(
        &self,
        py: Python<'py>,
        instructions: &Instructions,
        first_line: i32,
    ) -> PyResult<Assembled<'py>> {
        let count = instructions.ops.len();
        if count == 0 {
            return Err(error("no instructions"));
        }
        let (_, highest) = self.check_depths(py, instructions, &[], None)?;
        let mut ops = instructions.ops.clone();
        let mut args = instructions.args.clone();
        let size = |op: u8, arg: u32| 1 + prefixes(arg) + u32::from(self.caches[usize::from(op)]);
        let mut sizes: Vec<u32> = ops
            .iter()
            .zip(&args)
            .map(|(&op, &arg)| size(op, arg))
            .collect();
        let mut starts = vec![0u32; count + 1];
        loop {
            for index in 0..count {
                starts[index + 1] = starts[index] + sizes[index];
            }
            let mut changed = false;
            for index in 0..count {
                let Some(target) = instructions.targets[index] else {
                    continue;
                };
                let destination = i64::from(starts[target as usize]);
                let end = i64::from(starts[index + 1]);
                if instructions.inserted[index] && self.kind(ops[index]) & UNCONDITIONAL != 0 {
                    let wanted = if destination < end {
                        self.jump_backward
                    } else {
                        self.jump_forward
                    };
                    if wanted != ops[index] {
                        ops[index] = wanted;
                        changed = true;
                    }
                }
                let mut distance = destination - end;
                if self.kind(ops[index]) & BACKWARD != 0 {
                    distance = -distance;
                }
                let Ok(distance) = u32::try_from(distance) else {
                    return Err(error(format!(
                        "{} cannot reach its target in its direction",
                        self.name(ops[index])
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
            let caches = u32::from(self.caches[usize::from(op)]);
            for shift in (1..sizes[index] - caches).rev() {
                code.extend([self.extended_arg, (arg >> (8 * shift)) as u8]);
            }
            code.extend([op, arg as u8]);
            code.resize(code.len() + 2 * caches as usize, 0);
        }
        let exceptions = self.exception_table(instructions, &starts);
        let locations = self.location_table(instructions, &sizes, first_line)?;
        Ok((
            PyBytes::new(py, &code),
            PyBytes::new(py, &locations),
            PyBytes::new(py, &exceptions),
            highest,
        ))
    }
}

impl Opcodes {
    fn kind(&self, op: u8) -> u8 {
        self.kinds[usize::from(op)]
    }

    fn name(&self, op: u8) -> &str {
        &self.names[usize::from(op)]
    }

    fn effect(
        &self,
        py: Python<'_>,
        effects: &mut Effects,
        op: u8,
        arg: u32,
        jump: bool,
    ) -> PyResult<i64> {
        let slot = (arg < SMALL)
            .then(|| ((usize::from(op) * 2 + usize::from(jump)) * SMALL as usize) + arg as usize);
        if let Some(slot) = slot {
            if effects.small.is_empty() {
                effects.small = vec![i32::MIN; 512 * SMALL as usize];
            }
            if effects.small[slot] != i32::MIN {
                return Ok(i64::from(effects.small[slot]));
            }
        } else if let Some(&known) = effects.large.get(&(op, arg, jump)) {
            return Ok(i64::from(known));
        }
        let effect: i32 = self
            .stack_effect
            .bind(py)
            .call1((op, arg, jump))?
            .extract()?;
        match slot {
            Some(slot) => effects.small[slot] = effect,
            None => {
                effects.large.insert((op, arg, jump), effect);
            }
        }
        Ok(i64::from(effect))
    }

    /// Where control goes after instruction `index`, with the stack effect of each edge
    /// (handlers not included).
    fn successors(
        &self,
        py: Python<'_>,
        effects: &mut Effects,
        code: &Instructions,
        index: usize,
    ) -> PyResult<[Option<(usize, i64)>; 2]> {
        let (op, arg) = (code.ops[index], code.args[index]);
        let kind = self.kind(op);
        let jump = match code.targets[index] {
            Some(target) if kind & NOT_CONTROL == 0 => {
                Some((target as usize, self.effect(py, effects, op, arg, true)?))
            }
            _ => None,
        };
        let next = if kind & (UNCONDITIONAL | TERMINAL) == 0 {
            Some((index + 1, self.effect(py, effects, op, arg, false)?))
        } else {
            None
        };
        Ok([jump, next])
    }

    fn check_depths(
        &self,
        py: Python<'_>,
        code: &Instructions,
        seeds: &[(usize, i64)],
        known: Option<Vec<Option<i64>>>,
    ) -> PyResult<(Vec<Option<i64>>, i64)> {
        let count = code.ops.len();
        for index in 0..count {
            let handler = code.handler_of[index].map(|h| code.handlers[h as usize].target);
            for target in [code.targets[index], handler].into_iter().flatten() {
                if target as usize >= count {
                    return Err(error(format!(
                        "{} names a label after the last instruction",
                        self.name(code.ops[index])
                    )));
                }
            }
        }
        let mut work = Vec::new();
        let mut depths = match known {
            Some(known) if known.len() == count => known,
            Some(_) => return Err(error("the known depths are for other code")),
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
        let mut effects = self
            .effects
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = |index: usize| self.name(code.ops[index]);
        let reach = |depths: &mut Vec<Option<i64>>,
                     work: &mut Vec<usize>,
                     to: usize,
                     depth: i64,
                     from: usize|
         -> PyResult<()> {
            if to >= count {
                return Err(error(format!(
                    "{} falls off the end of the code",
                    name(from)
                )));
            }
            if depth < 0 {
                return Err(error(format!(
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
                    return Err(error(format!(
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
            if let Some(handler) = code.handler_of[index] {
                let handler = code.handlers[handler as usize];
                if i64::from(handler.depth) > depth {
                    if code.inserted[index] {
                        return Err(error(format!(
                            "{} is under a handler deeper than its stack",
                            name(index)
                        )));
                    }
                } else {
                    let entry = i64::from(handler.depth) + 1 + i64::from(handler.lasti);
                    reach(
                        &mut depths,
                        &mut work,
                        handler.target as usize,
                        entry,
                        index,
                    )?;
                }
            }
            for (to, effect) in self
                .successors(py, &mut effects, code, index)?
                .into_iter()
                .flatten()
            {
                highest = highest.max(depth + effect.max(0));
                reach(&mut depths, &mut work, to, depth + effect, index)?;
            }
        }
        Ok((depths, highest))
    }

    /// The exception table: per instruction under a handler, its units, the handler's start
    /// and depth and `lasti`, consecutive instructions with the same entry merged into one;
    /// each field a varint of 6-bit groups, most significant first, 64 = more follow, and
    /// 128 set on the first byte of an entry.
    fn exception_table(&self, code: &Instructions, starts: &[u32]) -> Vec<u8> {
        let mut merged: Vec<(u32, u32, u32, u32, bool)> = Vec::new();
        for (index, handler) in code.handler_of.iter().enumerate() {
            let Some(handler) = handler else { continue };
            let h = code.handlers[*handler as usize];
            let entry = (
                starts[index],
                starts[index + 1],
                starts[h.target as usize],
                h.depth,
                h.lasti,
            );
            match merged.last_mut() {
                Some(last)
                    if last.1 == entry.0
                        && (last.2, last.3, last.4) == (entry.2, entry.3, entry.4) =>
                {
                    last.1 = entry.1;
                }
                _ => merged.push(entry),
            }
        }
        let mut out = Vec::new();
        for (start, end, target, depth, lasti) in merged {
            write_big_endian(&mut out, start, 128);
            write_big_endian(&mut out, end - start, 0);
            write_big_endian(&mut out, target, 0);
            write_big_endian(&mut out, depth << 1 | u32::from(lasti), 0);
        }
        out
    }

    /// The location table as CPython's assembler writes it: entries of 1 to 8 code units,
    /// the shortest form that holds each position, lines relative to the entry before,
    /// starting at `first_line`.
    fn location_table(
        &self,
        code: &Instructions,
        sizes: &[u32],
        first_line: i32,
    ) -> PyResult<Vec<u8>> {
        let mut runs: Vec<(Position, u32)> = Vec::new();
        for (&position, &units) in code.positions.iter().zip(sizes) {
            match runs.last_mut() {
                Some(last) if self.merged_location_runs && last.0 == position => last.1 += units,
                _ => runs.push((position, units)),
            }
        }
        let mut out = Vec::new();
        let mut line = first_line;
        for (position, mut units) in runs {
            while units > 0 {
                let size = units.min(8);
                units -= size;
                line = location_entry(&mut out, position, size, line)?;
            }
        }
        Ok(out)
    }
}

/// Writes one location entry of `size` units; returns the line the next one is relative to.
fn location_entry(out: &mut Vec<u8>, position: Position, size: u32, line: i32) -> PyResult<i32> {
    let [start, end_line, column, end_column] = position;
    let head = 128 | (size - 1) as u8;
    if start < 0 {
        out.push(head | 15 << 3);
        return Ok(line);
    }
    let delta = start - line;
    if column < 0 || end_column < 0 {
        if end_line == start || end_line < 0 {
            out.push(head | 13 << 3);
            write_signed(out, delta);
            return Ok(start);
        }
    } else if end_line == start {
        let width = end_column - column;
        if delta == 0 && column < 80 && (0..16).contains(&width) {
            out.push(head | ((column / 8) as u8) << 3);
            out.push(((column % 8) as u8) << 4 | width as u8);
            return Ok(start);
        }
        if (0..3).contains(&delta) && column < 128 && end_column < 128 {
            out.push(head | ((10 + delta) as u8) << 3);
            out.extend([column as u8, end_column as u8]);
            return Ok(start);
        }
    }
    let end_line = if end_line < 0 { start } else { end_line };
    let Ok(lines) = u32::try_from(end_line - start) else {
        return Err(error("a position ends on a line before it starts"));
    };
    out.push(head | 14 << 3);
    write_signed(out, delta);
    write_little_endian(out, lines);
    write_little_endian(out, (column + 1) as u32);
    write_little_endian(out, (end_column + 1) as u32);
    Ok(start)
}

fn write_little_endian(out: &mut Vec<u8>, mut value: u32) {
    while value >= 64 {
        out.push(64 | (value & 63) as u8);
        value >>= 6;
    }
    out.push(value as u8);
}

fn write_signed(out: &mut Vec<u8>, value: i32) {
    let magnitude = value.unsigned_abs();
    write_little_endian(
        out,
        if value < 0 {
            magnitude << 1 | 1
        } else {
            magnitude << 1
        },
    );
}

fn write_big_endian(out: &mut Vec<u8>, value: u32, first: u8) {
    let mut shift = 0;
    while shift + 6 < 32 && value >> (shift + 6) != 0 {
        shift += 6;
    }
    let mut flag = first;
    loop {
        let more = if shift > 0 { 64 } else { 0 };
        out.push(((value >> shift) & 63) as u8 | more | flag);
        flag = 0;
        if shift == 0 {
            break;
        }
        shift -= 6;
    }
}

/// Reads the varints of the two tables.
struct Varints<'a> {
    data: &'a [u8],
    at: usize,
}

impl Varints<'_> {
    fn byte(&mut self) -> PyResult<u8> {
        let byte = self
            .data
            .get(self.at)
            .copied()
            .ok_or_else(|| error("a table of the code object ends inside an entry"))?;
        self.at += 1;
        Ok(byte)
    }

    /// The exception table's: most significant group first.
    fn big_endian(&mut self) -> PyResult<u64> {
        let mut byte = self.byte()?;
        let mut value = u64::from(byte & 63);
        while byte & 64 != 0 {
            byte = self.byte()?;
            value = value << 6 | u64::from(byte & 63);
        }
        Ok(value)
    }

    /// The location table's: least significant group first.
    fn little_endian(&mut self) -> PyResult<i64> {
        let mut byte = self.byte()?;
        let mut value = i64::from(byte & 63);
        let mut shift = 0;
        while byte & 64 != 0 {
            byte = self.byte()?;
            shift += 6;
            if shift > 30 {
                return Err(error("a location table entry holds a number too large"));
            }
            value |= i64::from(byte & 63) << shift;
        }
        Ok(value)
    }

    fn signed(&mut self) -> PyResult<i64> {
        let value = self.little_endian()?;
        Ok(if value & 1 == 1 {
            -(value >> 1)
        } else {
            value >> 1
        })
    }
}

/// The position of each code unit, as `co_positions()` gives them.
fn decode_locations(table: &[u8], first_line: i32, units: usize) -> PyResult<Vec<Position>> {
    let mut positions = Vec::with_capacity(units);
    let mut read = Varints { data: table, at: 0 };
    let mut line = i64::from(first_line);
    // A line or column that `co_positions()` can give: from 0 to `i32::MAX` (`None`, `-1`
    // here, has forms of its own).
    let narrow = |value: i64| {
        i32::try_from(value)
            .ok()
            .filter(|&value| value >= 0)
            .ok_or_else(|| error("a position out of range"))
    };
    // A column of the long form: 0 for `None`, else one more than the column.
    let column = |read: &mut Varints| match read.little_endian()? {
        0 => Ok(-1),
        value => narrow(value - 1),
    };
    while read.at < table.len() && positions.len() < units {
        let head = read.byte()?;
        if head & 128 == 0 {
            return Err(error("the location table is out of step"));
        }
        let code = (head >> 3) & 15;
        let size = usize::from(head & 7) + 1;
        let position = match code {
            15 => NO_POSITION,
            14 => {
                line = line.saturating_add(read.signed()?);
                let end_line = line.saturating_add(read.little_endian()?);
                let start = column(&mut read)?;
                let end = column(&mut read)?;
                [narrow(line)?, narrow(end_line)?, start, end]
            }
            13 => {
                line = line.saturating_add(read.signed()?);
                [narrow(line)?, narrow(line)?, -1, -1]
            }
            10..=12 => {
                line = line.saturating_add(i64::from(code - 10));
                let column = i32::from(read.byte()?);
                let end_column = i32::from(read.byte()?);
                [narrow(line)?, narrow(line)?, column, end_column]
            }
            _ => {
                let second = read.byte()?;
                let column = i32::from(code) << 3 | i32::from(second >> 4);
                [
                    narrow(line)?,
                    narrow(line)?,
                    column,
                    column + i32::from(second & 15),
                ]
            }
        };
        positions.extend(std::iter::repeat_n(position, size));
    }
    if positions.len() < units {
        return Err(error("the location table is shorter than the code"));
    }
    positions.truncate(units);
    Ok(positions)
}
