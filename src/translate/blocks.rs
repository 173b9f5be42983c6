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
        bodies(stmt, |inner, added| {
            walk(inner, added.map_or(0, |added| depth + added), worst);
        });
    }
}

/// Calls `each` with every statement list directly inside `stmt` and the blocks CPython
/// counts around it besides those around `stmt` (`None`: a function's or class's body, which
/// counts from none).
fn bodies<'a>(stmt: &'a Stmt, mut each: impl FnMut(&'a [Stmt], Option<usize>)) {
    match stmt {
        Stmt::FunctionDef(def) => each(&def.body, None),
        Stmt::ClassDef(class) => each(&class.body, None),
        Stmt::While(stmt) => {
            each(&stmt.body, Some(1));
            each(&stmt.orelse, Some(0));
        }
        Stmt::For(stmt) => {
            each(&stmt.body, Some(1));
            each(&stmt.orelse, Some(0));
        }
        Stmt::With(stmt) => each(&stmt.body, Some(stmt.items.len())),
        Stmt::If(stmt) => {
            each(&stmt.body, Some(0));
            for clause in &stmt.elif_else_clauses {
                each(&clause.body, Some(0));
            }
        }
        Stmt::Match(stmt) => {
            for case in &stmt.cases {
                each(&case.body, Some(0));
            }
        }
        Stmt::Try(stmt) => {
            let finally = usize::from(!stmt.finalbody.is_empty());
            let handled = usize::from(!stmt.handlers.is_empty());
            each(&stmt.body, Some(finally + handled));
            for handler in &stmt.handlers {
                let ExceptHandler::ExceptHandler(handler) = handler;
                each(&handler.body, Some(finally + 2));
            }
            each(&stmt.orelse, Some(finally));
            each(&stmt.finalbody, Some(finally));
        }
        _ => {}
    }
}

/// The `__qualname__` of the innermost function or class of `body` whose body holds
/// `offset` (`None`: the module's own body).
pub(super) fn qualname_at(body: &[Stmt], offset: TextSize) -> Option<String> {
    let mut qualname: Option<String> = None;
    let mut in_class = false;
    let mut list = body;
    while let Some(stmt) = list
        .iter()
        .find(|stmt| stmt.range().contains_inclusive(offset))
    {
        let mut inside = None;
        bodies(stmt, |inner, _| {
            if holds(inner, offset) {
                inside = Some(inner);
            }
        });
        let Some(inner) = inside else {
            break;
        };
        let (name, class) = match stmt {
            Stmt::FunctionDef(def) => (&def.name, false),
            Stmt::ClassDef(class) => (&class.name, true),
            _ => {
                list = inner;
                continue;
            }
        };
        qualname = Some(match qualname {
            None => name.id.to_string(),
            Some(outer) if in_class => format!("{outer}.{}", name.id),
            Some(outer) => format!("{outer}.<locals>.{}", name.id),
        });
        (list, in_class) = (inner, class);
    }
    qualname
}

/// Whether the statements `body` span `offset`.
fn holds(body: &[Stmt], offset: TextSize) -> bool {
    match (body.first(), body.last()) {
        (Some(first), Some(last)) => first.start() <= offset && offset <= last.end(),
        _ => false,
    }
}
