//! A Python source file as gotopy sees it: its display path, its text and a line index.
//!
//! This module decodes a file's bytes as CPython does (`encoding`) and turns byte offsets
//! into the one-based line and character columns that diagnostics show. It knows nothing
//! of markers or rules, and it never touches the file system: callers read the bytes and
//! hand them over, or the text.

mod encoding;

use std::ops::Range;
use std::sync::OnceLock;

use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::TextSize;
use serde::Serialize;

pub use encoding::{DecodeError, declared_encoding, decode};

/// One source text with the path it is reported under.
#[derive(Debug)]
pub struct Source {
    path: String,
    text: String,
    /// Built on first use: a file without diagnostics never needs it.
    index: OnceLock<LineIndex>,
    /// Where each `\n`-separated line starts, as annotate-snippets counts lines; built on
    /// first use, by the first snippet rendered.
    snippet_lines: OnceLock<Vec<usize>>,
    /// What [`depth::reach`](crate::front::depth) found, read once: every route asks before it
    /// parses, and again to choose a stack.
    pub(crate) depth: OnceLock<Result<usize, crate::Diagnostic>>,
}

/// A one-based line and a one-based column counted in characters, as rustc and ruff print them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The one-based line.
    pub line: usize,
    /// The one-based column, in characters.
    pub column: usize,
}

impl Source {
    /// A source with `text`, reported under `path`.
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            text: text.into(),
            index: OnceLock::new(),
            snippet_lines: OnceLock::new(),
            depth: OnceLock::new(),
        }
    }

    /// A source from a file's bytes, decoded as CPython decodes a module: a UTF-8 byte order
    /// mark, else a PEP 263 encoding declaration on line 1 or 2, else UTF-8 (see [`decode`]).
    pub fn from_bytes(path: impl Into<String>, bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes).map(|text| Self::new(path, text))
    }

    /// The path diagnostics report it under.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The source text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line and column of a byte offset; offsets past the end clamp to the end.
    pub fn location(&self, offset: TextSize) -> Location {
        let offset = offset.min(self.text_len());
        let index = self
            .index
            .get_or_init(|| LineIndex::from_source_text(&self.text));
        let at = index.line_column(offset, &self.text);
        Location {
            line: at.line.get(),
            column: at.column.get(),
        }
    }

    /// The text of the one-based `line`, without its line end; `None` past the last line.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let index = self
            .index
            .get_or_init(|| LineIndex::from_source_text(&self.text));
        let line = OneIndexed::new(line).filter(|line| line.get() <= index.line_count())?;
        let range = index.line_range(line, &self.text);
        let text = &self.text[range.start().to_usize()..range.end().to_usize()];
        Some(text.trim_end_matches(['\n', '\r']))
    }

    /// The length of the text in bytes.
    pub fn text_len(&self) -> TextSize {
        TextSize::of(self.text.as_str())
    }

    /// The whole lines around the byte offsets `low..=high` as annotate-snippets sees them
    /// (lines end at `\n` only; an offset at the end of the text belongs to the last line):
    /// the one-based number of the first of them and their byte range, line ends included.
    /// Rendering a snippet from this range instead of the whole text shows exactly the same
    /// thing, at a cost that does not grow with the file.
    pub(crate) fn snippet_lines(&self, low: usize, high: usize) -> (usize, Range<usize>) {
        let starts = self.snippet_lines.get_or_init(|| {
            let text = self.text.as_bytes();
            std::iter::once(0)
                .chain(
                    text.iter()
                        .enumerate()
                        .filter(|&(at, &byte)| byte == b'\n' && at + 1 < text.len())
                        .map(|(at, _)| at + 1),
                )
                .collect()
        });
        // `starts[0]` is 0, so every offset has a line.
        let line = |offset: usize| starts.partition_point(|&start| start <= offset) - 1;
        let (mut first, last) = (line(low), line(high));
        // annotate-snippets sizes the line-number gutter from `str::lines` over the text up
        // to the last place, which counts one line less when that text ends with a line
        // end; so places that all sit at the start of a line keep the line before them.
        if high == starts[first] && first > 0 {
            first -= 1;
        }
        let end = starts.get(last + 1).copied().unwrap_or(self.text.len());
        (first + 1, starts[first]..end)
    }
}
