//! A goto out of a loop inside another, to the label right after the outer loop
//! ([`Shape::Escape`]): what a person writes with `for`/`else` (or `while`/`else`).
//!
//! ```text
//! for a in xs:                   for a in xs:
//!     for b in ys:                   for b in ys:
//!         if a + b == n:                 if a + b == n:
//!             goto .found                    break
//!     R                              else:
//! label .found                           R
//! (a blank line)                         continue
//!                                    break
//! ```
//!
//! The inner loop's `break` skips its `else`, and the `break` after it leaves the outer
//! loop; an inner loop that runs out runs R, the rest of the outer body, and `continue`s
//! (joined to R's last line, or `else: continue` with no R). The `else:` takes a line the
//! source did not have: the statements from there down to the first blank line after the
//! label move one line down, and that blank line goes (the label's line holds the `break`,
//! and its comment). Taken where the inner loop is a statement of the outer loop's body with
//! no `else` and no `break` of its own, the outer loop has no `else` (the label's line is
//! then the last line of its body), the inner loop's body alone names the label
//! ([`Finder::gotos_leaving`]), no label is in R, and no other escape of the pass moves
//! lines in the same place.

use super::*;

impl Finder<'_> {
    /// The escapes of one list ([`Shape::Escape`]).
    pub(super) fn escapes(&mut self, list: &[Stmt]) {
        for pair in list.windows(2) {
            let [outer, label] = pair else { continue };
            let Some(name) = self.markers.labels.get(&label.start()) else {
                continue;
            };
            // No `else` of its own: the outer loop's `break` goes on the label's line, which
            // is then the last of its body.
            let body = match outer {
                Stmt::For(ast::StmtFor { body, orelse, .. })
                | Stmt::While(ast::StmtWhile { body, orelse, .. })
                    if orelse.is_empty() =>
                {
                    body
                }
                _ => continue,
            };
            // The inner loop: the first loop of the body whose own body names the label.
            let found = body.iter().enumerate().find_map(|(at, stmt)| {
                let (inner_body, inner_else) = match stmt {
                    Stmt::For(ast::StmtFor { body, orelse, .. })
                    | Stmt::While(ast::StmtWhile { body, orelse, .. }) => (body, orelse),
                    _ => return None,
                };
                let gotos = self.gotos_leaving(inner_body, name);
                (!gotos.is_empty()).then_some((at, inner_body, inner_else, gotos))
            });
            let Some((at, inner_body, inner_else, gotos)) = found else {
                continue;
            };
            let (inner, rest) = (&body[at], &body[at + 1..]);
            let alone = |range: TextRange| self.lines.alone(self.text, range);
            let fits = gotos.iter().all(|&goto| alone(goto))
                && self.markers.named.get(&label.start()) == Some(&gotos.len())
                && inner_else.is_empty()
                && !breaks(inner_body)
                && alone(label.range());
            if !fits {
                continue;
            }
            let Some(edits) = self.escape_edits(outer, inner, rest, label) else {
                continue;
            };
            let (edits, skipped) = edits;
            self.take(label, &gotos, edits, skipped, Some("break"));
        }
    }

    /// The edits of an escape from `inner` (with `rest` after it in the outer loop's body)
    /// to `label`, and the lines of `rest` that go one level deeper; `None` where the text
    /// does not allow them.
    #[allow(clippy::type_complexity)]
    fn escape_edits(
        &mut self,
        outer: &Stmt,
        inner: &Stmt,
        rest: &[Stmt],
        label: &Stmt,
    ) -> Option<(Vec<(TextRange, String)>, Option<TextRange>)> {
        let lines = self.lines;
        let label_line = lines.line(label.start());
        // The first blank line after the label's, outside any string, which takes the shift.
        let blank = (label_line + 1..lines.starts.len() - 1).find(|&line| {
            let text =
                &self.text[usize::from(lines.starts[line])..usize::from(lines.starts[line + 1])];
            text.trim().is_empty() && !lines.inside[line]
        })?;
        let region = TextRange::new(outer.start(), lines.starts[blank + 1]);
        let (first, last) = (lines.line(outer.start()), blank);
        let clear = !lines.tabbed(outer.start(), region.end())
            && !lines.inside[first..=last].contains(&true)
            && !(self.shifted.iter()).any(|moved| moved.intersect(region).is_some());
        if !clear {
            return None;
        }
        let indent =
            &self.text[usize::from(lines.start(inner.start()))..usize::from(inner.start())];
        let mut edits = Vec::new();
        let mut skipped = None;
        if let (Some(first), Some(last)) = (rest.first(), rest.last()) {
            let exits = jumps(last);
            // A simple statement on one line takes `; continue` (before its comment).
            let joins = !compound(last)
                && !self.markers.gotos.contains_key(&last.start())
                && !self.markers.labels.contains_key(&last.start())
                && lines.line(last.start()) == lines.line(last.end());
            let (from, to) = (lines.line(first.start()), lines.line(last.end()));
            let fits = lines.line(inner.end()) < from
                && to < label_line
                && (exits || joins)
                && !self
                    .markers
                    .labelled(TextRange::new(first.start(), last.end()));
            if !fits {
                return None;
            }
            edits.push((
                TextRange::empty(lines.starts[from]),
                format!("{indent}else:\n"),
            ));
            if !exits {
                edits.push((TextRange::empty(last.end()), "; continue".to_owned()));
            }
            skipped = Some(TextRange::new(lines.starts[from + 1], lines.starts[to + 1]));
        }
        // The label's line holds the outer loop's `break`, as deep as the inner loop (after
        // the inner loop's `else: continue` on a line of its own, with no R).
        let before = if rest.is_empty() {
            format!("{indent}else: continue\n{indent}")
        } else {
            indent.to_owned()
        };
        edits.push((
            TextRange::new(lines.start(label.start()), label.start()),
            before,
        ));
        edits.push((
            TextRange::new(lines.starts[blank], lines.starts[blank + 1]),
            String::new(),
        ));
        self.shifted.push(region);
        Some((edits, skipped))
    }
}
