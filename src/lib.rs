#![warn(missing_docs)]
//! gotopy gives Python `goto`, `label` and `switch` by rewriting compiled bytecode.
//!
//! This crate is the library behind the `gotopy` binary. It never reads files, prints or
//! exits the process; the binary does that. What it offers:
//!
//! - [`check_source`]: the diagnostics of a module (SPEC section 7), as `gotopy check`
//!   prints them ([`diagnostic::render_text`]) or as JSON.
//! - [`compile::compile_source`]: a module compiled by RustPython with every goto, label and
//!   switch of its rewritten scopes turned into real control flow; errors are typed
//!   ([`compile::CompileError`]) and carry the same diagnostics.
//! - [`rewrite::rewrite_code`]: the markers of a code object RustPython compiled without
//!   gotopy, rewritten in place (the run-time decorator).
//! - [`bytecode`]: the instruction-list layer, disassembly and control-flow graphs.
#![cfg_attr(
    feature = "vm",
    doc = "- [`embed`]: gotopy inside a RustPython interpreter: the `goto` module and an \
           import hook; [`run`]: what `gotopy run` does with them (feature `vm`)."
)]
#![cfg_attr(
    not(feature = "vm"),
    doc = "- `embed` and `run`: gotopy inside a RustPython interpreter (feature `vm`, off \
           in this build)."
)]
//!
//! # Features
//!
//! - `vm` (default): the embedded interpreter (`rustpython-vm`, `-stdlib`, `-pylib`), for
//!   `embed` and `run`.
//! - `cli` (default, implies `vm` and `shell`): the `gotopy` binary.
//! - `shell` (implied by `cli`): `shell`, the command line of the binary and of the Python
//!   package (`clap`, `rayon`, `indicatif`, `anstream`), and `inputs`, what it reads.
//! - `server` (implied by `shell`): `server`, the language server (`lsp-server`, `lsp-types`);
//!   it needs no interpreter, and the Python package's extension builds it too.
//!
//! Without them (`default-features = false`) the crate is the front end and the compile path:
//! parse, scan, check, diagnostics, RustPython's code generator and the rewrite, with the
//! parser and compiler crates as its only RustPython dependencies.
//!
//! Inside, a module goes parse → scan (scopes, frames, markers, label tables) → check
//! (rules) → compile (prepare the syntax tree, RustPython's code generator, rewrite).
//!
//! ```
//! use gotopy::{Options, Source, check_source};
//!
//! let source = Source::new("demo.py", "@goto\ndef f():\n    goto .missing\n");
//! let diagnostics = check_source(&source, Options::default());
//! assert_eq!(diagnostics[0].code.as_str(), "G002");
//! assert_eq!(diagnostics[0].message, "unknown label `.missing`");
//! ```

// The front end: parse, scan, check, diagnostics.
mod front;
// What both backends and `translate` plan alike, and the bytecode helpers both backends
// share.
mod copies;
mod dominators;
mod literal;
mod locals;
mod plan;
pub mod search;
#[doc(hidden)]
pub mod splice;
mod symbolic;
pub mod tables;
// The two backends, and goto-free Python.
pub mod cpython;
mod rustpython;
pub mod translate;
// The language server.
#[cfg(feature = "inputs")]
pub mod inputs;
#[cfg(feature = "server")]
pub mod server;
// The command line.
#[cfg(feature = "shell")]
pub mod shell;

pub use front::check_source;
pub use front::diagnostic::{self, Code, Diagnostic, Severity};
pub use front::scan::Options;
pub use front::source::{self, Source};
/// Byte offsets and ranges into a [`Source`]'s text, as [`Diagnostic`]s hold them.
pub use ruff_text_size::{TextRange, TextSize};

// The RustPython backend's modules, where embedders have always found them.
pub use rustpython::{bytecode, compile, rewrite};
#[cfg(feature = "vm")]
pub use rustpython::{embed, run};
