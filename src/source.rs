//! A Python source file as gotopy sees it: its display path, its text and a line index.
//!
//! This module turns byte offsets into the one-based line and character columns that
//! diagnostics show. It knows nothing of markers or rules, and it never touches the file
//! system: callers read the bytes and hand over the text.

use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;
use serde::Serialize;

/// One source text with the path it is reported under.
#[derive(Debug)]
pub struct Source {
    path: String,
    text: String,
    index: LineIndex,
}

/// A one-based line and a one-based column counted in characters, as rustc and ruff print them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl Source {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let index = LineIndex::from_source_text(&text);
        Self {
            path: path.into(),
            text,
            index,
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line and column of a byte offset; offsets past the end clamp to the end.
    pub fn location(&self, offset: TextSize) -> Location {
        let offset = offset.min(self.text_len());
        let at = self.index.line_column(offset, &self.text);
        Location {
            line: at.line.get(),
            column: at.column.get(),
        }
    }

    pub fn text_len(&self) -> TextSize {
        TextSize::of(self.text.as_str())
    }
}
