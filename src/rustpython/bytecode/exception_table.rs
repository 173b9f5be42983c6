//! The exception table, between RustPython's entries (offset ranges, each with a handler's
//! offset, depth and `lasti` flag) and instructions: decoding finds the instructions each
//! entry covers, encoding turns runs of instructions with the same [`Handler`] into entries.
//!
//! The byte format is CPython 3.11's, which RustPython 0.5 shares, decoded and encoded by
//! [`crate::tables`] for both backends. This file computes no offsets: it reads them from
//! the code or from the assembler's layout.

use std::ops::Range;

use rustpython_compiler::core::bytecode::ExceptionTableEntry;

use super::assemble::Layout;
use super::{Body, BytecodeError, Handler};
use crate::tables::{ExceptionEntry, decode_exceptions, encode_exceptions};

/// An entry of the table and the instructions (by index) it covers.
pub(super) struct Covered {
    pub(super) entry: ExceptionTableEntry,
    pub(super) instrs: Range<usize>,
}

/// The entries of `table`, each with the instructions it covers. `offsets` holds the offset
/// where each instruction starts, in order; `units` is the length of the code. An entry
/// must start and end on instruction boundaries and cover at least one instruction.
pub(super) fn decode_entries(
    table: &[u8],
    offsets: &[usize],
    units: usize,
) -> Result<Vec<Covered>, BytecodeError> {
    let entries =
        decode_exceptions(table).map_err(|error| BytecodeError::BadExceptionTable(error.0))?;
    entries
        .into_iter()
        .map(|entry| {
            let entry = ExceptionTableEntry::new(
                entry.start,
                entry.end,
                entry.target,
                entry.depth as u16,
                entry.lasti,
            );
            let bad = || BytecodeError::BadExceptionEntry(entry);
            let (start, end) = (entry.start as usize, entry.end as usize);
            let index_of = |offset: usize| offsets.binary_search(&offset).map_err(|_| bad());
            let first = index_of(start)?;
            let last = if end == units {
                offsets.len()
            } else {
                index_of(end)?
            };
            if end <= start {
                return Err(bad());
            }
            Ok(Covered {
                entry,
                instrs: first..last,
            })
        })
        .collect()
}

impl Body {
    /// The exception table: runs of instructions with the same handler, at the offsets of
    /// `layout`.
    pub(super) fn exception_table(&self, layout: &Layout) -> Result<Box<[u8]>, BytecodeError> {
        let mut entries: Vec<ExceptionEntry> = Vec::new();
        let mut open: Option<(Handler, u32)> = None;
        let ends = layout.offsets.iter().skip(1).copied().chain([layout.size]);
        for ((instr, &start), end) in self.instrs().zip(&layout.offsets).zip(ends) {
            let (start, end) = (start as u32, end as u32);
            match (open, instr.handler) {
                (Some((current, _)), Some(handler)) if current == handler => {}
                (current, handler) => {
                    if let Some((current, from)) = current {
                        entries.push(entry(current, from, start, layout)?);
                    }
                    open = handler.map(|handler| (handler, start));
                }
            }
            if let Some((current, from)) = open
                && end == layout.size as u32
            {
                entries.push(entry(current, from, end, layout)?);
            }
        }
        Ok(encode_exceptions(&entries).into_boxed_slice())
    }
}

/// The entry for `handler` over the code units `start..end`.
fn entry(
    handler: Handler,
    start: u32,
    end: u32,
    layout: &Layout,
) -> Result<ExceptionEntry, BytecodeError> {
    let target = layout
        .labels
        .get(handler.target)
        .ok_or(BytecodeError::UnplacedLabel(handler.target))?;
    Ok(ExceptionEntry {
        start,
        end,
        target: *target as u32,
        depth: handler.depth,
        lasti: handler.lasti,
    })
}
