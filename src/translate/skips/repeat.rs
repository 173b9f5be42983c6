//! A loop made of a label and a conditional goto back to it ([`Shape::Repeat`]): what a
//! BASIC or Fortran port's loop is when it tests at its end (`IF J < M THEN 20`).
//!
//! ```text
//! label .again             while True:
//! S                            S
//! if TEST:                     if not (TEST):
//!     goto .again                  break
//! ```
//!
//! The label's line becomes `while True:` (its comment kept), the goto `break`, and S and
//! the `if` go one level deeper; a goto to the label inside S, under `if`, `with` and `try`
//! statements only, is `continue`. Taken where no `break` or `continue` in S would be the new loop's, where
//! those gotos alone name the label, and where such loops of one list nest or follow each
//! other, never where they cross; a loop with such a `continue` is taken where no other
//! loop of the pass nests with it (the `continue` would be the innermost one's).

use super::*;

impl Finder<'_> {
    /// The repeats of one list ([`Shape::Repeat`]).
    pub(super) fn repeats(&mut self, list: &[Stmt]) {
        for (end, stmt) in list.iter().enumerate() {
            let Stmt::If(branch) = stmt else { continue };
            let ([goto], []) = (branch.body.as_slice(), branch.elif_else_clauses.as_slice()) else {
                continue;
            };
            let Some(name) = self.markers.gotos.get(&goto.start()) else {
                continue;
            };
            let named = |s: &Stmt| self.markers.labels.get(&s.start()) == Some(name);
            let Some(start) = list[..end].iter().rposition(named) else {
                continue;
            };
            let (label, body) = (&list[start], &list[start + 1..end]);
            let inner = self.gotos_leaving(body, name);
            let alone = |range: TextRange| self.lines.alone(self.text, range);
            let first = body.first().map_or(stmt.start(), Ranged::start);
            // Loops taken in this pass nest or are apart, never cross; and a `continue` binds
            // to the innermost loop around it, so none nests with one whose body holds a goto
            // that becomes `continue`.
            let region = TextRange::new(label.start(), stmt.end());
            let meets = (self.repeated.iter()).any(|&(other, continues)| {
                let nests = other.contains_range(region) || region.contains_range(other);
                let apart = other.end() <= region.start() || region.end() <= other.start();
                !apart && !nests || nests && (continues || !inner.is_empty())
            });
            let fits = self.markers.named.get(&label.start()) == Some(&(inner.len() + 1))
                && inner.iter().all(|&goto| alone(goto))
                && alone(label.range())
                && alone(stmt.range())
                && self.lines.line(label.end()) < self.lines.line(first)
                && !loop_exit(body)
                && !self.lines.tabbed(label.start(), stmt.end())
                && !meets;
            if !fits {
                continue;
            }
            self.repeated.push((region, !inner.is_empty()));
            let mut edits = vec![
                (branch.test.range(), self.negated(&branch.test)),
                (goto.range(), "break".to_owned()),
            ];
            edits.extend(inner.iter().map(|&goto| (goto, "continue".to_owned())));
            let after = self.lines.starts[self.lines.line(label.end()) + 1];
            let mut skipped = Some(TextRange::new(after, stmt.end()));
            // A skip per goto, so that the label goes with its last; the first carries the
            // edits.
            for _ in 0..=inner.len() {
                self.skips.push(Skip {
                    edits: std::mem::take(&mut edits),
                    skipped: skipped.take(),
                    label: label.range(),
                    dead: None,
                    becomes: Some("while True:"),
                });
            }
        }
    }
}
