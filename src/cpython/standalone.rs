//! What a standalone `.pyc` file leaves out (`python -m gotopy compile`, `gotopy compile
//! --python`): a program compiled so runs where gotopy is not installed, so the statements
//! that import `goto` or `gotopy` or call `gotopy.install()` go, at any depth, and so do
//! the opt-in decorators of the functions the plan rewrites (their code has real jumps
//! already). Part of the plan, found by position as the plan's other edits are
//! (`gotopy._prepare`); whatever still names what those imports bound is refused after
//! the compile (`markers::still_needed`).

use std::collections::BTreeSet;

use ruff_text_size::{Ranged, TextSize};
use rustpython_compiler::ast::visitor::{self, Visitor};
use rustpython_compiler::ast::{Expr, Stmt};
use serde::Serialize;

use crate::front::scan::{is_goto_decorator, is_install_call, marker_import_names};

/// The edits of a standalone file, in CPython's positions (one-based lines, byte columns).
#[derive(Debug, Default, Serialize)]
pub struct Standalone {
    /// Where each statement to leave out starts: the imports of `goto` and `gotopy`, and
    /// the calls of `gotopy.install()`.
    pub statements: Vec<(i32, i32)>,
    /// The opt-in decorators to leave out, each as the line of its function's `def` and
    /// where the decorator's expression starts.
    pub decorators: Vec<(i32, i32, i32)>,
    /// The names those imports bind, sorted.
    pub names: Vec<String>,
}

/// The standalone edits of the module `body`, whose rewritten functions' names start at
/// `rewritten` (sorted); `at` gives CPython's line and column of an offset.
pub(crate) fn standalone(
    body: &[Stmt],
    at: &dyn Fn(TextSize) -> (i32, i32),
    rewritten: &[TextSize],
) -> Standalone {
    struct Finder<'p> {
        at: &'p dyn Fn(TextSize) -> (i32, i32),
        rewritten: &'p [TextSize],
        found: Standalone,
        names: BTreeSet<String>,
    }
    impl<'a> Visitor<'a> for Finder<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Some(names) = marker_import_names(stmt) {
                self.names.extend(names);
                self.found.statements.push((self.at)(stmt.start()));
            } else if is_install_call(stmt) {
                self.found.statements.push((self.at)(stmt.start()));
            }
            if let Stmt::FunctionDef(def) = stmt
                && self.rewritten.binary_search(&def.name.start()).is_ok()
            {
                let line = (self.at)(def.name.start()).0;
                for decorator in &def.decorator_list {
                    if is_goto_decorator(&decorator.expression) {
                        let (at, column) = (self.at)(decorator.expression.start());
                        self.found.decorators.push((line, at, column));
                    }
                }
            }
            visitor::walk_stmt(self, stmt);
        }

        /// No statement is inside an expression.
        fn visit_expr(&mut self, _: &'a Expr) {}
    }
    let mut finder = Finder {
        at,
        rewritten,
        found: Standalone::default(),
        names: BTreeSet::new(),
    };
    finder.visit_body(body);
    finder.found.names = finder.names.into_iter().collect();
    finder.found
}
