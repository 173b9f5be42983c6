//! A `try` whose handlers end with a goto past the statements after it ([`Shape::Handled`]):
//! what a person writes with the `try`'s `else:`.
//!
//! ```text
//! try:                           try:
//!     v = int(text)                  v = int(text)
//! except ValueError:             except ValueError:
//!     log.append(text)               log.append(text)
//!     goto .bad                  else:
//! S                                  S
//! label .bad
//! ```
//!
//! Falling off a handler leaves it as the goto does (its exception cleared, its `as` name
//! unbound: language reference, section 4) and goes past the `else:`, and S, which ran when
//! the body ended normally, runs there, out of the handlers' reach as before. The last
//! handler's goto, alone on its line, becomes the `else:`; a goto ending another handler
//! goes, its line left blank but for its comment (`pass` where it was the handler's only
//! statement, and `pass` after the header of a last handler that held only the goto). With
//! the label right after the `try`, no `else:` is needed and each goto goes so. Taken where
//! the `try` has no `except*`, no `else` and no `finally` (which would run before S rather
//! than after), every handler ends with a goto to the label or with another statement that
//! never falls through (a `return`, `raise`, `break`, `continue` or goto elsewhere), the last
//! with the goto, no other goto names the label, and S holds no label.

use super::*;

impl Finder<'_> {
    /// The `try` statements of one list whose handlers go to a label after them
    /// ([`Shape::Handled`]).
    pub(super) fn handled(&mut self, list: &[Stmt]) {
        let labels: HashMap<&str, usize> = (list.iter().enumerate())
            .filter_map(|(at, stmt)| Some((self.markers.labels.get(&stmt.start())?.as_str(), at)))
            .collect();
        for (at, stmt) in list.iter().enumerate() {
            let Stmt::Try(attempt) = stmt else { continue };
            let plain = !attempt.is_star
                && attempt.orelse.is_empty()
                && attempt.finalbody.is_empty()
                && !attempt.handlers.is_empty();
            if !plain {
                continue;
            }
            let bodies: Vec<(TextSize, &[Stmt])> = (attempt.handlers.iter())
                .map(|handler| {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    (handler.start(), handler.body.as_slice())
                })
                .collect();
            // The label the last handler's goto names, after the `try` in this list.
            let Some(name) = (bodies.last().and_then(|(_, body)| body.last()))
                .and_then(|last| self.markers.gotos.get(&last.start()))
            else {
                continue;
            };
            let Some(&end) = labels.get(name.as_str()).filter(|&&end| end > at) else {
                continue;
            };
            // Each handler's goto to the label, or `None` where it ends another way.
            let mut gotos = Vec::new();
            let mut ends = true;
            for &(header, body) in &bodies {
                let last = body.last().expect("a handler has a body");
                if self.markers.gotos.get(&last.start()) == Some(name) {
                    gotos.push((header, body.len() == 1, last.range()));
                } else {
                    ends &= self.never_falls(last);
                }
            }
            let (label, between) = (&list[end], &list[at + 1..end]);
            let alone = |range: TextRange| self.lines.alone(self.text, range);
            // The handlers' gotos alone name the label: where another one does, the
            // statements that hold them all are a block ([`Shape::Block`]).
            let fits = ends
                && self.markers.named.get(&label.start()) == Some(&gotos.len())
                && (gotos.iter()).all(|&(_, _, goto)| alone(goto))
                && alone(label.range())
                && !self.lines.tabbed(stmt.start(), label.end());
            if !fits {
                continue;
            }
            let Some(edits) = self.handled_edits(stmt, &gotos, between, label) else {
                continue;
            };
            let (edits, skipped) = edits;
            self.take_each(label, gotos.len(), edits, skipped, None);
        }
    }

    /// The edits that take the `gotos` (each with where its handler starts, and whether it is
    /// the handler's only statement) out of `attempt`, with `between` it and `label` its
    /// `else:`, and the lines that go one level deeper; `None` where the text does not allow
    /// them.
    #[allow(clippy::type_complexity)]
    fn handled_edits(
        &self,
        attempt: &Stmt,
        gotos: &[(TextSize, bool, TextRange)],
        between: &[Stmt],
        label: &Stmt,
    ) -> Option<(Vec<(TextRange, String)>, Option<TextRange>)> {
        let lines = self.lines;
        let mut edits = Vec::new();
        let last = gotos.len() - 1;
        let mut skipped = None;
        for (at, &(header, only, goto)) in gotos.iter().enumerate() {
            let line = lines.start(goto.start());
            if at == last && !between.is_empty() {
                let (first, end) = (between.first()?, between.last()?);
                let (from, to) = (lines.line(first.start()), lines.line(end.end()));
                let fits = lines.line(goto.end()) < from
                    && to < lines.line(label.start())
                    && !self
                        .markers
                        .labelled(TextRange::new(first.start(), end.end()));
                if !fits {
                    return None;
                }
                // The goto's line is the `else:`, as deep as the `try`.
                let indent = &self.text
                    [usize::from(lines.start(attempt.start()))..usize::from(attempt.start())];
                edits.push((TextRange::new(line, goto.end()), format!("{indent}else:")));
                if only {
                    // The handler's header, on the line before and with no comment, takes
                    // `pass`.
                    let start = lines.start(header);
                    let text = &self.text[usize::from(start)..usize::from(line)];
                    let colon = text.trim_end();
                    let fits = lines.line(header) + 1 == lines.line(goto.start())
                        && colon.ends_with(':')
                        && !colon.contains('#');
                    if !fits {
                        return None;
                    }
                    let colon = start + TextSize::of(colon);
                    edits.push((TextRange::empty(colon), " pass".to_owned()));
                }
                let after = lines.starts[lines.line(goto.end()) + 1];
                skipped = Some(TextRange::new(after, end.end()));
            } else if only {
                edits.push((goto, "pass".to_owned()));
            } else {
                // The line is left empty, or with the goto's comment where it stood.
                let rest = &self.text[usize::from(goto.end())..];
                let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                let range = if rest[blanks..].starts_with('#') {
                    TextRange::new(goto.start(), goto.end() + TextSize::try_from(blanks).ok()?)
                } else {
                    TextRange::new(line, goto.end())
                };
                edits.push((range, String::new()));
            }
        }
        Some((edits, skipped))
    }
}
