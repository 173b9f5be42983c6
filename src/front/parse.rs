//! Parsing: source text to the AST, with the parser RustPython itself uses.
//!
//! gotopy parses a module once, with `rustpython_compiler::parser` (ruff's parser as
//! RustPython pins it), so that what gotopy accepts is exactly what RustPython compiles.
//! A syntax error becomes a [`Code::SyntaxError`] diagnostic; this module knows nothing of
//! markers.
//!
//! Architecture Invariant: this is the one place that calls the parser, so a module is
//! parsed once (`tests/tidy.rs`). (The search function a computed goto may call is
//! gotopy's own text, which RustPython compiles whole: `rustpython/lower/levels.rs`.)

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::ModModule;
use rustpython_compiler::ast::token::{TokenKind, Tokens};
use rustpython_compiler::parser::{self, Mode, ParseOptions, Parsed};

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::source::Source;

/// Parses a whole module, or says where and why it is not Python.
///
/// Nesting beyond the bounds of [`depth`](crate::front::depth) is a syntax error too (CPython's
/// tokenizer's, found before the parser runs, and gotopy's own of the tree); the caller runs
/// on [`depth::on_deep_stack`](crate::front::depth).
pub fn parse(source: &Source) -> Result<Parsed<ModModule>, Diagnostic> {
    let deepest = crate::front::depth::reach(source)?;
    let parsed = parse_unlimited(source.text());
    let Some(error) = parsed.errors().first() else {
        crate::front::depth::too_deep(parsed.syntax(), deepest)?;
        return Ok(parsed);
    };
    let message = lowercase_first(&error.error.to_string());
    // Like CPython, blame a bracket left open on an earlier line rather than the place where
    // the parser, reading on inside it, finally gave up.
    let line = |offset: TextSize| source.location(offset).line;
    if let Some((bracket, at)) = unclosed_bracket(parsed.tokens(), error.location.start())
        && line(at) < line(error.location.start())
    {
        return Err(Diagnostic::new(
            Code::SyntaxError,
            TextRange::at(at, TextSize::from(1)),
            format!("syntax error: `{bracket}` was never closed"),
        )
        .label("opened here")
        .related(
            error.location,
            format!("the parser stopped here: {message}"),
        ));
    }
    Err(Diagnostic::new(
        Code::SyntaxError,
        error.location,
        format!("syntax error: {message}"),
    ))
}

/// `text` parsed as a module whatever its errors and however deeply it nests: the caller
/// reads [`Parsed::errors`], and runs on a stack for the depth (`gotopy translate`'s
/// self-check, on output that may break CPython's limits).
pub(crate) fn parse_unlimited(text: &str) -> Parsed<ModModule> {
    parser::parse_unchecked(text, ParseOptions::from(Mode::Module))
        .try_into_module()
        .expect("module mode parses to a module")
}

/// The innermost bracket still open at `before` that no later token closes.
fn unclosed_bracket(tokens: &Tokens, before: TextSize) -> Option<(char, TextSize)> {
    let mut open: Vec<(char, TextSize)> = Vec::new();
    for token in tokens.iter() {
        let bracket = match token.kind() {
            TokenKind::Lpar => '(',
            TokenKind::Lsqb => '[',
            TokenKind::Lbrace => '{',
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                open.pop();
                continue;
            }
            _ => continue,
        };
        open.push((bracket, token.start()));
    }
    open.into_iter().rev().find(|&(_, at)| at < before)
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
