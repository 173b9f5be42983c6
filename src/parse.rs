//! Parsing: source text to the AST, with the parser RustPython itself uses.
//!
//! gotopy parses a module once, with `rustpython_compiler::parser` (ruff's parser as
//! RustPython pins it), so that what gotopy accepts is exactly what RustPython compiles.
//! A syntax error becomes a [`Code::SyntaxError`] diagnostic; this module knows nothing of
//! markers.

use rustpython_compiler::ast::ModModule;
use rustpython_compiler::parser::{self, Parsed};

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Source;

/// Parses a whole module, or says where and why it is not Python.
pub fn parse(source: &Source) -> Result<Parsed<ModModule>, Diagnostic> {
    parser::parse_module(source.text()).map_err(|error| {
        Diagnostic::new(
            Code::SyntaxError,
            error.location,
            format!(
                "syntax error: {}",
                lowercase_first(&error.error.to_string())
            ),
        )
    })
}

/// The parser's messages start with a capital; gotopy's are lowercase throughout.
fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) if !chars.as_str().starts_with(char::is_uppercase) => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => message.to_owned(),
    }
}
