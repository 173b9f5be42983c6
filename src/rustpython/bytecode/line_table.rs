//! The line table of a RustPython code object: one [`LineEntry`] per code unit. Its byte
//! format is CPython 3.11's, which [`crate::tables`] decodes and encodes for both backends;
//! this file only says how RustPython groups units into entries (every stretch of units at
//! one position is one run, as its code generator writes it).
//!
//! It knows code units and lines only: nothing of instructions, labels or jumps.

use super::BytecodeError;
use crate::tables::{Position, decode_locations, encode_locations};

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

    fn position(self) -> Position {
        [self.line, self.end_line, self.col, self.end_col]
    }
}

/// One line-table entry per code unit.
pub(super) fn decode_line_table(
    table: &[u8],
    first_line: i32,
    units: usize,
) -> Result<Vec<LineEntry>, BytecodeError> {
    let positions = decode_locations(table, first_line, units)
        .map_err(|error| BytecodeError::BadLineTable(error.0))?;
    Ok(positions
        .into_iter()
        .map(|[line, end_line, col, end_col]| LineEntry {
            line,
            end_line,
            col,
            end_col,
        })
        .collect())
}

/// The line table for one entry per code unit, each stretch of equal entries one run, as
/// RustPython's code generator encodes it.
pub(super) fn encode_line_table(entries: &[LineEntry], first_line: i32) -> Box<[u8]> {
    let mut runs: Vec<(Position, u32)> = Vec::new();
    for entry in entries {
        match runs.last_mut() {
            Some((position, units)) if *position == entry.position() => *units += 1,
            _ => runs.push((entry.position(), 1)),
        }
    }
    encode_locations(runs, first_line).into_boxed_slice()
}
