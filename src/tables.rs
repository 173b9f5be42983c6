//! The two tables of a code object whose byte format CPython 3.11 to 3.15 and RustPython 0.5
//! share: the location table (`co_linetable`, `Objects/locations.md`) and the exception
//! table (`co_exceptiontable`, `Objects/exception_handling_notes.txt`). Both backends decode
//! and encode them here, and only here.
//!
//! It knows code units, positions and offset ranges: nothing of instructions, labels, jumps
//! or which interpreter wrote the table. Decoding never trusts its input: a table that ends
//! inside an entry, a number that overflows, or a position no code object can have is an
//! error, never a panic or a wrapped value.

/// A source position as `co_positions()` gives it: `(line, end_line, column, end_column)`,
/// lines one-based, columns zero-based in UTF-8 bytes, `-1` where there is none.
pub type Position = [i32; 4];

/// The position of code that has none (`None` in `co_positions()`).
pub const NO_POSITION: Position = [-1; 4];

/// Why a table could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TableError(pub &'static str);

// A location entry starts with a header byte `1kkkklll`: the start bit, the kind, and the
// number of code units it covers, minus one.
const START: u8 = 0x80;
/// The most code units one entry covers.
const MAX_RUN: u32 = 8;
// Kinds 0 to 9 are the short form: the line of the entry before, a column below 80 whose
// eighth is the kind, and a byte with the column's remainder (high nibble) and the width
// (low nibble). Kinds 10 to 12: one line, 0 to 2 below the one before, and a byte each for
// the start and end columns. 13: a line and no columns. 14: everything, in varints. 15: no
// position.
const SHORT_LAST: u8 = 9;
const ONE_LINE: u8 = 10;
const NO_COLUMNS: u8 = 13;
const LONG: u8 = 14;
const NONE: u8 = 15;

/// Reads the varints of the two tables: six bits a byte, `0x40` when another byte follows.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    fn byte(&mut self, what: &'static str) -> Result<u8, TableError> {
        let byte = *self.data.get(self.at).ok_or(TableError(what))?;
        self.at += 1;
        Ok(byte)
    }

    /// The exception table's: most significant group first.
    fn big_endian(&mut self) -> Result<u64, TableError> {
        const WHAT: &str = "the exception table ends inside an entry";
        let mut byte = self.byte(WHAT)?;
        let mut value = u64::from(byte & 0x3f);
        while byte & 0x40 != 0 {
            byte = self.byte(WHAT)?;
            if value >> 32 != 0 {
                return Err(TableError(
                    "an exception table entry holds a number too large",
                ));
            }
            value = value << 6 | u64::from(byte & 0x3f);
        }
        Ok(value)
    }

    /// The location table's: least significant group first.
    fn little_endian(&mut self) -> Result<i64, TableError> {
        const WHAT: &str = "the location table ends inside an entry";
        let mut byte = self.byte(WHAT)?;
        let mut value = i64::from(byte & 0x3f);
        let mut shift = 0;
        while byte & 0x40 != 0 {
            byte = self.byte(WHAT)?;
            shift += 6;
            if shift > 30 {
                return Err(TableError(
                    "a location table entry holds a number too large",
                ));
            }
            value |= i64::from(byte & 0x3f) << shift;
        }
        Ok(value)
    }

    fn signed(&mut self) -> Result<i64, TableError> {
        let value = self.little_endian()?;
        Ok(if value & 1 == 1 {
            -(value >> 1)
        } else {
            value >> 1
        })
    }
}

/// The position of each of `units` code units, as `co_positions()` gives them; `first_line`
/// is `co_firstlineno`, which the first entry's line is relative to.
pub fn decode_locations(
    table: &[u8],
    first_line: i32,
    units: usize,
) -> Result<Vec<Position>, TableError> {
    let mut positions = Vec::with_capacity(units);
    let mut read = Reader { data: table, at: 0 };
    let mut line = i64::from(first_line);
    // A line or column that `co_positions()` can give: 0 to `i32::MAX`.
    let narrow = |value: i64| {
        i32::try_from(value)
            .ok()
            .filter(|&value| value >= 0)
            .ok_or(TableError("a position out of range"))
    };
    // A column of the long form: 0 for none, else one more than the column.
    let column = |read: &mut Reader| match read.little_endian()? {
        0 => Ok(-1),
        value => narrow(value - 1),
    };
    while !read.done() && positions.len() < units {
        let head = read.byte("the location table ends inside an entry")?;
        if head & START == 0 {
            return Err(TableError("the location table is out of step"));
        }
        let kind = (head >> 3) & 15;
        let size = usize::from(head & 7) + 1;
        let position = match kind {
            LONG => {
                line = line.saturating_add(read.signed()?);
                let start_line = narrow(line)?;
                // As CPython reads it: an unsigned 32-bit count of lines, added with
                // wrap-around, so that the two's complement of a count is a line before.
                // RustPython's code generator writes such ends.
                let lines = read.little_endian()? as u32;
                let end_line = (start_line as u32).wrapping_add(lines) as i32;
                let start = column(&mut read)?;
                let end = column(&mut read)?;
                [start_line, narrow(i64::from(end_line))?, start, end]
            }
            NO_COLUMNS => {
                line = line.saturating_add(read.signed()?);
                [narrow(line)?, narrow(line)?, -1, -1]
            }
            ONE_LINE..NO_COLUMNS => {
                line = line.saturating_add(i64::from(kind - ONE_LINE));
                let column = i32::from(read.byte("the location table ends inside an entry")?);
                let end = i32::from(read.byte("the location table ends inside an entry")?);
                [narrow(line)?, narrow(line)?, column, end]
            }
            0..=SHORT_LAST => {
                let second = read.byte("the location table ends inside an entry")?;
                let column = i32::from(kind) << 3 | i32::from(second >> 4);
                let end = column + i32::from(second & 15);
                [narrow(line)?, narrow(line)?, column, end]
            }
            _ => NO_POSITION,
        };
        positions.extend(std::iter::repeat_n(position, size));
    }
    if positions.len() < units {
        return Err(TableError("the location table is shorter than the code"));
    }
    positions.truncate(units);
    Ok(positions)
}

/// The location table of code whose positions come in `runs` (a position and how many code
/// units carry it), as CPython's assembler writes it: each run in entries of at most 8
/// units, each entry in the shortest form that holds its position, lines relative to the
/// entry before, the first to `first_line`. Which units form a run is the caller's: CPython
/// 3.11 writes one run per instruction, 3.12 and later and RustPython one per stretch of
/// units at one position.
pub fn encode_locations(
    runs: impl IntoIterator<Item = (Position, u32)>,
    first_line: i32,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut line = first_line;
    for (position, mut units) in runs {
        while units > 0 {
            let size = units.min(MAX_RUN);
            units -= size;
            line = location_entry(&mut out, position, size, line);
        }
    }
    out
}

/// Writes one location entry of `size` units; returns the line the next one is relative to.
fn location_entry(out: &mut Vec<u8>, position: Position, size: u32, line: i32) -> i32 {
    let [start, end_line, column, end_column] = position;
    let head = |kind: u8| START | kind << 3 | (size - 1) as u8;
    if start < 0 {
        out.push(head(NONE));
        return line;
    }
    let delta = start - line;
    if column < 0 || end_column < 0 {
        if end_line == start || end_line < 0 {
            out.push(head(NO_COLUMNS));
            write_signed(out, delta);
            return start;
        }
    } else if end_line == start {
        let width = end_column - column;
        if delta == 0 && column < 80 && (0..16).contains(&width) {
            out.push(head((column / 8) as u8));
            out.push(((column % 8) as u8) << 4 | width as u8);
            return start;
        }
        if (0..3).contains(&delta) && column < 128 && end_column < 128 {
            out.push(head(ONE_LINE + delta as u8));
            out.extend([column as u8, end_column as u8]);
            return start;
        }
    }
    let end_line = if end_line < 0 { start } else { end_line };
    // A position that ends before it starts, as RustPython writes some, is a count of lines
    // in two's complement: what CPython's reader (and `decode_locations`) adds back.
    let lines = end_line.wrapping_sub(start) as u32;
    out.push(head(LONG));
    write_signed(out, delta);
    write_little_endian(out, lines);
    write_little_endian(out, (column + 1) as u32);
    write_little_endian(out, (end_column + 1) as u32);
    start
}

fn write_little_endian(out: &mut Vec<u8>, mut value: u32) {
    while value >= 64 {
        out.push(0x40 | (value & 0x3f) as u8);
        value >>= 6;
    }
    out.push(value as u8);
}

fn write_signed(out: &mut Vec<u8>, value: i32) {
    let magnitude = value.unsigned_abs();
    write_little_endian(out, magnitude << 1 | u32::from(value < 0));
}

/// One entry of an exception table: the code units `start..end` it covers, where its
/// handler starts, the stack depth it unwinds to, and whether it pushes the offset of the
/// raising instruction (`lasti`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExceptionEntry {
    /// The first code unit covered.
    pub start: u32,
    /// The code unit after the last one covered.
    pub end: u32,
    /// The code unit where the handler starts.
    pub target: u32,
    /// The stack depth the handler unwinds to.
    pub depth: u32,
    /// Whether the handler also receives the offset of the raising instruction.
    pub lasti: bool,
}

/// The entries of an exception table, in order.
pub fn decode_exceptions(table: &[u8]) -> Result<Vec<ExceptionEntry>, TableError> {
    let mut read = Reader { data: table, at: 0 };
    let mut entries = Vec::new();
    let narrow = |value: u64| {
        u32::try_from(value)
            .map_err(|_| TableError("an exception table entry holds a number too large"))
    };
    while !read.done() {
        if table[read.at] & START == 0 {
            return Err(TableError("the exception table is out of step"));
        }
        let start = narrow(read.big_endian()?)?;
        let length = narrow(read.big_endian()?)?;
        let target = narrow(read.big_endian()?)?;
        let packed = narrow(read.big_endian()?)?;
        entries.push(ExceptionEntry {
            start,
            end: start.saturating_add(length),
            target,
            depth: packed >> 1,
            lasti: packed & 1 == 1,
        });
    }
    Ok(entries)
}

/// The exception table of `entries`, in their order.
pub fn encode_exceptions(entries: &[ExceptionEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        write_big_endian(&mut out, entry.start, START);
        write_big_endian(&mut out, entry.end.saturating_sub(entry.start), 0);
        write_big_endian(&mut out, entry.target, 0);
        write_big_endian(&mut out, entry.depth << 1 | u32::from(entry.lasti), 0);
    }
    out
}

fn write_big_endian(out: &mut Vec<u8>, value: u32, first: u8) {
    let mut shift = 0;
    while shift + 6 < 32 && value >> (shift + 6) != 0 {
        shift += 6;
    }
    let mut flag = first;
    loop {
        let more = if shift > 0 { 0x40 } else { 0 };
        out.push(((value >> shift) & 0x3f) as u8 | more | flag);
        flag = 0;
        if shift == 0 {
            break;
        }
        shift -= 6;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_location_entry_decodes_to_what_was_encoded() {
        let runs = [
            ([3, 3, 4, 9], 2),    // short form
            ([4, 4, 90, 100], 1), // one line, one below
            ([4, 6, 0, 3], 9),    // long form over two entries
            (NO_POSITION, 1),     // none
            ([2, 2, -1, -1], 3),  // no columns, a line back
            ([200, 200, 130, 140], 1),
            ([20, 19, 4, 60], 2), // ends a line before it starts, as RustPython writes
        ];
        let table = encode_locations(runs, 1);
        let units: u32 = runs.iter().map(|(_, units)| units).sum();
        let positions = decode_locations(&table, 1, units as usize).unwrap();
        let expected: Vec<Position> = runs
            .iter()
            .flat_map(|&(position, units)| std::iter::repeat_n(position, units as usize))
            .collect();
        assert_eq!(positions, expected);
    }

    #[test]
    fn tables_that_no_compiler_wrote_are_errors() {
        assert!(decode_locations(&[], 1, 1).is_err());
        assert!(decode_locations(&[0x00], 1, 1).is_err());
        assert!(
            decode_locations(
                &[START | LONG << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f],
                1,
                1
            )
            .is_err()
        );
        // A line below zero.
        assert!(decode_locations(&[START | NO_COLUMNS << 3, 0x05], 1, 1).is_err());
        assert!(decode_exceptions(&[START | 0x40]).is_err());
        assert!(decode_exceptions(&[0x01, 0x01, 0x01, 0x01]).is_err());
        assert!(
            decode_exceptions(&[START | 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 1, 1, 1])
                .is_err()
        );
    }

    #[test]
    fn exception_entries_survive_a_round_trip() {
        let entries = [
            ExceptionEntry {
                start: 0,
                end: 4,
                target: 70,
                depth: 1,
                lasti: true,
            },
            ExceptionEntry {
                start: 4,
                end: 5000,
                target: 1 << 20,
                depth: 0,
                lasti: false,
            },
        ];
        assert_eq!(
            decode_exceptions(&encode_exceptions(&entries)).unwrap(),
            entries
        );
    }
}
