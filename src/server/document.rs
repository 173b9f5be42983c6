//! An open document as the server holds it: its text, its version, and the conversion
//! between LSP positions (a line and a column counted in the negotiated encoding's code
//! units) and the byte offsets the front end's ranges use.

use lsp_types::{Position, PositionEncodingKind, Range, TextDocumentContentChangeEvent};
use ruff_text_size::{TextRange, TextSize};

/// How a position's column is counted: the client and server agree on one at initialization
/// (LSP 3.17 `positionEncoding`; UTF-16 unless both offer another).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// The first of the client's encodings the server prefers (UTF-8, then UTF-32, as the
    /// front end counts bytes and characters), else UTF-16, which every client speaks.
    pub(crate) fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        let offered = offered.unwrap_or_default();
        [Encoding::Utf8, Encoding::Utf32]
            .into_iter()
            .find(|encoding| offered.contains(&encoding.kind()))
            .unwrap_or(Encoding::Utf16)
    }

    pub(crate) fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// The text of one open document and where its lines start.
#[derive(Debug)]
pub(crate) struct Document {
    pub(crate) text: String,
    pub(crate) version: i32,
    /// The byte offset of each line's start. A line ends at `\n`, `\r\n` or `\r`, as LSP
    /// counts lines.
    starts: Vec<usize>,
}

impl Document {
    pub(crate) fn new(text: String, version: i32) -> Document {
        let starts = line_starts(&text);
        Document {
            text,
            version,
            starts,
        }
    }

    /// Applies one change of `textDocument/didChange`: the whole text when it has no range,
    /// else the text of that range replaced.
    pub(crate) fn apply(&mut self, change: TextDocumentContentChangeEvent, encoding: Encoding) {
        match change.range {
            Some(range) => {
                let range = self.range(range, encoding);
                self.text.replace_range(
                    usize::from(range.start())..usize::from(range.end()),
                    &change.text,
                );
            }
            None => self.text = change.text,
        }
        self.starts = line_starts(&self.text);
    }

    /// The byte offset of a position. A column past the end of its line is the line's end,
    /// and a line past the last is the end of the text, as LSP asks of servers.
    pub(crate) fn offset(&self, position: Position, encoding: Encoding) -> TextSize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return TextSize::of(self.text.as_str());
        };
        let line = &self.text[start..self.line_end(position.line as usize)];
        let mut units = 0;
        for (at, c) in line.char_indices() {
            if units >= position.character {
                return TextSize::new((start + at) as u32);
            }
            units += encoding.units(c);
        }
        TextSize::new((start + line.len()) as u32)
    }

    /// The position of a byte offset (clamped to the text, and to a character boundary).
    pub(crate) fn position(&self, offset: TextSize, encoding: Encoding) -> Position {
        let mut offset = usize::from(offset).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let character = self.text[self.starts[line]..offset]
            .chars()
            .map(|c| encoding.units(c))
            .sum();
        Position::new(line as u32, character)
    }

    pub(crate) fn range(&self, range: Range, encoding: Encoding) -> TextRange {
        let start = self.offset(range.start, encoding);
        let end = self.offset(range.end, encoding).max(start);
        TextRange::new(start, end)
    }

    pub(crate) fn lsp_range(&self, range: TextRange, encoding: Encoding) -> Range {
        Range::new(
            self.position(range.start(), encoding),
            self.position(range.end(), encoding),
        )
    }

    /// Where line `line` ends, its line break not included.
    fn line_end(&self, line: usize) -> usize {
        let start = self.starts[line];
        let next = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let text = &self.text[start..next];
        let text = text.strip_suffix('\n').unwrap_or(text);
        start + text.strip_suffix('\r').unwrap_or(text).len()
    }

    /// The byte range of the whole line `offset` is on, its line break included.
    pub(crate) fn whole_line(&self, offset: TextSize) -> TextRange {
        let line = self
            .starts
            .partition_point(|&start| start <= usize::from(offset))
            - 1;
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        TextRange::new(
            TextSize::new(self.starts[line] as u32),
            TextSize::new(end as u32),
        )
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                at += 1;
                starts.push(at + 1);
            }
            b'\n' | b'\r' => starts.push(at + 1),
            _ => {}
        }
        at += 1;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_the_negotiated_units() {
        // 'é' is 2 bytes and 1 UTF-16 unit; '𝄞' is 4 bytes and 2 UTF-16 units.
        let document = Document::new("a = 1\r\nx = 'é𝄞' ; y\rz\n".to_owned(), 0);
        let y = TextSize::new(document.text.find('y').unwrap() as u32);
        for (encoding, character) in [
            (Encoding::Utf8, 15),
            (Encoding::Utf16, 12),
            (Encoding::Utf32, 11),
        ] {
            let position = document.position(y, encoding);
            assert_eq!(position, Position::new(1, character), "{encoding:?}");
            assert_eq!(document.offset(position, encoding), y);
        }
        let z = document.offset(Position::new(2, 0), Encoding::Utf16);
        assert_eq!(&document.text[usize::from(z)..], "z\n");
        // Past the end of a line, and past the last line.
        let end_of_first = document.offset(Position::new(0, 99), Encoding::Utf16);
        assert_eq!(usize::from(end_of_first), 5);
        let past = document.offset(Position::new(9, 0), Encoding::Utf16);
        assert_eq!(usize::from(past), document.text.len());
    }

    #[test]
    fn incremental_changes_edit_the_text() {
        let mut document = Document::new("def f():\n    goto .a\n".to_owned(), 1);
        let change = |line, from, to, text: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(line, from),
                Position::new(line, to),
            )),
            range_length: None,
            text: text.to_owned(),
        };
        document.apply(change(1, 10, 11, "b\n    label .b"), Encoding::Utf16);
        assert_eq!(document.text, "def f():\n    goto .b\n    label .b\n");
        document.apply(change(3, 0, 0, "f()\n"), Encoding::Utf16);
        assert_eq!(document.text, "def f():\n    goto .b\n    label .b\nf()\n");
        assert_eq!(
            document.position(TextSize::new(34), Encoding::Utf16),
            Position::new(3, 0)
        );
    }

    #[test]
    fn encodings_are_negotiated() {
        use PositionEncodingKind as Kind;
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
        let offered = [Kind::UTF16, Kind::UTF32];
        assert_eq!(Encoding::negotiate(Some(&offered)), Encoding::Utf32);
        let offered = [Kind::UTF32, Kind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&offered)), Encoding::Utf8);
    }
}
