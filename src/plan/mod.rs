//! What both backends plan alike, from the checked module and its syntax tree: the
//! checking before a compile ([`checked`]), the edits of the tree that keep every label
//! (`prepare`), which frames a goto leaves, the cases of a switch and the targets of a
//! computed goto (`cases`), and how a compile fails ([`CompileError`]). The RustPython
//! backend (`crate::rustpython`), the CPython one (`crate::cpython`) and `translate` build
//! on it.
//!
//! Architecture Invariant: like the other helpers both backends share, it imports only the
//! front end and those helpers, never a backend, `translate` or the server (the layers of
//! `tests/tidy.rs`).

use ruff_text_size::{TextRange, TextSize};
use rustpython_compiler::ast::ModModule;
use rustpython_compiler::parser::Parsed;

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::{MarkerId, Module, Options, Scope, ScopeId};
use crate::front::source::{Location, Source};

pub(crate) mod cases;
pub(crate) mod prepare;

/// Why a module could not be compiled.
///
/// Shown with `Display`, a rejection is its first error with its place and how many errors
/// follow; [`crate::front::diagnostic::render_text`] shows all of them in full.
///
/// ```
/// use gotopy::compile::compile_source;
/// use gotopy::{Options, Source};
///
/// let source = Source::new("demo.py", "@goto\ndef f():\n    goto .a\n    goto .b\n");
/// let Err(error) = compile_source(&source, Options::new()) else { panic!() };
/// assert_eq!(
///     error.to_string(),
///     "demo.py:3:11: error[G002]: unknown label `.a` (and 1 more error)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The checker, or the rewrite, found errors.
    #[error("{}", rejected_summary(path, *location, diagnostics))]
    #[non_exhaustive]
    Rejected {
        /// All the diagnostics, the warnings found on the way included.
        diagnostics: Vec<Diagnostic>,
        /// The path of the module, as its [`Source`] reports it.
        path: String,
        /// Where the first error starts.
        location: Location,
    },
    /// RustPython's code generator refused the module (for example `return` outside a
    /// function); the message is its own.
    #[error("{0}")]
    Codegen(String),
}

/// A rejection of `source` with these diagnostics, which hold at least one error.
pub(crate) fn rejected(diagnostics: Vec<Diagnostic>, source: &Source) -> CompileError {
    let first = diagnostics
        .iter()
        .find(|d| d.is_error())
        .or(diagnostics.first())
        .map_or(TextSize::default(), |d| d.range.start());
    CompileError::Rejected {
        path: source.path().to_owned(),
        location: source.location(first),
        diagnostics,
    }
}

/// `path:line:column: error[code]: message`, of the first error, and how many more follow.
fn rejected_summary(path: &str, location: Location, diagnostics: &[Diagnostic]) -> String {
    let mut errors = diagnostics.iter().filter(|d| d.is_error());
    let Some(first) = errors.next() else {
        return format!("{path}: rejected without an error");
    };
    let mut summary = format!(
        "{path}:{}:{}: error[{}]: {}",
        location.line,
        location.column,
        first.code.as_str(),
        first.message
    );
    match errors.count() {
        0 => {}
        1 => summary.push_str(" (and 1 more error)"),
        more => summary.push_str(&format!(" (and {more} more errors)")),
    }
    summary
}

/// A module that passed the checker: its tree and tokens, what `scan` found, the warnings, and the
/// scopes to rewrite (rewritten scopes that have markers).
pub(crate) struct Checked {
    pub(crate) parsed: Parsed<ModModule>,
    pub(crate) module: Module,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) rewritten: Vec<ScopeId>,
}

/// The one entry of every compile route (both backends, `translate`): on the deep stack
/// when the module nests deeply (`front::depth::on_deep_stack`), the module parsed,
/// scanned and checked ([`checked`]), then `then` with it.
pub(crate) fn on_checked<T: Send>(
    source: &Source,
    options: Options,
    then: impl FnOnce(Checked) -> Result<T, CompileError> + Send,
) -> Result<T, CompileError> {
    crate::front::depth::on_deep_stack(source, || then(checked(source, options)?))
}

/// Parses, scans and checks a module; its errors as a rejection.
pub(crate) fn checked(source: &Source, options: Options) -> Result<Checked, CompileError> {
    let crate::front::Front {
        parsed,
        module,
        diagnostics,
    } = crate::front::run(source, options).map_err(|e| rejected(vec![e], source))?;
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(rejected(diagnostics, source));
    }
    let rewritten: Vec<ScopeId> = (0..module.scopes.len())
        .map(ScopeId)
        .filter(|&id| {
            let scope = &module.scopes[id.0];
            scope.rewritten && !scope.markers.is_empty()
        })
        .collect();
    Ok(Checked {
        parsed,
        module,
        diagnostics,
        rewritten,
    })
}

thread_local! {
    static IN_CODEGEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is inside code whose panics gotopy catches and reports as errors of
/// the file: RustPython's code generator (which panics on some valid programs) or gotopy's
/// own rewrite. A panic hook can stay quiet about those.
///
/// Not API: public only for the `gotopy` binary's panic hook.
#[doc(hidden)]
pub fn in_codegen() -> bool {
    IN_CODEGEN.get()
}

/// Runs `f`, giving its panic message instead if it panics.
pub(crate) fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    IN_CODEGEN.set(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_CODEGEN.set(false);
    result.map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "no message".to_owned())
    })
}

/// A construct gotopy refuses by design: `why` says what it is, `instead` what to write.
pub(crate) fn refuse(scope: &Scope, marker: MarkerId, why: String, instead: &str) -> Diagnostic {
    Diagnostic::new(
        Code::CannotRewrite,
        scope.marker(marker).range,
        format!("cannot rewrite: {why}"),
    )
    .help(instead)
}

/// A failure inside gotopy at `range`: `what` did not hold.
pub(crate) fn lost_track(range: TextRange, what: &str) -> Diagnostic {
    Diagnostic::new(Code::Internal, range, format!("internal error: {what}")).help(REPORT)
}

pub(crate) use crate::front::diagnostic::REPORT;
