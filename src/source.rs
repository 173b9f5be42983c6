//! A Python source file as gotopy sees it: its display path, its text and a line index.
//!
//! This module turns byte offsets into the one-based line and character columns that
//! diagnostics show. It knows nothing of markers or rules, and it never touches the file
//! system: callers read the bytes and hand over the text.

use std::sync::OnceLock;

use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;
use serde::Serialize;

/// One source text with the path it is reported under.
#[derive(Debug)]
pub struct Source {
    path: String,
    text: String,
    /// Built on first use: a file without diagnostics never needs it.
    index: OnceLock<LineIndex>,
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
        }
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

    /// The length of the text in bytes.
    pub fn text_len(&self) -> TextSize {
        TextSize::of(self.text.as_str())
    }
}
