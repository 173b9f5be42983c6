//! Decoding: a [`CodeObject`]'s code units to a [`Body`]. Each instruction's
//! `EXTENDED_ARG` prefix is folded into its argument and its inline cache units are implied
//! by its opcode; jump targets and exception handlers become [`Label`]s, placed before the
//! instructions they name; each instruction gets its source location and line-table entry.
//!
//! Offsets are read here and forgotten: nothing in the [`Body`] it returns holds one.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{CodeUnit, Instruction};

use super::exception_table::decode_entries;
use super::jump::target_of;
use super::line_table::{LineEntry, decode_line_table};
use super::{Body, BytecodeError, Handler, Instr, Item, Label};

/// Where an instruction starts in the code, and what it is.
#[derive(Clone, Copy)]
struct Start {
    offset: usize,
    op: Instruction,
    /// The full argument, `EXTENDED_ARG` prefixes included.
    arg: u32,
    /// Code units, prefixes and caches included.
    size: usize,
}

/// The state of decoding one code object: its instructions found, and the labels made so
/// far, by the index of the instruction they name.
struct Decoder<'a> {
    code: &'a CodeObject,
    starts: Vec<Start>,
    /// The offset where each instruction starts, in order.
    offsets: Vec<usize>,
    /// The label of each instruction that has one, by index.
    labels: Vec<Option<Label>>,
    body: Body,
}

impl Body {
    /// Decodes a code object's instructions (not its nested code objects).
    pub fn decode(code: &CodeObject) -> Result<Body, BytecodeError> {
        let units: &[CodeUnit] = &code.instructions;
        let first_line = code_first_line(code);
        let lines = decode_line_table(&code.linetable, first_line, units.len())?;
        let starts = instruction_starts(units)?;
        let mut decoder = Decoder {
            code,
            offsets: starts.iter().map(|start| start.offset).collect(),
            labels: vec![None; starts.len()],
            body: Body {
                // Room for the labels too, about one per four instructions.
                items: Vec::with_capacity(starts.len() + starts.len() / 4),
                next_label: 0,
                first_line,
                compiled_depth: code.max_stackdepth,
            },
            starts,
        };
        let targets = decoder.targets()?;
        let handlers = decoder.handlers()?;
        decoder.place(&targets, &handlers, &lines)?;
        Ok(decoder.body)
    }
}

/// The bits of an argument each code unit holds: an instruction's own unit the lowest,
/// each `EXTENDED_ARG` prefix before it the next higher ones.
const BITS_PER_UNIT: u32 = 8;

/// `arg` with the argument byte of `unit` appended below it.
fn fold_arg(arg: u32, unit: &CodeUnit) -> u32 {
    (arg << BITS_PER_UNIT) | u32::from(u8::from(unit.arg))
}

/// Where each instruction starts, with its opcode, full argument and size.
fn instruction_starts(units: &[CodeUnit]) -> Result<Vec<Start>, BytecodeError> {
    let mut starts = Vec::new();
    let mut offset = 0;
    while offset < units.len() {
        let start = offset;
        let mut arg = 0u32;
        while matches!(units[offset].op, Instruction::ExtendedArg) {
            arg = fold_arg(arg, &units[offset]);
            offset += 1;
            if offset == units.len() {
                return Err(BytecodeError::Truncated(start));
            }
        }
        let op = units[offset].op;
        arg = fold_arg(arg, &units[offset]);
        offset += 1 + op.cache_entries();
        if offset > units.len() {
            return Err(BytecodeError::Truncated(start));
        }
        starts.push(Start {
            offset: start,
            op,
            arg,
            size: offset - start,
        });
    }
    Ok(starts)
}

impl Decoder<'_> {
    /// The label of the instruction at offset `target`, named by the instruction or entry at
    /// offset `at`; made the first time it is asked for.
    fn label_at(&mut self, at: usize, target: i64) -> Result<Label, BytecodeError> {
        let index = usize::try_from(target)
            .ok()
            .and_then(|target| self.offsets.binary_search(&target).ok())
            .ok_or(BytecodeError::BadJumpTarget { at, target })?;
        Ok(match self.labels[index] {
            Some(label) => label,
            None => *self.labels[index].insert(self.body.new_label()),
        })
    }

    /// Each instruction's jump target, as a label.
    fn targets(&mut self) -> Result<Vec<Option<Label>>, BytecodeError> {
        let mut targets = Vec::with_capacity(self.starts.len());
        for index in 0..self.starts.len() {
            let Start {
                offset,
                op,
                arg,
                size,
            } = self.starts[index];
            targets.push(match target_of(op, arg, offset + size) {
                Some(target) => Some(self.label_at(offset, target)?),
                None => None,
            });
        }
        Ok(targets)
    }

    /// The handler that covers each instruction, by the exception table.
    fn handlers(&mut self) -> Result<Vec<Option<Handler>>, BytecodeError> {
        let entries = decode_entries(
            &self.code.exceptiontable,
            &self.offsets,
            self.code.instructions.len(),
        )?;
        let mut handlers: Vec<Option<Handler>> = vec![None; self.starts.len()];
        for covered in entries {
            let entry = covered.entry;
            let target = self
                .label_at(entry.start as usize, i64::from(entry.target))
                .map_err(|_| BytecodeError::BadExceptionEntry(entry))?;
            let handler = Handler {
                target,
                depth: u32::from(entry.depth),
                lasti: entry.push_lasti,
            };
            for slot in &mut handlers[covered.instrs] {
                *slot = Some(handler);
            }
        }
        Ok(handlers)
    }

    /// Fills the body: each instruction, with the labels that name it before it.
    fn place(
        &mut self,
        targets: &[Option<Label>],
        handlers: &[Option<Handler>],
        lines: &[LineEntry],
    ) -> Result<(), BytecodeError> {
        let code = self.code;
        for (index, start) in self.starts.iter().enumerate() {
            if let Some(label) = self.labels[index] {
                self.body.items.push(Item::Label(label));
            }
            let units = start.offset..start.offset + start.size;
            let location = code.locations[start.offset];
            let line = lines[start.offset];
            if code.locations[units.clone()]
                .iter()
                .any(|other| *other != location)
                || lines[units].iter().any(|other| *other != line)
            {
                return Err(BytecodeError::SplitLocation(start.offset));
            }
            self.body.items.push(Item::Instr(Instr {
                op: start.op,
                arg: start.arg,
                target: targets[index],
                handler: handlers[index],
                location,
                line,
                inserted: false,
            }));
        }
        Ok(())
    }
}

/// `co_firstlineno`, which the line table counts from (1, as in CPython, when the code
/// object has none).
pub(super) fn code_first_line(code: &CodeObject) -> i32 {
    code.first_line_number.map_or(1, |line| line.get() as i32)
}
