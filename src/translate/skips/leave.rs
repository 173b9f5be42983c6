//! Loops that a goto leaves or starts again ([`Shape::Restart`], [`Shape::Leave`]): each goto
//! becomes the `break` a person writes there, inside `if`, `with` and `try` statements too,
//! whose exits `break` runs as the goto did.

use super::*;

impl<'a> Finder<'a> {
    /// The restarts of one list: `label .l`, a loop whose body alone goes back to `.l`, and
    /// one simple statement ending the list ([`Shape::Restart`]).
    pub(super) fn restarts(&mut self, list: &[Stmt]) {
        self.restart_around(list);
        let [.., label, looped, last] = list else {
            return;
        };
        let Some((orelse, gotos)) = self.loop_gotos(looped, label, true) else {
            return;
        };
        // Not `break` or `continue`, which would be the new loop's.
        let simple = !compound(last) && !matches!(last, Stmt::Break(_) | Stmt::Continue(_));
        // Nor a goto or label, whose own edits would meet this one's.
        let marker = self.markers.gotos.contains_key(&last.start())
            || self.markers.labels.contains_key(&last.start());
        let fits = orelse.is_empty()
            && simple
            && !marker
            && self.lines.alone(self.text, last.range())
            && self.lines.line(last.start()) == self.lines.line(last.end())
            && self.lines.line(label.end()) < self.lines.line(looped.start())
            && !self.lines.tabbed(label.start(), last.end());
        if !fits {
            return;
        }
        let exit = matches!(last, Stmt::Return(_) | Stmt::Raise(_));
        let mut edits = vec![(TextRange::empty(last.start()), "else: ".to_owned())];
        if !exit {
            edits.push((TextRange::empty(last.end()), "; break".to_owned()));
        }
        let deeper = TextRange::new(self.lines.start(looped.start()), last.end());
        self.take(label, &gotos, edits, Some(deeper), Some("while True:"));
    }

    /// `label .l`, some statements, then a `while True:` loop that ends the list, whose
    /// body goes back to `.l` ([`Shape::Restart`]): `while True:` around them on the label's
    /// line, each goto in the loop `break`, each in the statements before it `continue`
    /// (under `if`, `with` and `try` statements only, both). The inner loop never ends but by a `break` (it has
    /// none of its own), so that a `break` goes on after it, at the new loop's end, which
    /// starts the new loop again; the statements before it hold no `break` or `continue`
    /// that would be the new loop's, and no label that a goto from outside them names.
    fn restart_around(&mut self, list: &[Stmt]) {
        let Some((looped, before)) = list.split_last() else {
            return;
        };
        let Stmt::While(ast::StmtWhile {
            test, body, orelse, ..
        }) = looped
        else {
            return;
        };
        if crate::front::scan::truth(test) != Some(true) {
            return;
        }
        let labels =
            (before.iter()).rposition(|stmt| self.markers.labels.contains_key(&stmt.start()));
        let Some(at) = labels else {
            return;
        };
        let (label, between) = (&list[at], &before[at + 1..]);
        let name = &self.markers.labels[&label.start()];
        // Those in the loop `break`, those before it `continue`.
        let (gotos, ahead) = (
            self.gotos_leaving(body, name),
            self.gotos_leaving(between, name),
        );
        let region = TextRange::new(label.start(), looped.end());
        let entries = self
            .entries
            .get_or_init(|| super::repeat::Entries::of(self.markers));
        let alone = |range: &TextRange| self.lines.alone(self.text, *range);
        let fits = !gotos.is_empty()
            && gotos.iter().chain(&ahead).all(alone)
            && self.markers.named.get(&label.start()) == Some(&(gotos.len() + ahead.len()))
            && orelse.is_empty()
            && !breaks(body)
            && !loop_exit(between)
            && !entries.inside(region)
            && alone(&label.range())
            && self.lines.line(label.end()) < self.lines.line(list[at + 1].start())
            && !self.lines.tabbed(label.start(), looped.end());
        if !fits {
            return;
        }
        let first = self.lines.starts[self.lines.line(label.end()) + 1];
        let deeper = TextRange::new(first, looped.end());
        let edits = (ahead.iter().map(|&goto| (goto, "continue")))
            .chain(gotos.iter().map(|&goto| (goto, "break")))
            .map(|(goto, with)| (goto, with.to_owned()))
            .collect();
        let taken = gotos.len() + ahead.len();
        self.take_each(label, taken, edits, Some(deeper), Some("while True:"));
    }

    /// The loops of one list that a goto leaves for a label after them ([`Shape::Leave`]).
    pub(super) fn leaves(&mut self, list: &[Stmt]) {
        // Past the label of the last one taken: two never overlap.
        let mut free_from = 0;
        // The index of the first label at or after each statement (none: the list's length).
        let mut next_label = vec![list.len(); list.len() + 1];
        for at in (0..list.len()).rev() {
            let labelled = self.markers.labels.contains_key(&list[at].start());
            next_label[at] = if labelled { at } else { next_label[at + 1] };
        }
        crate::splice::count(list.len());
        for (at, looped) in list.iter().enumerate() {
            if at < free_from {
                continue;
            }
            if let (Stmt::If(_), Some(label)) = (looped, list.get(at + 1)) {
                self.leave_ifs(looped, label);
                continue;
            }
            if !matches!(looped, Stmt::For(_) | Stmt::While(_)) {
                continue;
            }
            let rest = &list[at + 1..];
            let end = next_label[at + 1] - (at + 1);
            if end == rest.len() {
                continue;
            }
            let (between, label) = (&rest[..end], &rest[end]);
            // Right before the label, a `break` of the loop's own goes there too, and the
            // label may stay for gotos from elsewhere.
            let Some((orelse, gotos)) = self.loop_gotos(looped, label, !between.is_empty()) else {
                continue;
            };
            let fits = !self.lines.tabbed(looped.start(), label.end())
                && (between.is_empty()
                    || orelse.is_empty() && self.shiftable(looped, between, label));
            if !fits {
                continue;
            }
            free_from = at + 1 + end;
            let mut edits = Vec::new();
            let mut skipped = None;
            if let (Some(first), Some(last)) = (between.first(), between.last()) {
                // `else:` on a line of its own before S, as deep as the loop, and the
                // label's line taken out whole: S one line lower, and one level deeper.
                let indent = self.indent(looped);
                edits.extend(self.header_before(first, indent, "else:", label));
                edits.push((
                    TextRange::at(label.end(), TextSize::of("\n")),
                    String::new(),
                ));
                self.shifted
                    .push(TextRange::new(first.start(), label.end()));
                let (from, to) = (self.lines.line(first.start()), self.lines.line(last.end()));
                skipped = Some(TextRange::new(
                    self.lines.starts[from + 1],
                    self.lines.starts[to + 1],
                ));
            }
            // The label's line goes whole where it gave `else:` its line, else as any label.
            let becomes = (!between.is_empty()).then_some("");
            self.take(label, &gotos, edits, skipped, becomes);
        }
    }

    /// The loops that end a clause of `stmt`, an `if` right before `label`, at any depth of
    /// `if`s that end their clauses: a `break` goes where their gotos to the label go
    /// ([`Shape::Leave`]).
    fn leave_ifs(&mut self, stmt: &Stmt, label: &Stmt) {
        if !self.markers.labels.contains_key(&label.start()) {
            return;
        }
        for (_, looped) in clause_ends(stmt) {
            if let Some((_, gotos)) = self.loop_gotos(looped, label, false)
                && !self.lines.tabbed(looped.start(), label.end())
            {
                self.take(label, &gotos, Vec::new(), None, None);
            }
        }
    }

    /// The `else` clause of `looped` and its gotos to `label`, when `looped` is a `for` or
    /// `while` loop whose body names `label` ([`Finder::gotos_leaving`], each alone on its
    /// line), and the label is alone on its line: what [`Shape::Restart`] and
    /// [`Shape::Leave`] both take. Where the label goes (`whole`), no goto from elsewhere
    /// names it and the body holds no `break` of its own.
    pub(super) fn loop_gotos<'s>(
        &self,
        looped: &'s Stmt,
        label: &Stmt,
        whole: bool,
    ) -> Option<(&'s [Stmt], Vec<TextRange>)> {
        let (body, orelse) = match looped {
            Stmt::For(ast::StmtFor { body, orelse, .. })
            | Stmt::While(ast::StmtWhile { body, orelse, .. }) => (body, orelse),
            _ => return None,
        };
        let name = self.markers.labels.get(&label.start())?;
        let gotos = self.gotos_leaving(body, name);
        let alone = |range: TextRange| self.lines.alone(self.text, range);
        let fits = !gotos.is_empty()
            && gotos.iter().all(|&goto| alone(goto))
            && (!whole
                || self.markers.named.get(&label.start()) == Some(&gotos.len()) && !breaks(body))
            && alone(label.range());
        fits.then_some((orelse.as_slice(), gotos))
    }

    /// Takes a restart or a leave of `label`: each of its `gotos` becomes `break`, with
    /// `edits` and `skipped`, and the label [`Skip::becomes`] ([`Finder::take_each`]).
    pub(super) fn take(
        &mut self,
        label: &Stmt,
        gotos: &[TextRange],
        mut edits: Vec<(TextRange, String)>,
        skipped: Option<TextRange>,
        becomes: Option<&'static str>,
    ) {
        edits.extend(gotos.iter().map(|&goto| (goto, "break".to_owned())));
        self.take_each(label, gotos.len(), edits, skipped, becomes);
    }

    /// Takes `gotos` gotos to `label` with `edits` and `skipped`, the label [`Skip::becomes`]
    /// once they are all taken: a skip per goto, so that the label goes with its last; the
    /// first carries the edits.
    pub(super) fn take_each(
        &mut self,
        label: &Stmt,
        gotos: usize,
        mut edits: Vec<(TextRange, String)>,
        mut skipped: Option<TextRange>,
        becomes: Option<&'static str>,
    ) {
        for _ in 0..gotos {
            self.skips.push(Skip {
                edits: std::mem::take(&mut edits),
                skipped: skipped.take(),
                label: Some(label.range()),
                dead: None,
                becomes,
            });
        }
    }

    /// The indentation of `stmt`'s line.
    pub(super) fn indent(&self, stmt: &Stmt) -> &'a str {
        &self.text[usize::from(self.lines.start(stmt.start()))..usize::from(stmt.start())]
    }

    /// The edits that give `header` a line of its own before `first`'s (as deep as
    /// `indent`) and take out what `label`'s line holds before its line break: what lies
    /// between moves one line down (the caller takes the line break, or gives it a use).
    pub(super) fn header_before(
        &self,
        first: &Stmt,
        indent: &str,
        header: &str,
        label: &Stmt,
    ) -> [(TextRange, String); 2] {
        [
            (
                TextRange::empty(self.lines.start(first.start())),
                format!("{indent}{header}\n"),
            ),
            (
                TextRange::new(self.lines.start(label.start()), label.start()),
                String::new(),
            ),
        ]
    }

    /// Whether the statements `between` a loop and its `label` can move one line down into
    /// the loop's `else:` ([`Shape::Leave`]): each on lines after the loop's and before the
    /// label's, no label among them at any depth (nothing else enters them), no string over
    /// several lines (its lines are copied as they are, by their place), nothing after the
    /// label on its line, which goes, and the loop not among statements another leave of
    /// the pass moves.
    pub(super) fn shiftable(&self, looped: &Stmt, between: &[Stmt], label: &Stmt) -> bool {
        let (Some(first), Some(last)) = (between.first(), between.last()) else {
            return false;
        };
        let (from, to) = (self.lines.line(first.start()), self.lines.line(last.end()));
        let range = TextRange::new(first.start(), last.end());
        self.lines.line(looped.end()) < from
            && to < self.lines.line(label.start())
            && !(self.shifted.iter()).any(|moved| moved.contains(looped.start()))
            && !self.markers.labelled(range)
            && !self.lines.inside[from..=to + 1].contains(&true)
            && self.text[usize::from(label.end())..].starts_with('\n')
    }

    /// The gotos to `name` in `body` that a `break` or `continue` of a loop around `body`
    /// can stand for: in `body`, and in the `if`, `with` and `try` statements in it at any
    /// depth (a `try`'s body, handlers and `else`), where a `break` leaves each `with`,
    /// handler and `try` with `finally` as the goto does (language reference, section 4);
    /// none in a loop (whose `break` would be its own), a `finally` body (which no goto
    /// leaves) or anywhere in a `try` with `except*` handlers (where `break` is refused).
    pub(super) fn gotos_leaving(&self, body: &[Stmt], name: &str) -> Vec<TextRange> {
        let mut found = Vec::new();
        self.leaving(body, |to, goto| {
            if to == name {
                found.push(goto);
            }
        });
        found.sort_by_key(|range| range.start());
        found
    }

    /// Each goto of [`Finder::gotos_leaving`] in `body`, whatever its label, with its
    /// label's name (each statement visited counts a unit of work).
    pub(super) fn leaving(&self, body: &[Stmt], mut each: impl FnMut(&str, TextRange)) {
        let mut work = vec![body];
        while let Some(list) = work.pop() {
            crate::splice::count(list.len());
            for stmt in list {
                if let Some(to) = self.markers.gotos.get(&stmt.start()) {
                    each(to, stmt.range());
                    continue;
                }
                match stmt {
                    Stmt::If(_) | Stmt::With(_) => work.extend(child_lists(stmt)),
                    Stmt::Try(attempt) if !attempt.is_star => {
                        work.push(&attempt.body);
                        work.extend(attempt.handlers.iter().map(|handler| {
                            let ast::ExceptHandler::ExceptHandler(handler) = handler;
                            handler.body.as_slice()
                        }));
                        work.push(&attempt.orelse);
                    }
                    _ => {}
                }
            }
        }
    }
}
