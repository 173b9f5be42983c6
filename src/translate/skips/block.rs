//! Statements that gotos leave for the label after them, or start again from the label
//! before them, from inside `if`, `with` and `try` statements ([`Shape::Block`]): a
//! `while True:` over them that the gotos `break` and `continue`, leaving each `with`,
//! handler and `finally` as the goto did (language reference, section 4).
//!
//! ```text
//! label .again                 while True:
//! with lock:                       with lock:
//!     if busy():                       if busy():
//!         goto .again                      continue
//!     if done():                       if done():
//!         goto .out                        break
//!     work()                           work()
//! report()                         report()
//! label .out                       break
//! ```
//!
//! The statements are those from the first that holds a goto (or the one after the label
//! they go back to) to the label they leave for (or the last that holds a goto back, with
//! one simple statement after it where one follows). The `while True:` takes the line of
//! the label before them, or a blank line, or else a line of its own: the statements then
//! move one line down and the label's line goes. The `break` that ends them takes the
//! label's line, or joins the last statement's (`; break`), or takes the blank line after
//! the label or the last statement, and none follows a statement that never falls through
//! (also an `if` whose every branch ends so, or a `try` whose body and handlers do). Taken where those gotos alone name their labels, the statements hold no `break`
//! or `continue` that the new loop would take, and no other block of the pass meets them
//! (a `break` inside one would be the inner loop's).

use super::repeat::{Entries, Held};
use super::*;

/// The gotos to one label, each with the index of the statement of the list that holds it.
type Found<'h> = &'h [(usize, TextRange)];

impl Finder<'_> {
    /// The blocks of one list ([`Shape::Block`]).
    pub(super) fn blocks(&mut self, list: &[Stmt]) {
        let mut held: Option<Held> = None;
        // Past the last statement of the last block taken: two in one list never overlap.
        let mut free_from = 0;
        crate::splice::count(list.len());
        for (at, label) in list.iter().enumerate() {
            let Some(name) = self.markers.labels.get(&label.start()) else {
                continue;
            };
            if at < free_from || !self.lines.alone(self.text, label.range()) {
                continue;
            }
            let held = held.get_or_insert_with(|| Held::of(self, list));
            let named = self.markers.named.get(&label.start()).copied();
            let before = held.found(name, free_from, at);
            let after = held.found(name, at + 1, list.len());
            if !before.is_empty() && named == Some(before.len()) {
                // Left for: the statements from the first goto's on.
                let from = before[0].0;
                if let Some(taken) = self.left((list, held), from, at, before) {
                    free_from = taken;
                }
            } else if !after.is_empty() && named == Some(after.len()) {
                let last = after[after.len() - 1].0;
                let end = (last + 1..list.len())
                    .find(|&next| self.markers.labels.contains_key(&list[next].start()));
                // The label of the first statement after the last goto back, when gotos in
                // the same statements alone leave for it.
                let out = end.and_then(|end| {
                    let exit = &list[end];
                    let name = &self.markers.labels[&exit.start()];
                    // Alone on its line, which becomes the closing `break`.
                    if !self.lines.alone(self.text, exit.range()) {
                        return None;
                    }
                    let out = held.found(name, at + 1, end);
                    let named = self.markers.named.get(&exit.start()).copied();
                    (!out.is_empty() && named == Some(out.len())).then_some((end, out))
                });
                if let Some(taken) = self.restarted((list, held), at, after, last, out) {
                    free_from = taken;
                }
            }
        }
    }

    /// The block of `list` from `from` up to `end`, its label, left by the `gotos` in it:
    /// the index after the label when it is taken.
    fn left(
        &mut self,
        (list, held): (&[Stmt], &Held),
        from: usize,
        end: usize,
        gotos: Found,
    ) -> Option<usize> {
        let (first, last, label) = (&list[from], &list[end - 1], &list[end]);
        // Not a goto first: at a module's level, a `while True:` written before it would
        // meet its `break`.
        let fits = self.fits((list, held), from, end)
            && !self.lines.tabbed(first.start(), label.end())
            && !self.markers.gotos.contains_key(&first.start());
        if !fits {
            return None;
        }
        let falls = !self.ends(last, 0);
        let indent = self.indent(first);
        let mut edits: Vec<(TextRange, String)> = (gotos.iter())
            .map(|&(_, goto)| (goto, "break".to_owned()))
            .collect();
        let first_line = self.lines.line(first.start());
        let blank = (first_line.checked_sub(1))
            .filter(|&line| from == 0 || self.lines.line(list[from - 1].end()) < line)
            .and_then(|line| self.blank_line(line));
        // What the block takes of the text, blank lines included.
        let mut taken = TextRange::new(first.start(), label.end());
        let (skipped, becomes) = if let Some(blanks) = blank {
            // The `while True:` on the blank line before, the `break` on the label's line.
            taken = taken.cover(blanks);
            edits.push((blanks, format!("{indent}while True:")));
            let skipped = TextRange::new(self.lines.start(first.start()), label.end());
            (skipped, if falls { "break" } else { "" })
        } else {
            // A line of its own: the statements one line down, the label's line gone.
            let (from_line, to_line) = (first_line, self.lines.line(last.end()));
            let joinable = self.joinable(last);
            // Or, after a last statement that cannot take it, on the blank line after the
            // label's: that line and the label's become one.
            let label_line = self.lines.line(label.start());
            let blank_after = (self.blank_line(label_line + 1))
                .map(|blank| TextRange::new(label.end(), blank.end()));
            let movable = !self.lines.inside[from_line..=to_line + 1].contains(&true)
                && to_line < label_line
                && self.text[usize::from(label.end())..].starts_with('\n')
                && (!falls || joinable || blank_after.is_some());
            if !movable {
                return None;
            }
            edits.extend(self.header_before(first, indent, "while True:", label));
            match blank_after {
                Some(blank) if falls && !joinable => {
                    taken = taken.cover(blank);
                    edits.push((blank, format!("{indent}    break")));
                }
                _ => {
                    if falls {
                        edits.push((TextRange::empty(last.end()), "; break".to_owned()));
                    }
                    let newline = TextRange::at(label.end(), TextSize::of("\n"));
                    taken = taken.cover(newline);
                    edits.push((newline, String::new()));
                }
            }
            let skipped = TextRange::new(
                self.lines.starts[from_line + 1],
                self.lines.starts[to_line + 1],
            );
            (skipped, "")
        };
        self.take_each(label, gotos.len(), edits, Some(skipped), Some(becomes));
        self.shifted.push(taken);
        Some(end + 1)
    }

    /// The block of `list` after the label at `top` that the gotos `back` to it (the last in
    /// the statement at `last`) start again: up to the label `out` that gotos in it alone
    /// leave for, or with one simple statement after `last`, or up to `last` with the
    /// `break` on the blank line after it. The index after the block when it is taken.
    fn restarted(
        &mut self,
        (list, held): (&[Stmt], &Held),
        top: usize,
        back: Found,
        last: usize,
        out: Option<(usize, Found)>,
    ) -> Option<usize> {
        let label = &list[top];
        let mut edits: Vec<(TextRange, String)> = (back.iter())
            .map(|&(_, goto)| (goto, "continue".to_owned()))
            .collect();
        // A blank line after the block that takes its closing `break`.
        let mut blank = None;
        // The index after the block, and the label that ends it with its gotos.
        let (after, exit) = if let Some((end, out)) = out {
            edits.extend(out.iter().map(|&(_, goto)| (goto, "break".to_owned())));
            (end, Some((&list[end], out.len())))
        } else if self.ends(&list[last], 0) {
            // The goto back ends the block, where the loop goes on anyway (a `continue`
            // where it is the only statement), or a statement that never falls through:
            // nothing leaves the loop at its end.
            if last > top + 1
                && self.markers.gotos.contains_key(&list[last].start())
                && let Some((_, with)) =
                    (edits.iter_mut()).find(|(goto, _)| *goto == list[last].range())
            {
                with.clear();
            }
            (last + 1, None)
        } else if let Some(next) = (list.get(last + 1)).filter(|next| self.joinable(next)) {
            // One simple statement after, which leaves the loop.
            if !jumps(next) {
                edits.push((TextRange::empty(next.end()), "; break".to_owned()));
            }
            (last + 2, None)
        } else {
            // The `break` on the blank line after the last statement.
            let line = self.blank_line(self.lines.line(list[last].end()) + 1)?;
            let indent = self.indent(label);
            edits.push((line, format!("{indent}    break")));
            blank = Some(line);
            (last + 1, None)
        };
        let end = exit.map_or(list[after - 1].end(), |(exit, _)| exit.end());
        let fits = self.fits((list, held), top + 1, after)
            && !self.lines.tabbed(label.start(), end)
            && self.lines.line(label.end()) < self.lines.line(list[top + 1].start());
        if !fits {
            return None;
        }
        let next = self.lines.starts[self.lines.line(label.end()) + 1];
        let skipped = Some(TextRange::new(next, end));
        self.take_each(label, back.len(), edits, skipped, Some("while True:"));
        if let Some((exit, gotos)) = exit {
            let falls = !self.ends(&list[after - 1], 0);
            let becomes = if falls { "break" } else { "" };
            self.take_each(exit, gotos, Vec::new(), None, Some(becomes));
        }
        let taken = TextRange::new(label.start(), end);
        self.shifted
            .push(blank.map_or(taken, |blank| taken.cover(blank)));
        Some(after + usize::from(exit.is_some()))
    }

    /// Whether the statements of `list` (as `held`) from `from` up to `to` may be a block
    /// of this pass: some, with no `break` or `continue` of a loop around them, no tab in
    /// their indentation, meeting no other block of the pass, and holding no label that a
    /// goto from outside them names (a second way into the loop, which a person writes as
    /// the loop of that label instead).
    fn fits(&self, (list, held): (&[Stmt], &Held), from: usize, to: usize) -> bool {
        if from >= to || to > list.len() {
            return false;
        }
        let region = TextRange::new(list[from].start(), list[to - 1].end());
        !held.exits(from, to)
            && !self.lines.tabbed(region.start(), region.end())
            && !(self.shifted.iter()).any(|other| other.intersect(region).is_some())
            && !(self.entries.get_or_init(|| Entries::of(self.markers))).inside(region)
    }

    /// Whether `stmt` never falls through to the statement after it ([`Finder::never_falls`]),
    /// also as an `if` with an `else` whose every branch ends so, or a `try` whose body,
    /// handlers and `else` clause end so (or whose `finally` body does); not a `with`, whose `__exit__` may
    /// swallow what its body raises. `depth`: how many such statements are around it (past
    /// 32, it is taken to fall through).
    fn ends(&self, stmt: &Stmt, depth: usize) -> bool {
        let ends = |list: &[Stmt]| list.last().is_some_and(|last| self.ends(last, depth + 1));
        if self.never_falls(stmt) {
            return true;
        }
        if depth > 32 {
            return false;
        }
        match stmt {
            Stmt::If(branch) => {
                let clauses = &branch.elif_else_clauses;
                clauses.last().is_some_and(|clause| clause.test.is_none())
                    && ends(&branch.body)
                    && clauses.iter().all(|clause| ends(&clause.body))
            }
            Stmt::Try(attempt) => {
                let handlers = attempt.handlers.iter().all(|handler| {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    ends(&handler.body)
                });
                // An `else` clause a goto enters runs (and falls through) though the body
                // never does.
                let orelse = attempt.orelse.is_empty() || ends(&attempt.orelse);
                ends(&attempt.finalbody) || ends(&attempt.body) && handlers && orelse
            }
            _ => false,
        }
    }

    /// Whether `stmt` can take `; break` after it: a simple statement on one line of its own,
    /// not a marker and not a `break` or `continue` (which would be the new loop's).
    fn joinable(&self, stmt: &Stmt) -> bool {
        !compound(stmt)
            && !matches!(stmt, Stmt::Break(_) | Stmt::Continue(_))
            && !self.markers.gotos.contains_key(&stmt.start())
            && !self.markers.labels.contains_key(&stmt.start())
            && self.lines.line(stmt.start()) == self.lines.line(stmt.end())
            && self.lines.alone(self.text, stmt.range())
    }

    /// What `line` holds, when it is blank, ends with a line break, starts outside a string
    /// and no other block of the pass took it: a place for a statement.
    fn blank_line(&self, line: usize) -> Option<TextRange> {
        let (start, next) = (
            *self.lines.starts.get(line)?,
            *self.lines.starts.get(line + 1)?,
        );
        let range = TextRange::new(start, next - TextSize::of("\n"));
        let blank = self.text[range].trim().is_empty()
            && !self.lines.inside[line]
            && !(self.shifted.iter()).any(|other| other.intersect(range).is_some());
        blank.then_some(range)
    }
}
