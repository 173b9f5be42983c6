//! The line table (CPython 3.11's `co_linetable` format, which RustPython 0.5 writes): one
//! [`LineEntry`] per code unit, decoded from the table and encoded back exactly as
//! RustPython's code generator encodes it.
//!
//! It knows code units and lines only: nothing of instructions, labels or jumps.

use rustpython_compiler::core::varint::{write_signed_varint, write_varint};

use super::BytecodeError;

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

    /// An entry on one line with no columns.
    fn line_only(line: i32) -> LineEntry {
        LineEntry {
            line,
            end_line: line,
            col: -1,
            end_col: -1,
        }
    }
}

// An entry starts with a header byte `1kkkklll`: the start bit, the kind, and the number of
// code units it covers, minus one.
const START_BIT: u8 = 0x80;
const KIND_SHIFT: u8 = 3;
const KIND_MASK: u8 = 0xf;
const LENGTH_MASK: u8 = 7;
/// The most code units one entry covers.
const MAX_RUN: usize = 8;

// Entry kinds (CPython's `_PyCodeLocationInfoKind`). Kinds 0 to 9 are the short form: the
// line of the previous entry, a column below 80 whose eighth is the kind, and one more
// byte with the column's remainder (high nibble) and the range's width (low nibble).
const SHORT_LAST: u8 = 9;
const SHORT_COLUMN_STEP: i32 = 8;
const SHORT_WIDTH_LIMIT: i32 = 16;
/// The short form's second byte: the column's remainder above this shift, the width below.
const SHORT_COLUMN_SHIFT: u8 = 4;
const SHORT_WIDTH_MASK: u8 = 0xf;
/// Kinds 10 to 12: one line, 0 to 2 below the previous entry's, and a column byte each for
/// start and end.
const ONE_LINE_0: u8 = 10;
const ONE_LINE_2: u8 = 12;
/// A column that fits the one-line form's byte.
const ONE_LINE_COLUMN_LIMIT: i32 = 128;
const NO_COLUMNS: u8 = 13;
const LONG: u8 = 14;
const NONE: u8 = 15;

// Numbers in the table are varints of six-bit chunks, least significant first, each with a
// bit that says another follows; a signed one keeps its sign in the lowest bit.
const VARINT_CHUNK_BITS: u32 = 6;
const VARINT_VALUE_MASK: u8 = 0x3f;
const VARINT_MORE: u8 = 0x40;
const VARINT_MAX_SHIFT: u32 = 30;
/// The lowest bit of a signed varint, set when it is negative; the magnitude is above it.
const VARINT_NEGATIVE: u32 = 1;
/// How many low bits of a signed varint the sign takes.
const VARINT_SIGN_BITS: u32 = 1;

/// Reads a line table byte by byte.
struct Reader<'a> {
    table: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self, what: &'static str) -> Result<u8, BytecodeError> {
        let byte = *self
            .table
            .get(self.pos)
            .ok_or(BytecodeError::BadLineTable(what))?;
        self.pos += 1;
        Ok(byte)
    }

    fn varint(&mut self) -> Result<u32, BytecodeError> {
        let mut value = 0u32;
        let mut shift = 0;
        loop {
            let byte = self.byte("truncated varint")?;
            value |= u32::from(byte & VARINT_VALUE_MASK) << shift;
            if byte & VARINT_MORE == 0 {
                return Ok(value);
            }
            shift += VARINT_CHUNK_BITS;
            if shift > VARINT_MAX_SHIFT {
                return Err(BytecodeError::BadLineTable("varint too long"));
            }
        }
    }

    fn signed_varint(&mut self) -> Result<i32, BytecodeError> {
        let value = self.varint()?;
        let magnitude = (value >> VARINT_SIGN_BITS) as i32;
        Ok(if value & VARINT_NEGATIVE != 0 {
            -magnitude
        } else {
            magnitude
        })
    }

    /// The entry of kind `kind`, after a header; `line` is the previous entry's line and
    /// becomes this one's.
    fn entry(&mut self, kind: u8, line: &mut i32) -> Result<LineEntry, BytecodeError> {
        Ok(match kind {
            0..=SHORT_LAST => {
                let byte = self.byte("short entry")?;
                let col =
                    i32::from(kind) * SHORT_COLUMN_STEP + i32::from(byte >> SHORT_COLUMN_SHIFT);
                LineEntry {
                    line: *line,
                    end_line: *line,
                    col,
                    end_col: col + i32::from(byte & SHORT_WIDTH_MASK),
                }
            }
            ONE_LINE_0..=ONE_LINE_2 => {
                *line += i32::from(kind - ONE_LINE_0);
                let col = i32::from(self.byte("one-line entry")?);
                let end_col = i32::from(self.byte("one-line entry")?);
                LineEntry {
                    line: *line,
                    end_line: *line,
                    col,
                    end_col,
                }
            }
            NO_COLUMNS => {
                *line += self.signed_varint()?;
                LineEntry::line_only(*line)
            }
            LONG => {
                *line += self.signed_varint()?;
                let end_line = *line + self.varint()? as i32;
                let col = self.varint()? as i32 - 1;
                let end_col = self.varint()? as i32 - 1;
                LineEntry {
                    line: *line,
                    end_line,
                    col,
                    end_col,
                }
            }
            _ => LineEntry::NONE,
        })
    }
}

/// One line-table entry per code unit, and whether the table has columns.
pub(super) fn decode_line_table(
    table: &[u8],
    first_line: i32,
    units: usize,
) -> Result<(Vec<LineEntry>, bool), BytecodeError> {
    let mut entries = Vec::with_capacity(units);
    let mut columns = true;
    let mut line = first_line;
    let mut reader = Reader { table, pos: 0 };
    while entries.len() < units {
        let header = reader.byte("fewer entries than code units")?;
        if header & START_BIT == 0 {
            return Err(BytecodeError::BadLineTable("entry without a header bit"));
        }
        let kind = (header >> KIND_SHIFT) & KIND_MASK;
        let length = usize::from(header & LENGTH_MASK) + 1;
        columns &= kind != NO_COLUMNS;
        let entry = reader.entry(kind, &mut line)?;
        entries.extend(std::iter::repeat_n(entry, length));
    }
    if entries.len() != units || reader.pos != table.len() {
        return Err(BytecodeError::BadLineTable("more entries than code units"));
    }
    Ok((entries, columns))
}

/// The line table for one entry per code unit, encoded exactly as RustPython's code
/// generator encodes it.
pub(super) fn encode_line_table(
    entries: &[LineEntry],
    first_line: i32,
    columns: bool,
) -> Box<[u8]> {
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
            let length = run.min(MAX_RUN);
            run -= length;
            i += length;
            if entry.line == -1 {
                table.push(header(NONE, length));
                continue;
            }
            let delta = entry.line - previous;
            previous = entry.line;
            encode_entry(&mut table, entry, length, delta, columns);
        }
    }
    table.into_boxed_slice()
}

/// The header byte of an entry of `kind` that covers `length` code units.
fn header(kind: u8, length: usize) -> u8 {
    START_BIT | (kind << KIND_SHIFT) | (length - 1) as u8
}

/// Appends the entry for `length` code units at `entry`, `delta` lines below the previous
/// entry, in the shortest form RustPython would choose.
fn encode_entry(table: &mut Vec<u8>, entry: LineEntry, length: usize, delta: i32, columns: bool) {
    let LineEntry {
        end_line,
        col,
        end_col,
        ..
    } = entry;
    let end_delta = end_line - entry.line;
    let width = end_col - col;
    if !columns {
        table.push(header(NO_COLUMNS, length));
        write_signed_varint(table, delta);
    } else if delta == 0
        && end_delta == 0
        && col < i32::from(SHORT_LAST + 1) * SHORT_COLUMN_STEP
        && width < SHORT_WIDTH_LIMIT
        && end_col >= col
    {
        let kind = (col / SHORT_COLUMN_STEP).min(i32::from(SHORT_LAST)) as u8;
        table.push(header(kind, length));
        let remainder = (col % SHORT_COLUMN_STEP) as u8;
        table.push((remainder << SHORT_COLUMN_SHIFT) | (width as u8 & SHORT_WIDTH_MASK));
    } else if (0..=i32::from(ONE_LINE_2 - ONE_LINE_0)).contains(&delta)
        && end_delta == 0
        && col < ONE_LINE_COLUMN_LIMIT
        && end_col < ONE_LINE_COLUMN_LIMIT
    {
        table.push(header(ONE_LINE_0 + delta as u8, length));
        table.push(col as u8);
        table.push(end_col as u8);
    } else {
        table.push(header(LONG, length));
        write_signed_varint(table, delta);
        write_varint(table, end_delta as u32);
        // Columns are stored one higher, so that -1 (none) is 0.
        write_varint(table, (col + 1) as u32);
        write_varint(table, (end_col + 1) as u32);
    }
}
