//! The RustPython 0.5 backend: its bytecode layer (`bytecode`), the shapes of RustPython's
//! output (`shapes`), the compile path's lowering (`compile`), the rewrite without source
//! (`rewrite`), and with the interpreter (feature `vm`) gotopy inside it (`embed`, with
//! its `goto` module) and what `gotopy run` does (`run`). The crate re-exports its public
//! modules at the top (`gotopy::compile`, `gotopy::bytecode`, ...), where embedders find
//! them.
//!
//! Architecture Invariant: it builds on the front end and the helpers both backends share
//! (`crate::plan`, ...), never on the CPython backend, `translate` or the server (the
//! layers of `tests/tidy.rs`).

pub mod bytecode;
pub mod compile;
#[cfg(feature = "vm")]
pub mod embed;
mod lower;
pub mod rewrite;
#[cfg(feature = "vm")]
pub mod run;
pub(crate) mod shapes;
