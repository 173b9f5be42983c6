//! gotopy gives Python `goto`, `label` and `switch` by rewriting compiled bytecode.
//!
//! This crate is the library: it takes source text and returns diagnostics (and, in later
//! stages, rewritten code objects). It never reads files, prints or exits the process;
//! the `gotopy` binary does that. The pipeline reads off the module names:
//! [`parse`] → [`scan`] → [`check`] → [`diagnostic`].
//!
//! ```
//! use gotopy::{Options, Source, check_source};
//!
//! let source = Source::new("demo.py", "@goto\ndef f():\n    goto .missing\n");
//! let diagnostics = check_source(&source, Options::default());
//! assert_eq!(diagnostics[0].code.as_str(), "G002");
//! assert_eq!(diagnostics[0].message, "unknown label `.missing`");
//! ```

pub mod bytecode;
pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod parse;
pub mod run;
pub mod scan;
pub mod source;

pub use diagnostic::{Code, Diagnostic, Severity};
pub use scan::Options;
pub use source::Source;

/// Parses, scans and checks one module: every diagnostic, in source order.
///
/// A syntax error is reported as a single [`Code::SyntaxError`] diagnostic.
pub fn check_source(source: &Source, options: Options) -> Vec<Diagnostic> {
    match parse::parse(source) {
        Ok(parsed) => {
            let module = scan::scan(parsed.syntax(), parsed.tokens(), options);
            check::check(&module, source)
        }
        Err(syntax_error) => vec![syntax_error],
    }
}
