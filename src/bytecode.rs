//! The bytecode layer: a RustPython code object as an editable list of instructions, and
//! back.
//!
//! [`Body::decode`] turns a [`CodeObject`]'s code units into [`Item`]s: one [`Instr`] per
//! instruction (its `EXTENDED_ARG` prefix folded into the argument, its inline cache units
//! implied by the opcode), with jump targets and exception handlers as symbolic [`Label`]s
//! and each instruction's source location and line-table entry attached. [`Body::assemble`]
//! lays the list out again the way RustPython's code generator does: relative jumps, minimal
//! `EXTENDED_ARG` prefixes (repeated until sizes settle), cache units, the location and
//! line tables, the exception table and the maximum stack depth. Decoding and assembling a
//! code object with no edits reproduces it exactly; `tests/roundtrip.rs` checks that over
//! CPython's standard library.
//!
//! Every code object [`Body::assemble`] emits first passes the verifier (`Body::verify`): jumps
//! and handlers land on instructions, and the stack depth agrees on every edge.

use std::collections::{HashMap, HashSet};

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::SourceLocation;
use rustpython_compiler::core::bytecode::{
    Arg, CodeUnit, CodeUnits, ConstantData, ExceptionTableEntry, Instruction, InstructionMetadata,
    OpArg, decode_exception_table, encode_exception_table,
};
use rustpython_compiler::core::varint::{write_signed_varint, write_varint};

/// A position in an instruction list that jumps and handlers can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub u32);

/// The exception handler that covers an instruction (an entry of the exception table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handler {
    /// Where the handler's code starts.
    pub target: Label,
    /// Stack depth the handler unwinds to before pushing the exception.
    pub depth: u32,
    /// Whether the handler also receives the offset of the raising instruction.
    pub lasti: bool,
}

/// One entry of the line table (CPython 3.11 format): `line == -1` means no location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineEntry {
    /// The first line of the range, or -1.
    pub line: i32,
    /// The last line of the range, or -1.
    pub end_line: i32,
    /// The zero-based column the range starts at, or -1 when the table holds no columns.
    pub col: i32,
    /// The zero-based column the range ends at, or -1 when the table holds no columns.
    pub end_col: i32,
}

impl LineEntry {
    /// The entry of an instruction with no source location.
    pub const NONE: LineEntry = LineEntry {
        line: -1,
        end_line: -1,
        col: -1,
        end_col: -1,
    };
}

/// One instruction with everything attached that assembling it needs.
#[derive(Clone, Debug)]
pub struct Instr {
    /// The opcode; its argument is in `arg`.
    pub op: Instruction,
    /// The full argument; for a jump it is recomputed from `target` when assembling.
    pub arg: u32,
    /// Where the instruction jumps to, for a jump.
    pub target: Option<Label>,
    /// The exception handler that covers the instruction, if any.
    pub handler: Option<Handler>,
    /// The source range of the instruction (`CodeObject::locations`).
    pub location: (SourceLocation, SourceLocation),
    /// Its line-table entry, which may differ from `location` (line 0, no location).
    pub line: LineEntry,
    /// Whether gotopy put it there (the verifier is stricter with those).
    pub inserted: bool,
}

impl Instr {
    /// An instruction gotopy inserts, at the source location of `like`, under no handler
    /// (set one if it can raise).
    pub fn like(like: &Instr, op: Instruction, arg: u32, target: Option<Label>) -> Instr {
        Instr {
            op,
            arg,
            target,
            handler: None,
            location: like.location,
            line: like.line,
            inserted: true,
        }
    }
}

/// An element of an instruction list.
#[derive(Clone, Debug)]
pub enum Item {
    /// Marks the position of the instruction that follows it.
    Label(Label),
    /// An instruction.
    Instr(Instr),
}

/// An editable instruction list.
#[derive(Clone, Debug)]
pub struct Body {
    /// The instructions in order, with the labels placed among them.
    pub(crate) items: Vec<Item>,
    next_label: u32,
    /// `co_firstlineno`: the line the line table starts from.
    first_line: i32,
    /// Whether the line table holds columns (RustPython's `debug_ranges`).
    columns: bool,
    /// The compiler's `max_stackdepth`. It can exceed what the code needs (the compiler also
    /// counts handlers whose protected code it later removed), so an assembled code object
    /// never gets less than this.
    compiled_depth: u32,
}

/// Why a code object could not be decoded, assembled or verified.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BytecodeError {
    /// The code ends inside the instruction that starts at this offset.
    #[error("code ends inside an instruction at offset {0}")]
    Truncated(usize),
    /// A jump or handler target that is not the start of an instruction, or that the jump
    /// cannot reach in its direction.
    #[error("jump at offset {at} lands at {target}, not on an instruction")]
    BadJumpTarget {
        /// The offset of the jump.
        at: usize,
        /// The offset it lands at.
        target: i64,
    },
    /// An exception table entry whose range or target is not on instruction boundaries.
    #[error("exception table entry {0:?} does not fall on instruction boundaries")]
    BadExceptionEntry(ExceptionTableEntry),
    /// The code units of the instruction at this offset have different locations.
    #[error("the units of the instruction at offset {0} disagree on their location")]
    SplitLocation(usize),
    /// The line table cannot be decoded, or has the wrong length; the text says how.
    #[error("line table does not match the code: {0}")]
    BadLineTable(&'static str),
    /// A jump or handler names a label that is not in the instruction list.
    #[error("label {0:?} is used but never placed")]
    UnplacedLabel(Label),
    /// The stack-depth analysis failed.
    #[error("stack depth at offset {at}: {message}")]
    StackDepth {
        /// The offset of the instruction where it failed.
        at: usize,
        /// What went wrong.
        message: String,
    },
}

/// Instructions whose argument is a relative jump, and the direction of the jump.
enum Jump {
    Forward,
    Backward,
    /// `END_ASYNC_FOR` points back at the `SEND` five units before its target.
    EndAsyncFor,
}

/// The distance from `END_ASYNC_FOR`'s target to the `END_SEND` it names.
const END_SEND_OFFSET: u32 = 5;

fn jump_kind(op: Instruction) -> Option<Jump> {
    match op {
        Instruction::EndAsyncFor => Some(Jump::EndAsyncFor),
        Instruction::JumpBackward { .. } | Instruction::JumpBackwardNoInterrupt { .. } => {
            Some(Jump::Backward)
        }
        _ if op.label_arg().is_some() => Some(Jump::Forward),
        _ => None,
    }
}

impl Body {
    /// Decodes a code object's instructions (not its nested code objects).
    pub fn decode(code: &CodeObject) -> Result<Body, BytecodeError> {
        let units: &[CodeUnit] = &code.instructions;
        let (lines, columns) =
            decode_line_table(&code.linetable, code_first_line(code), units.len())?;
        // Pass 1: instruction boundaries.
        let mut starts = Vec::new(); // (start offset, op, arg, size)
        let mut offset = 0;
        while offset < units.len() {
            let start = offset;
            let mut arg = 0u32;
            while matches!(units[offset].op, Instruction::ExtendedArg) {
                arg = (arg << 8) | u32::from(u8::from(units[offset].arg));
                offset += 1;
                if offset == units.len() {
                    return Err(BytecodeError::Truncated(start));
                }
            }
            let op = units[offset].op;
            arg = (arg << 8) | u32::from(u8::from(units[offset].arg));
            offset += 1 + op.cache_entries();
            if offset > units.len() {
                return Err(BytecodeError::Truncated(start));
            }
            starts.push((start, op, arg, offset - start));
        }
        let mut body = Body {
            items: Vec::with_capacity(starts.len() + starts.len() / 4),
            next_label: 0,
            first_line: code_first_line(code),
            columns,
            compiled_depth: code.max_stackdepth,
        };
        let index_of: HashMap<usize, usize> = starts
            .iter()
            .enumerate()
            .map(|(index, &(start, ..))| (start, index))
            .collect();
        let mut labels: HashMap<usize, Label> = HashMap::new();
        let mut label_at = |body: &mut Body, at: usize, target: i64| {
            let found = usize::try_from(target)
                .ok()
                .and_then(|target| index_of.get(&target).copied());
            match found {
                Some(index) => Ok(*labels.entry(index).or_insert_with(|| body.new_label())),
                None => Err(BytecodeError::BadJumpTarget { at, target }),
            }
        };
        // Pass 2: jump targets and handlers as labels.
        let mut targets = Vec::with_capacity(starts.len());
        for &(start, op, arg, size) in &starts {
            let after = (start + size) as i64;
            let target = match jump_kind(op) {
                None => None,
                Some(Jump::Forward) => Some(after + i64::from(arg)),
                Some(Jump::Backward) => Some(after - i64::from(arg)),
                Some(Jump::EndAsyncFor) => {
                    Some(after - i64::from(arg) - i64::from(END_SEND_OFFSET))
                }
            };
            targets.push(match target {
                Some(target) => Some(label_at(&mut body, start, target)?),
                None => None,
            });
        }
        let mut handlers: Vec<Option<Handler>> = vec![None; starts.len()];
        for entry in decode_exception_table(&code.exceptiontable) {
            let bad = || BytecodeError::BadExceptionEntry(entry);
            let first = *index_of.get(&(entry.start as usize)).ok_or_else(bad)?;
            let end = entry.end as usize;
            if end != units.len() && !index_of.contains_key(&end) || end <= entry.start as usize {
                return Err(bad());
            }
            let target = label_at(&mut body, entry.start as usize, i64::from(entry.target))
                .map_err(|_| bad())?;
            let handler = Handler {
                target,
                depth: u32::from(entry.depth),
                lasti: entry.push_lasti,
            };
            for slot in handlers[first..]
                .iter_mut()
                .zip(&starts[first..])
                .take_while(|(_, (start, ..))| *start < end)
            {
                *slot.0 = Some(handler);
            }
        }
        // Pass 3: the list, with locations.
        for (index, &(start, op, arg, size)) in starts.iter().enumerate() {
            if let Some(&label) = labels.get(&index) {
                body.items.push(Item::Label(label));
            }
            let location = code.locations[start];
            let line = lines[start];
            if code.locations[start..start + size]
                .iter()
                .any(|other| *other != location)
                || lines[start..start + size]
                    .iter()
                    .any(|other| *other != line)
            {
                return Err(BytecodeError::SplitLocation(start));
            }
            body.items.push(Item::Instr(Instr {
                op,
                arg,
                target: targets[index],
                handler: handlers[index],
                location,
                line,
                inserted: false,
            }));
        }
        Ok(body)
    }

    /// A label not yet placed anywhere.
    pub fn new_label(&mut self) -> Label {
        self.next_label += 1;
        Label(self.next_label - 1)
    }

    /// The instructions in order, without the labels.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        self.items.iter().filter_map(|item| match item {
            Item::Instr(instr) => Some(instr),
            Item::Label(_) => None,
        })
    }

    /// Lays the instructions out and stores them, their locations, line table, exception
    /// table and maximum stack depth in `code`, after verifying them.
    pub fn assemble(&self, code: &mut CodeObject) -> Result<(), BytecodeError> {
        let layout = self.layout()?;
        let max_depth = self.verify(&layout)?;
        let mut units = Vec::with_capacity(layout.size);
        let mut locations = Vec::with_capacity(layout.size);
        let mut lines = Vec::with_capacity(layout.size);
        for (index, instr) in self.instrs().enumerate() {
            let (offset, op) = (layout.offsets[index], layout.ops[index]);
            let arg = OpArg::new(layout.args[index]);
            let caches = op.cache_entries();
            let size = arg.instr_size() + caches;
            debug_assert_eq!(units.len(), offset);
            let (extras, low) = arg.split();
            units.extend(
                extras
                    .map(|byte| CodeUnit::new(Instruction::ExtendedArg, byte))
                    .chain([CodeUnit::new(op, low)]),
            );
            units.extend(std::iter::repeat_n(
                CodeUnit::new(Instruction::Cache, 0.into()),
                caches,
            ));
            locations.extend(std::iter::repeat_n(instr.location, size));
            lines.extend(std::iter::repeat_n(instr.line, size));
        }
        code.instructions = CodeUnits::from(units);
        code.locations = locations.into_boxed_slice();
        code.linetable = encode_line_table(&lines, self.first_line, self.columns);
        code.exceptiontable = self.exception_table(&layout);
        code.max_stackdepth = max_depth.max(self.compiled_depth);
        Ok(())
    }

    /// The exception table: runs of instructions with the same handler.
    fn exception_table(&self, layout: &Layout) -> Box<[u8]> {
        let mut entries: Vec<ExceptionTableEntry> = Vec::new();
        let mut open: Option<(Handler, u32)> = None;
        let ends = layout.offsets.iter().skip(1).copied().chain([layout.size]);
        for ((instr, &start), end) in self.instrs().zip(&layout.offsets).zip(ends) {
            let (start, end) = (start as u32, end as u32);
            match (open, instr.handler) {
                (Some((current, _)), Some(handler)) if current == handler => {}
                (current, handler) => {
                    if let Some((current, from)) = current {
                        entries.push(entry(current, from, start, layout));
                    }
                    open = handler.map(|handler| (handler, start));
                }
            }
            if let Some((current, from)) = open
                && end == layout.size as u32
            {
                entries.push(entry(current, from, end, layout));
            }
        }
        encode_exception_table(&entries)
    }

    /// Offsets of every instruction and label, with jump arguments, iterated until the sizes
    /// of jump instructions stop changing (as RustPython's assembler does).
    fn layout(&self) -> Result<Layout, BytecodeError> {
        let count = self.instrs().count();
        let mut args: Vec<u32> = self
            .instrs()
            .map(|instr| if instr.target.is_some() { 0 } else { instr.arg })
            .collect();
        let mut ops: Vec<Instruction> = self.instrs().map(|instr| instr.op).collect();
        loop {
            let mut offsets = Vec::with_capacity(count);
            let mut labels: HashMap<Label, usize> = HashMap::new();
            let mut offset = 0;
            let mut index = 0;
            for item in &self.items {
                match item {
                    Item::Label(label) => {
                        labels.insert(*label, offset);
                    }
                    Item::Instr(_) => {
                        offsets.push(offset);
                        offset += OpArg::new(args[index]).instr_size() + ops[index].cache_entries();
                        index += 1;
                    }
                }
            }
            let size = offset;
            let mut changed = false;
            for (index, instr) in self.instrs().enumerate() {
                let Some(label) = instr.target else { continue };
                let target = *labels
                    .get(&label)
                    .ok_or(BytecodeError::UnplacedLabel(label))?
                    as u32;
                let start = offsets[index] as u32;
                let old_size = OpArg::new(args[index]).instr_size() as u32;
                let after = start + old_size + ops[index].cache_entries() as u32;
                let op = match ops[index] {
                    Instruction::JumpForward { .. } if target <= start => {
                        Instruction::JumpBackward {
                            delta: Arg::marker(),
                        }
                    }
                    Instruction::JumpBackward { .. }
                    | Instruction::JumpBackwardNoInterrupt { .. }
                        if target > start =>
                    {
                        Instruction::JumpForward {
                            delta: Arg::marker(),
                        }
                    }
                    op => op,
                };
                changed |= op.cache_entries() != ops[index].cache_entries();
                ops[index] = op;
                let bad = || BytecodeError::BadJumpTarget {
                    at: start as usize,
                    target: i64::from(target),
                };
                let arg = match jump_kind(op) {
                    Some(Jump::Backward) => after.checked_sub(target).ok_or_else(bad)?,
                    Some(Jump::EndAsyncFor) => after
                        .checked_sub(target + END_SEND_OFFSET)
                        .ok_or_else(bad)?,
                    _ => target.checked_sub(after).ok_or_else(bad)?,
                };
                changed |= OpArg::new(arg).instr_size() as u32 != old_size;
                args[index] = arg;
            }
            if !changed {
                return Ok(Layout {
                    offsets,
                    labels,
                    ops,
                    args,
                    size,
                });
            }
        }
    }

    /// Checks that every reachable instruction is entered with one stack depth, that no
    /// instruction pops more than the stack holds, and that handlers are consistent;
    /// returns the maximum depth.
    fn verify(&self, layout: &Layout) -> Result<u32, BytecodeError> {
        self.analyse(layout, &HashSet::new())
            .map(|(_, max_depth)| max_depth)
    }

    /// The stack depth before each item (`None` for labels and unreachable instructions),
    /// by the same analysis as the verifier.
    pub fn stack_depths(&self) -> Result<Vec<Option<u32>>, BytecodeError> {
        let (by_instr, _) = self.analyse(&self.layout()?, &HashSet::new())?;
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

    /// The stack depth at each placed label that reachable code gets to (the depth before
    /// the instruction that follows it), by the verifier's analysis with the handlers whose
    /// target is in `unknown` left out: those are handlers whose depth is still to be
    /// decided, from what this finds.
    pub fn depths_at_labels(
        &self,
        unknown: &HashSet<Label>,
    ) -> Result<HashMap<Label, u32>, BytecodeError> {
        let layout = self.layout()?;
        let (depths, _) = self.analyse(&layout, unknown)?;
        let index_of = layout.instruction_at();
        Ok(layout
            .labels
            .iter()
            .filter_map(|(&label, offset)| {
                let depth = depths[*index_of.get(offset)?]?;
                Some((label, depth))
            })
            .collect())
    }

    /// The depth before each instruction, and the maximum depth; handlers whose target is in
    /// `unknown` are not followed.
    fn analyse(
        &self,
        layout: &Layout,
        unknown: &HashSet<Label>,
    ) -> Result<(Vec<Option<u32>>, u32), BytecodeError> {
        let instrs: Vec<&Instr> = self.instrs().collect();
        let index_of = layout.instruction_at();
        let index_of_label = |label: Label| -> Result<usize, BytecodeError> {
            let offset = layout.labels[&label];
            index_of
                .get(&offset)
                .copied()
                .ok_or(BytecodeError::BadJumpTarget {
                    at: offset,
                    target: offset as i64,
                })
        };
        let mut depths: Vec<Option<u32>> = vec![None; instrs.len()];
        let mut work: Vec<usize> = Vec::new();
        let mut max_depth = 0u32;
        let enter = |index: usize,
                     depth: u32,
                     depths: &mut Vec<Option<u32>>,
                     work: &mut Vec<usize>,
                     from: usize|
         -> Result<(), BytecodeError> {
            match depths[index] {
                None => {
                    depths[index] = Some(depth);
                    work.push(index);
                    Ok(())
                }
                Some(known) if known == depth => Ok(()),
                Some(known) => Err(BytecodeError::StackDepth {
                    at: layout.offsets[from],
                    message: format!(
                        "reaches offset {} with depth {depth}, but it is entered elsewhere with \
                         {known}",
                        layout.offsets[index]
                    ),
                }),
            }
        };
        if !instrs.is_empty() {
            enter(0, 0, &mut depths, &mut work, 0)?;
        }
        while let Some(mut index) = work.pop() {
            loop {
                let instr = instrs[index];
                let depth = depths[index].expect("entered");
                let at = layout.offsets[index];
                // RustPython's code generator lets the cleanup handler of a `with` or
                // `except` cover a few instructions after the stack has shrunk below the
                // handler's depth; tolerated in its code, never in gotopy's.
                if let Some(handler) = instr.handler
                    && !unknown.contains(&handler.target)
                    && (handler.depth <= depth || instr.inserted)
                {
                    if handler.depth > depth {
                        return Err(BytecodeError::StackDepth {
                            at,
                            message: format!(
                                "the handler unwinds to depth {} but the stack holds {depth}",
                                handler.depth
                            ),
                        });
                    }
                    let entry = handler.depth + 1 + u32::from(handler.lasti);
                    max_depth = max_depth.max(entry);
                    enter(
                        index_of_label(handler.target)?,
                        entry,
                        &mut depths,
                        &mut work,
                        index,
                    )?;
                }
                let op = layout.ops[index];
                let effect = op.stack_effect(layout.args[index]);
                let after =
                    depth
                        .checked_add_signed(effect)
                        .ok_or_else(|| BytecodeError::StackDepth {
                            at,
                            message: format!("pops {} values from a stack of {depth}", -effect),
                        })?;
                max_depth = max_depth.max(after);
                // `END_ASYNC_FOR`'s target only tells the VM where its loop's `SEND` is.
                if let Some(label) = instr.target
                    && !matches!(instr.op, Instruction::EndAsyncFor)
                {
                    // SEND jumps to END_SEND with the receiver still on the stack.
                    let jump = if matches!(op, Instruction::Send { .. }) {
                        depth
                    } else {
                        after
                    };
                    enter(index_of_label(label)?, jump, &mut depths, &mut work, index)?;
                }
                if op.is_scope_exit() || op.is_unconditional_jump() {
                    break;
                }
                index += 1;
                if index == instrs.len() {
                    break;
                }
                match depths[index] {
                    None => depths[index] = Some(after),
                    Some(known) if known == after => break,
                    Some(_) => {
                        enter(index, after, &mut depths, &mut work, index - 1)?;
                        break;
                    }
                }
            }
        }
        Ok((depths, max_depth))
    }
}

/// Where everything goes.
struct Layout {
    offsets: Vec<usize>,
    labels: HashMap<Label, usize>,
    /// Opcodes, with jump directions resolved.
    ops: Vec<Instruction>,
    /// Arguments, with jump arguments resolved.
    args: Vec<u32>,
    size: usize,
}

impl Layout {
    /// The index of the instruction that starts at each offset.
    fn instruction_at(&self) -> HashMap<usize, usize> {
        self.offsets
            .iter()
            .enumerate()
            .map(|(index, &offset)| (offset, index))
            .collect()
    }
}

fn entry(handler: Handler, start: u32, end: u32, layout: &Layout) -> ExceptionTableEntry {
    ExceptionTableEntry::new(
        start,
        end,
        layout.labels[&handler.target] as u32,
        handler.depth as u16,
        handler.lasti,
    )
}

fn code_first_line(code: &CodeObject) -> i32 {
    code.first_line_number.map_or(1, |line| line.get() as i32)
}

// Line-table entry kinds (CPython's `_PyCodeLocationInfoKind`).
const ONE_LINE_0: u8 = 10;
const NO_COLUMNS: u8 = 13;
const LONG: u8 = 14;
const NONE: u8 = 15;

/// One line-table entry per code unit, and whether the table has columns.
fn decode_line_table(
    table: &[u8],
    first_line: i32,
    units: usize,
) -> Result<(Vec<LineEntry>, bool), BytecodeError> {
    let mut entries = Vec::with_capacity(units);
    let mut columns = true;
    let mut line = first_line;
    let mut pos = 0;
    let mut next = |what: &'static str| -> Result<u8, BytecodeError> {
        let byte = *table.get(pos).ok_or(BytecodeError::BadLineTable(what))?;
        pos += 1;
        Ok(byte)
    };
    let varint = |next: &mut dyn FnMut(&'static str) -> Result<u8, BytecodeError>| {
        let mut value = 0u32;
        let mut shift = 0;
        loop {
            let byte = next("truncated varint")?;
            value |= u32::from(byte & 0x3f) << shift;
            if byte & 0x40 == 0 {
                return Ok::<u32, BytecodeError>(value);
            }
            shift += 6;
            if shift > 30 {
                return Err(BytecodeError::BadLineTable("varint too long"));
            }
        }
    };
    let signed = |value: u32| {
        if value & 1 != 0 {
            -((value >> 1) as i32)
        } else {
            (value >> 1) as i32
        }
    };
    while entries.len() < units {
        let header = next("fewer entries than code units")?;
        if header & 0x80 == 0 {
            return Err(BytecodeError::BadLineTable("entry without a header bit"));
        }
        let kind = (header >> 3) & 0xf;
        let length = usize::from(header & 7) + 1;
        let entry = match kind {
            0..=9 => {
                let byte = next("short entry")?;
                let col = i32::from(kind) * 8 + i32::from(byte >> 4);
                LineEntry {
                    line,
                    end_line: line,
                    col,
                    end_col: col + i32::from(byte & 0xf),
                }
            }
            10..=12 => {
                line += i32::from(kind - ONE_LINE_0);
                let col = i32::from(next("one-line entry")?);
                let end_col = i32::from(next("one-line entry")?);
                LineEntry {
                    line,
                    end_line: line,
                    col,
                    end_col,
                }
            }
            NO_COLUMNS => {
                columns = false;
                line += signed(varint(&mut next)?);
                LineEntry {
                    line,
                    end_line: line,
                    col: -1,
                    end_col: -1,
                }
            }
            LONG => {
                line += signed(varint(&mut next)?);
                let end_line = line + varint(&mut next)? as i32;
                let col = varint(&mut next)? as i32 - 1;
                let end_col = varint(&mut next)? as i32 - 1;
                LineEntry {
                    line,
                    end_line,
                    col,
                    end_col,
                }
            }
            _ => LineEntry::NONE,
        };
        entries.extend(std::iter::repeat_n(entry, length));
    }
    if entries.len() != units || pos != table.len() {
        return Err(BytecodeError::BadLineTable("more entries than code units"));
    }
    Ok((entries, columns))
}

/// The line table for one entry per code unit, encoded exactly as RustPython's code
/// generator encodes it.
fn encode_line_table(entries: &[LineEntry], first_line: i32, columns: bool) -> Box<[u8]> {
    let mut table = Vec::new();
    let mut previous = first_line;
    let mut i = 0;
    while i < entries.len() {
        let entry = entries[i];
        let mut run = entries[i..]
            .iter()
            .take_while(|other| **other == entry)
            .count();
        while run > 0 {
            let length = run.min(8);
            let header = |kind: u8| 0x80 | (kind << 3) | (length - 1) as u8;
            run -= length;
            i += length;
            if entry.line == -1 {
                table.push(header(NONE));
                continue;
            }
            let delta = entry.line - previous;
            previous = entry.line;
            let LineEntry {
                end_line,
                col,
                end_col,
                ..
            } = entry;
            let end_delta = end_line - entry.line;
            if !columns {
                table.push(header(NO_COLUMNS));
                write_signed_varint(&mut table, delta);
            } else if delta == 0
                && end_delta == 0
                && col < 80
                && end_col - col < 16
                && end_col >= col
            {
                table.push(header((col / 8).min(9) as u8));
                table.push((((col % 8) as u8) << 4) | ((end_col - col) as u8 & 0xf));
            } else if (0..3).contains(&delta) && end_delta == 0 && col < 128 && end_col < 128 {
                table.push(header(ONE_LINE_0 + delta as u8));
                table.push(col as u8);
                table.push(end_col as u8);
            } else {
                table.push(header(LONG));
                write_signed_varint(&mut table, delta);
                write_varint(&mut table, end_delta as u32);
                write_varint(&mut table, (col + 1) as u32);
                write_varint(&mut table, (end_col + 1) as u32);
            }
        }
    }
    table.into_boxed_slice()
}

/// Applies `f` to every code object nested in `code`'s constants, innermost first, then to
/// `code` itself. Code objects are rewritten in place: everything else about them stays.
pub fn for_each_code_mut<E>(
    code: &mut CodeObject,
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(), E> {
    if code
        .constants
        .iter()
        .any(|constant| matches!(constant, ConstantData::Code { .. }))
    {
        let mut constants: Vec<ConstantData> = code.constants.iter().cloned().collect();
        for constant in &mut constants {
            if let ConstantData::Code { code: inner } = constant {
                for_each_code_mut(inner, f)?;
            }
        }
        code.constants = constants.into_iter().collect();
    }
    f(code)
}

/// A code object in RustPython's marshal format.
pub fn marshal(code: &CodeObject) -> Vec<u8> {
    let mut bytes = Vec::new();
    rustpython_compiler::core::marshal::serialize_code(&mut bytes, code);
    bytes
}

/// One instruction as listings show it.
struct Listed {
    offset: usize,
    /// The source line, where it differs from the previous instruction's.
    line: Option<i32>,
    text: String,
    /// Where it jumps, as an offset.
    target: Option<usize>,
    /// Whether execution can go on to the next instruction.
    falls_through: bool,
    /// Whether a jump or a handler starts here.
    is_target: bool,
}

/// The instructions of one code object as listings show them.
fn listing(code: &CodeObject) -> Result<Vec<Listed>, BytecodeError> {
    let body = Body::decode(code)?;
    let layout = body.layout()?;
    let targets: std::collections::HashSet<usize> = layout.labels.values().copied().collect();
    let mut last_line = None;
    let mut listed = Vec::new();
    for (index, instr) in body.instrs().enumerate() {
        let line = (instr.line.line != last_line.unwrap_or(-2) && instr.line.line >= 0)
            .then_some(instr.line.line);
        if line.is_some() {
            last_line = line;
        }
        let op = layout.ops[index];
        let target = instr.target.map(|label| layout.labels[&label]);
        let text = match target {
            Some(target) => format!("{} -> {target}", opname(op)),
            None => render(instr.op, instr.arg, code),
        };
        listed.push(Listed {
            offset: layout.offsets[index],
            line,
            text,
            target,
            falls_through: !(op.is_scope_exit() || op.is_unconditional_jump()),
            is_target: targets.contains(&layout.offsets[index]),
        });
    }
    Ok(listed)
}

/// A readable listing of `code` and every code object nested in it: line numbers, offsets,
/// opcode names, arguments resolved to names and constants, jump targets, and the
/// exception table. `gotopy dis` prints it and the snapshots record it.
pub fn disassemble(code: &CodeObject) -> Result<String, BytecodeError> {
    code_objects(code)
        .into_iter()
        .map(disassemble_one)
        .collect()
}

/// The listing of one code object, without the code objects nested in it.
pub fn disassemble_one(code: &CodeObject) -> Result<String, BytecodeError> {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Disassembly of {} (line {}):",
        code.qualname,
        code_first_line(code)
    );
    for instr in listing(code)? {
        let marker = if instr.is_target { ">>" } else { "  " };
        let line = instr.line.map(|line| line.to_string()).unwrap_or_default();
        let _ = writeln!(out, "{line:>5} {marker} {:>5} {}", instr.offset, instr.text);
    }
    let entries = decode_exception_table(&code.exceptiontable);
    if !entries.is_empty() {
        let _ = writeln!(out, "Exception table:");
        for entry in entries {
            let _ = writeln!(
                out,
                "  {} to {} -> {} [{}]{}",
                entry.start,
                entry.end,
                entry.target,
                entry.depth,
                if entry.push_lasti { " lasti" } else { "" }
            );
        }
    }
    out.push('\n');
    Ok(out)
}

/// The control-flow graph of one code object (not its nested ones) in Graphviz DOT: a box
/// per basic block with its instructions as the listing shows them, solid edges for jumps
/// and fall-through (`jump` labels a conditional jump taken), dashed edges to exception
/// handlers.
pub fn control_flow_dot(code: &CodeObject) -> Result<String, BytecodeError> {
    use std::collections::BTreeSet;
    use std::fmt::Write;
    let listed = listing(code)?;
    let handlers = decode_exception_table(&code.exceptiontable);
    // Blocks start at the first instruction, at jump and handler targets, and after
    // instructions that jump or end the code.
    let mut starts: BTreeSet<usize> = BTreeSet::from([0]);
    starts.extend(listed.iter().filter_map(|l| l.target));
    starts.extend(handlers.iter().map(|h| h.target as usize));
    for pair in listed.windows(2) {
        if pair[0].target.is_some() || !pair[0].falls_through {
            starts.insert(pair[1].offset);
        }
    }
    let block_of = |offset: usize| starts.range(..=offset).next_back().copied().unwrap_or(0);
    let escape = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&code.qualname));
    let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\"];");
    let mut edges = Vec::new();
    let mut blocks = listed.iter().peekable();
    while let Some(first) = blocks.next() {
        let mut label = String::new();
        let mut instr = first;
        loop {
            let line = instr.line.map(|line| line.to_string()).unwrap_or_default();
            let _ = write!(
                label,
                "{line:>5} {:>5} {}\\l",
                instr.offset,
                escape(&instr.text)
            );
            match blocks.peek() {
                Some(next) if !starts.contains(&next.offset) => instr = blocks.next().unwrap(),
                _ => break,
            }
        }
        if let Some(target) = instr.target {
            let kind = if instr.falls_through {
                " [label=\"jump\"]"
            } else {
                ""
            };
            edges.push(format!("  b{} -> b{target}{kind};", first.offset));
        }
        if instr.falls_through
            && let Some(next) = blocks.peek()
        {
            edges.push(format!("  b{} -> b{};", first.offset, next.offset));
        }
        let _ = writeln!(out, "  b{} [label=\"{label}\"];", first.offset);
    }
    let mut handled = BTreeSet::new();
    for entry in &handlers {
        for instr in listed
            .iter()
            .filter(|l| (entry.start as usize..entry.end as usize).contains(&l.offset))
        {
            handled.insert((block_of(instr.offset), entry.target as usize));
        }
    }
    for (from, to) in handled {
        edges.push(format!("  b{from} -> b{to} [style=dashed];"));
    }
    for edge in edges {
        let _ = writeln!(out, "{edge}");
    }
    out.push_str("}\n");
    Ok(out)
}

/// Every code object in `code`, itself first, depth first.
pub fn code_objects(code: &CodeObject) -> Vec<&CodeObject> {
    let mut found = vec![code];
    for constant in code.constants.iter() {
        if let ConstantData::Code { code } = constant {
            found.extend(code_objects(code));
        }
    }
    found
}

/// An instruction with its argument resolved. Local-variable arguments are resolved here
/// (RustPython's own display looks them up in `varnames` only and panics on cells).
fn render(op: Instruction, arg: u32, code: &CodeObject) -> String {
    let local = |index: u32| {
        let index = index as usize;
        code.varnames
            .iter()
            .chain(code.cellvars.iter())
            .chain(code.freevars.iter())
            .nth(index)
            .map_or_else(|| "?".to_owned(), |name| name.to_string())
    };
    match op {
        Instruction::LoadFast { .. }
        | Instruction::LoadFastBorrow { .. }
        | Instruction::LoadFastCheck { .. }
        | Instruction::LoadFastAndClear { .. }
        | Instruction::StoreFast { .. }
        | Instruction::DeleteFast { .. } => format!("{}({arg}, {})", opname(op), local(arg)),
        Instruction::LoadFastLoadFast { .. }
        | Instruction::LoadFastBorrowLoadFastBorrow { .. }
        | Instruction::StoreFastLoadFast { .. }
        | Instruction::StoreFastStoreFast { .. } => {
            format!("{}({}, {})", opname(op), local(arg >> 4), local(arg & 15))
        }
        _ => op
            .display(OpArg::new(arg), code)
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The opcode's name as `dis` prints it (`JUMP_FORWARD`).
fn opname(op: Instruction) -> String {
    let debug = format!("{op:?}");
    let name = debug.split([' ', '{']).next().unwrap_or(&debug);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
