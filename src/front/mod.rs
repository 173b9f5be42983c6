//! The front end: a module's source to its tree, what `scan` finds in it (scopes, markers,
//! frames, label tables) and what `check` says of it, with the bounds on how deeply it may
//! nest. Both backends, `translate` and the language server start here.
//!
//! Architecture Invariant: the front end imports nothing of the crate outside this folder
//! (the planning, the backends, `translate`, the server and the shells are built on it, not
//! the other way round), and does no I/O: it reads no file and prints nothing. Both are held
//! by `tests/tidy.rs`.

pub(crate) mod check;
pub(crate) mod depth;
pub mod diagnostic;
pub(crate) mod parse;
pub(crate) mod scan;
pub mod source;

use diagnostic::Diagnostic;
use scan::Options;
use source::Source;

/// Parses, scans and checks one module: every diagnostic, in source order.
///
/// A syntax error is reported as a single [`Code::SyntaxError`](diagnostic::Code::SyntaxError)
/// diagnostic.
pub fn check_source(source: &Source, options: Options) -> Vec<Diagnostic> {
    depth::on_deep_stack(source, || {
        run(source, options).map_or_else(|syntax_error| vec![syntax_error], |f| f.diagnostics)
    })
}

/// A module through the front end: its tree and tokens, what `scan` found, and what
/// `check` says.
pub(crate) struct Front {
    pub(crate) parsed: rustpython_compiler::parser::Parsed<rustpython_compiler::ast::ModModule>,
    pub(crate) module: scan::Module,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Parses, scans and checks a module: the one composition of the front end's passes, under
/// every entry point ([`check_source`], both compile paths, `translate`). A syntax error is
/// the one diagnostic of a module that does not parse.
pub(crate) fn run(source: &Source, options: Options) -> Result<Front, Diagnostic> {
    let parsed = parse::parse(source)?;
    let module = scan::scan(parsed.syntax(), parsed.tokens(), source, options);
    let diagnostics = check::check(&module, source);
    Ok(Front {
        parsed,
        module,
        diagnostics,
    })
}
