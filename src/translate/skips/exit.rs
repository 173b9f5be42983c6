//! A goto to a label that a `return` or `raise` follows, or that ends its function
//! ([`Shape::Exit`]): that statement, where the goto was, as a person copies an exit.
//!
//! ```text
//! if n < 0:                     if n < 0:
//!     goto .fail                    raise ValueError(n)
//! ...                           ...
//! label .fail
//! raise ValueError(n)           raise ValueError(n)
//! ```

use super::*;

impl Finder<'_> {
    /// The gotos to exits: every label (of a function outside any `try` or `with`, alone on
    /// its line) that a one-line `return` or `raise` follows, or that ends the function, and every goto to it
    /// outside any `try` or `with`, which becomes that statement.
    pub(super) fn exits(&mut self, body: &[Stmt]) {
        // Each list with whether a `try` or `with` holds it, and whether it is a function's.
        let mut work: Vec<(&[Stmt], bool, bool)> = vec![(body, false, false)];
        let mut exits: HashMap<(usize, &str), (TextRange, String, Option<TextRange>)> =
            HashMap::new();
        let mut gotos: Vec<(TextSize, TextRange)> = Vec::new();
        while let Some((list, held, function)) = work.pop() {
            for (at, stmt) in list.iter().enumerate() {
                // The label alone on its line, which goes with it.
                if let Some(name) = self.markers.labels.get(&stmt.start())
                    && !held
                    && self.lines.alone(self.text, stmt.range())
                    && let Some(exit) = self.exit_after(&list[at + 1..], function)
                {
                    let scope = self.markers.scope[&stmt.start()];
                    // After a statement that never falls through, only gotos reach it.
                    let unreached = at > 0 && jumps(&list[at - 1]);
                    let dead = list.get(at + 1).filter(|_| unreached).map(Ranged::range);
                    exits.insert((scope, name.as_str()), (stmt.range(), exit, dead));
                }
                if self.markers.gotos.contains_key(&stmt.start()) && !held {
                    gotos.push((stmt.start(), stmt.range()));
                }
                let (inner_held, inner_function) = match stmt {
                    Stmt::Try(_) | Stmt::With(_) => (true, false),
                    // A scope of its own: its gotos name its own labels.
                    Stmt::FunctionDef(_) => (false, true),
                    Stmt::ClassDef(_) => (false, false),
                    _ => (held, false),
                };
                work.extend(
                    child_lists(stmt)
                        .into_iter()
                        .map(|inner| (inner, inner_held, inner_function)),
                );
            }
        }
        for (start, goto) in gotos {
            let key = (
                self.markers.scope[&start],
                self.markers.gotos[&start].as_str(),
            );
            // One line for another, as deep: no indentation to keep.
            if let Some((label, exit, dead)) = exits.get(&key) {
                self.skips.push(Skip {
                    edits: vec![(goto, exit.clone())],
                    skipped: None,
                    label: Some(*label),
                    dead: *dead,
                    becomes: None,
                });
            }
        }
    }

    /// The statement a label followed by `rest` stands for, when it is an exit: a one-line
    /// `return` or `raise` alone on its line, or `return` where the label ends a function.
    fn exit_after(&self, rest: &[Stmt], function: bool) -> Option<String> {
        match rest.first() {
            None if function => Some("return".to_owned()),
            Some(exit @ (Stmt::Return(_) | Stmt::Raise(_)))
                if self.lines.alone(self.text, exit.range())
                    && self.lines.line(exit.start()) == self.lines.line(exit.end()) =>
            {
                Some(self.text[exit.range()].to_owned())
            }
            _ => None,
        }
    }
}
