//! An `else` clause that is the statements after its statement, written so
//! ([`Shape::Unelse`]), where a goto enters it.
//!
//! ```text
//! if skip:                       if skip:
//!     goto .drained                  goto .drained
//! while n > 0:                   while n > 0:
//!     n -= 1                         n -= 1
//! else:
//!     label .drained             label .drained
//!     steps += 100               steps += 100
//! ```
//!
//! A loop with no `break` of its own runs its `else` whenever it ends without leaving, and
//! so do the statements after it; a `try` (with no `finally`) whose every handler ends with a
//! goto, `return`, `raise`, `break` or `continue` runs its `else` whenever its body ends,
//! and so do the statements after it, which its handlers do not catch either. A goto that
//! leaves the statement skips both. So the `else:` line is left empty and the clause's lines
//! lose one level, where the clause starts with a label (which a goto from outside enters):
//! the passes after this one take the label where it now stands, after the statement (the
//! skip `if not skip:` above). Its lines keep their places.

use super::*;

impl Finder<'_> {
    /// The `else` clauses of one list's statements that start with a label and are the
    /// statements after them ([`Shape::Unelse`]).
    pub(super) fn unelses(&mut self, list: &[Stmt]) {
        for stmt in list {
            let orelse = match stmt {
                Stmt::For(ast::StmtFor { body, orelse, .. })
                | Stmt::While(ast::StmtWhile { body, orelse, .. })
                    if !breaks(body) =>
                {
                    orelse
                }
                Stmt::Try(attempt)
                    if !attempt.is_star
                        && attempt.finalbody.is_empty()
                        && !attempt.handlers.is_empty()
                        && attempt.handlers.iter().all(|handler| {
                            let ast::ExceptHandler::ExceptHandler(handler) = handler;
                            handler
                                .body
                                .last()
                                .is_some_and(|last| self.never_falls(last))
                        }) =>
                {
                    &attempt.orelse
                }
                _ => continue,
            };
            let (Some(first), Some(last)) = (orelse.first(), orelse.last()) else {
                continue;
            };
            // Not inside a clause this pass already moves (its lines would lose two levels).
            let inside = (self.shifted.iter()).any(|moved| moved.contains(stmt.start()));
            if inside || !self.markers.labels.contains_key(&first.start()) {
                continue;
            }
            if let Some(edits) = self.unelse_edits(stmt, first, last) {
                self.shifted.push(TextRange::new(first.start(), last.end()));
                self.skips.push(Skip {
                    edits,
                    skipped: None,
                    label: None,
                    dead: None,
                    becomes: None,
                });
            }
        }
    }

    /// The edits that empty the `else:` line before `first` and take one level from the
    /// lines from `first` to `last` (the clause of `stmt`); `None` where the text does not
    /// allow it: a header with more than `else:` on its line, or a line of the clause (not
    /// a comment) less deep than its first.
    fn unelse_edits(
        &self,
        stmt: &Stmt,
        first: &Stmt,
        last: &Stmt,
    ) -> Option<Vec<(TextRange, String)>> {
        let (lines, text) = (self.lines, self.text);
        let (from, to) = (lines.line(first.start()), lines.line(last.end()));
        let header = from.checked_sub(1)?;
        // The text of line `at`, without its newline (the last line may have none).
        let line = |at: usize| {
            let end = (lines.starts.get(at + 1)).map_or(text.len(), |&next| usize::from(next) - 1);
            &text[usize::from(lines.starts[at])..end]
        };
        let outer = line(header).len() - line(header).trim_start().len();
        let inner = usize::from(first.start() - lines.starts[from]);
        let clear = line(header).trim() == "else:"
            && inner > outer
            && !lines.tabbed(stmt.start(), last.end())
            && !lines.inside[from];
        if !clear {
            return None;
        }
        let empty = TextRange::new(
            lines.starts[header],
            lines.starts[header + 1] - TextSize::from(1),
        );
        let mut edits = vec![(empty, String::new())];
        let cut = TextSize::try_from(inner - outer).ok()?;
        for at in from..=to {
            let content = line(at);
            if lines.inside[at] || content.trim().is_empty() {
                continue;
            }
            let deep = content.len() - content.trim_start().len() >= inner;
            if !deep && !content.trim_start().starts_with('#') {
                return None;
            }
            if deep {
                edits.push((TextRange::at(lines.starts[at], cut), String::new()));
            }
        }
        Some(edits)
    }
}
