//! Statements that nothing reaches, after a goto and before the next label
//! ([`Shape::Dead`]): gone, as a person leaves them out, and a goto to the statement right
//! after it goes with them. After a `return`, `raise`, `break` or `continue`, they go where
//! they hold a goto (what is the source's own Python stays as it wrote it). So do the states of a list that nothing reaches (its blocks,
//! each from a label to the next, that neither the list's start nor a goto from a block
//! reached leads to: [`Finder::unreached`]), labels and all, all of them or none
//! (`label .old` / `i += 2` / `goto .old`).
//!
//! ```text
//! goto .after                   (a blank line)
//! assert False, "never"         (a blank line)
//! label .after                  (a blank line)
//! out.append(n)                 out.append(n)
//! ```
//!
//! Later, after the passes that read them as a ladder's or a loop's ([`Shape::Fall`]), a
//! goto that ends a clause of an `if` (at any depth of `if`s) right before its label goes
//! too: `if C: goto .l` / `label .l` is `if C: pass`, the test still made (one that nothing
//! reaches goes with the dead code instead).
//!
//! Code that never runs still decides what its scope is: a name it binds is a local of the
//! function, a name it loads may be a free variable passed down, a `yield` makes a
//! generator. So the statements go only where the scope stays what it was: every name they
//! bind is bound elsewhere in the scope too (or is a parameter), every name they load is
//! bound or loaded elsewhere, and they hold no nested scope (`def`, `class`, `lambda`, a
//! comprehension), no `yield` or `await`, no `import`, `global` or `nonlocal`, no handler
//! that names its exception, no `match`, and no label. A goto among them goes with them,
//! and a label that only such gotos name goes too. A comment on a line of its own stays
//! there; one after a statement goes with it.

use rustpython_compiler::ast::Expr;
use rustpython_compiler::ast::visitor::{self, Visitor};

use super::*;

/// Edits of the text.
type Edits = Vec<(TextRange, String)>;

/// The names of statements, each with how many times it is bound and loaded; `plain` while
/// they hold nothing that decides their scope but names.
struct Names<'a> {
    bound: HashMap<&'a str, usize>,
    loaded: HashMap<&'a str, usize>,
    plain: bool,
    /// The markers, whose names the translation takes out with them: not counted.
    markers: &'a Markers,
}

impl<'a> Names<'a> {
    /// No names yet.
    fn none(markers: &'a Markers) -> Names<'a> {
        Names {
            bound: HashMap::new(),
            loaded: HashMap::new(),
            plain: true,
            markers,
        }
    }

    /// The names of `body` (a scope's, with its `parameters`, or some of its statements).
    fn of(
        body: &'a [Stmt],
        parameters: Option<&'a ast::Parameters>,
        markers: &'a Markers,
    ) -> Names<'a> {
        let mut names = Names::none(markers);
        for parameter in parameters
            .into_iter()
            .flat_map(|parameters| parameters.iter())
        {
            *names.bound.entry(parameter.name().as_str()).or_default() += 1;
        }
        for stmt in body {
            names.visit_stmt(stmt);
        }
        names
    }

    /// Whether `name` is bound (or, with `loads`, also loaded) in the scope outside `dead`.
    fn elsewhere(&self, dead: &Names, name: &str, loads: bool) -> bool {
        let outside = |all: &HashMap<&str, usize>, inside: &HashMap<&str, usize>| {
            all.get(name).copied().unwrap_or(0) > inside.get(name).copied().unwrap_or(0)
        };
        outside(&self.bound, &dead.bound) || loads && outside(&self.loaded, &dead.loaded)
    }
}

impl<'a> Visitor<'a> for Names<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        crate::splice::count(1);
        let markers = self.markers;
        if markers.gotos.contains_key(&stmt.start()) || markers.labels.contains_key(&stmt.start()) {
            return;
        }
        match stmt {
            // A scope of its own: its name is bound here, the rest is its own.
            Stmt::FunctionDef(ast::StmtFunctionDef { name, .. })
            | Stmt::ClassDef(ast::StmtClassDef { name, .. }) => {
                *self.bound.entry(name.as_str()).or_default() += 1;
                self.plain = false;
                return;
            }
            Stmt::Import(_)
            | Stmt::ImportFrom(_)
            | Stmt::Global(_)
            | Stmt::Nonlocal(_)
            | Stmt::Match(_)
            | Stmt::TypeAlias(_) => self.plain = false,
            Stmt::Try(attempt) => {
                let named = attempt.handlers.iter().any(|handler| {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    handler.name.is_some()
                });
                self.plain &= !named;
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) => {
                let names = match name.ctx {
                    ast::ExprContext::Load => &mut self.loaded,
                    _ => &mut self.bound,
                };
                *names.entry(name.id.as_str()).or_default() += 1;
            }
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_) => {
                self.plain = false;
                return;
            }
            Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) => self.plain = false,
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }
}

impl<'a> Finder<'a> {
    /// The dead statements of `body`'s scopes ([`Shape::Dead`]): each scope's names are
    /// read once, when it has some.
    pub(super) fn deads(&mut self, body: &'a [Stmt]) {
        // Each list with the index of its scope in `scopes`: its body and parameters.
        let mut scopes: Vec<(&'a [Stmt], Option<&'a ast::Parameters>)> = vec![(body, None)];
        let mut names: HashMap<usize, Names<'a>> = HashMap::new();
        let mut work: Vec<(&'a [Stmt], usize)> = vec![(body, 0)];
        while let Some((list, scope)) = work.pop() {
            // The statements taken: what they hold goes with them.
            let mut gone = self.dead_in(list, (scope, &scopes, &mut names));
            gone.sort_by_key(|range| range.start());
            for stmt in list {
                let before = gone.partition_point(|range| range.start() <= stmt.start());
                if before > 0 && gone[before - 1].contains_range(stmt.range()) {
                    continue;
                }
                let inner = match stmt {
                    Stmt::FunctionDef(def) => {
                        scopes.push((&def.body, Some(&def.parameters)));
                        scopes.len() - 1
                    }
                    Stmt::ClassDef(class) => {
                        scopes.push((&class.body, None));
                        scopes.len() - 1
                    }
                    _ => scope,
                };
                work.extend(child_lists(stmt).into_iter().map(|list| (list, inner)));
            }
        }
    }

    /// The dead statements of one list, after each goto of it up to the next label, and its
    /// blocks that nothing reaches ([`Finder::unreached`]): its scope's index in `scopes`,
    /// whose names are read into `names` the first time. The ranges taken.
    #[allow(clippy::type_complexity)]
    fn dead_in(
        &mut self,
        list: &'a [Stmt],
        (scope, scopes, names): (
            usize,
            &[(&'a [Stmt], Option<&'a ast::Parameters>)],
            &mut HashMap<usize, Names<'a>>,
        ),
    ) -> Vec<TextRange> {
        crate::splice::count(list.len());
        let unreached = self.unreached(list);
        // The labels that the gotos taken name, and the stretches taken.
        let (mut pending, mut taken) = (Vec::new(), Vec::new());
        let mut from = 0;
        let mut blocks = unreached.iter().peekable();
        let next_label = |from: usize| {
            (from..list.len())
                .find(|&next| self.markers.labels.contains_key(&list[next].start()))
                .unwrap_or(list.len())
        };
        for (at, stmt) in list.iter().enumerate() {
            if let Some(&&(label, end)) = blocks.peek()
                && label == at
            {
                blocks.next();
                from = end;
            }
            if at < from {
                continue;
            }
            if let (Shape::Fall, Stmt::If(_), Some(label)) = (self.shape, stmt, list.get(at + 1)) {
                self.fall_to(stmt, label);
            }
            let name = self.markers.gotos.get(&stmt.start());
            if name.is_none() && !jumps(stmt) {
                continue;
            }
            let end = next_label(at + 1);
            // After a `return`, `raise`, `break` or `continue`, the statements go where they
            // hold a goto: those of the source's own stay as it wrote them.
            if name.is_none()
                && (end == at + 1
                    || !(self.markers)
                        .goes(TextRange::new(list[at + 1].start(), list[end - 1].end())))
            {
                continue;
            }
            from = end;
            // The label after, when the goto names it.
            let label = (list.get(end)).filter(|label| {
                name.is_some_and(|name| self.markers.labels[&label.start()] == *name)
            });
            let alone = |stmt: &Stmt| self.lines.alone(self.text, stmt.range());
            let label = label.filter(|label| alone(label) && alone(stmt));
            if end == at + 1 {
                // A goto to the statement right after it.
                if let Some(label) = label {
                    self.skip_to_next(list, at, label, Vec::new());
                }
                continue;
            }
            let parts = [(at, at + 1..end)];
            if let Some(ranges) =
                self.take_dead(list, &parts, label, (scope, scopes, names), &mut pending)
            {
                taken.extend(ranges);
            }
        }
        // The blocks that nothing reaches, all or none: their labels go with them.
        let parts: Vec<(usize, std::ops::Range<usize>)> = (unreached.iter())
            .map(|&(label, end)| (label - 1, label..end))
            .collect();
        let mut gone: HashSet<TextSize> = HashSet::new();
        let bare = parts.iter().all(|(_, part)| self.bare(&list[part.start]));
        if !parts.is_empty() && bare && self.entered_from(list, &parts, &taken) {
            let context = (scope, scopes, names);
            if let Some(ranges) = self.take_dead(list, &parts, None, context, &mut pending) {
                gone.extend(parts.iter().map(|(_, part)| list[part.start].start()));
                taken.extend(ranges);
            }
        }
        for target in pending {
            if !gone.contains(&target.start()) {
                self.skips.push(Skip {
                    edits: Vec::new(),
                    skipped: None,
                    label: Some(target),
                    dead: None,
                    becomes: None,
                });
            }
        }
        taken
    }

    /// The blocks of `list` that nothing reaches, each a label and the statements up to the
    /// next label (the label's index, and the index after the block): a block is reached when
    /// the list starts with it, when the block before falls into it (no statement of that
    /// block's own that never falls through, or a label nested in the statements after that
    /// one, which a goto may enter), or when a goto names its label from a block reached,
    /// before that block's first statement that never falls through, or from outside the
    /// list.
    fn unreached(&self, list: &[Stmt]) -> Vec<(usize, usize)> {
        let labels: Vec<usize> = (0..list.len())
            .filter(|&at| self.markers.labels.contains_key(&list[at].start()))
            .collect();
        let (Some(first), Some(last)) = (list.first(), list.last()) else {
            return Vec::new();
        };
        if labels.is_empty() {
            return Vec::new();
        }
        let whole = TextRange::new(first.start(), last.end());
        // Block 0 before the first label (perhaps empty), block k from the k-th label on.
        let starts: Vec<usize> = std::iter::once(0).chain(labels.iter().copied()).collect();
        let end_of = |k: usize| starts.get(k + 1).copied().unwrap_or(list.len());
        // Where the part of each block that runs ends: up to its first statement that never
        // falls through; and whether it falls into the next.
        let live: Vec<(TextSize, bool)> = (0..starts.len())
            .map(|k| {
                let from = if k == 0 { 0 } else { starts[k] + 1 };
                let stop = (from..end_of(k)).find(|&at| self.never_falls(&list[at]));
                // A label nested in what follows may run it, and fall into the next block.
                let stop = stop.filter(|&at| {
                    let rest = TextRange::new(list[at].end(), list[end_of(k) - 1].end());
                    !self.markers.labelled(rest)
                });
                let end = stop.map_or(end_of(k), |at| at + 1);
                let end = if end == 0 {
                    first.start()
                } else {
                    list[end - 1].end()
                };
                (end, stop.is_none())
            })
            .collect();
        let block_of: HashMap<TextSize, usize> = (labels.iter().enumerate())
            .map(|(k, &at)| (list[at].start(), k + 1))
            .collect();
        let mut reached = vec![false; starts.len()];
        let mut work = vec![0];
        for (&start, &k) in &block_of {
            let outside = (self.markers.spans.get(&start))
                .is_some_and(|&(first, last)| first < whole.start() || last >= whole.end());
            if outside {
                work.push(k);
            }
        }
        // The blocks that each block's gotos name.
        let mut named: Vec<Vec<usize>> = vec![Vec::new(); starts.len()];
        let gotos = &self.markers.ordered_gotos;
        let inner = gotos.partition_point(|&at| at < whole.start());
        for &at in gotos[inner..].iter().take_while(|&&at| at < whole.end()) {
            let Some(&k) = block_of.get(&self.markers.targets[&at].start()) else {
                continue;
            };
            let from = starts.partition_point(|&start| list[start].start() <= at) - 1;
            if at < live[from].0 {
                named[from].push(k);
            }
        }
        while let Some(k) = work.pop() {
            if std::mem::replace(&mut reached[k], true) {
                continue;
            }
            if live[k].1 && k + 1 < starts.len() {
                work.push(k + 1);
            }
            work.extend(named[k].iter().copied());
        }
        (1..starts.len())
            .filter(|&k| !reached[k])
            .map(|k| (starts[k], end_of(k)))
            .collect()
    }

    /// Whether every goto that names the label of one of the blocks `parts` of `list` lies
    /// in those blocks or in a stretch `taken`: no goto left names a label that goes.
    fn entered_from(
        &self,
        list: &[Stmt],
        parts: &[(usize, std::ops::Range<usize>)],
        taken: &[TextRange],
    ) -> bool {
        let mut named: HashMap<TextSize, usize> = HashMap::new();
        let ranges = (parts.iter())
            .map(|(_, part)| TextRange::new(list[part.start].start(), list[part.end - 1].end()))
            .chain(taken.iter().copied());
        let gotos = &self.markers.ordered_gotos;
        for range in ranges {
            let inner = gotos.partition_point(|&at| at < range.start());
            for at in gotos[inner..].iter().take_while(|&&at| at < range.end()) {
                *named.entry(self.markers.targets[at].start()).or_default() += 1;
            }
        }
        parts.iter().all(|(_, part)| {
            let label = list[part.start].start();
            self.markers.named.get(&label).copied().unwrap_or(0)
                == named.get(&label).copied().unwrap_or(0)
        })
    }

    /// Takes the statements `parts` of `list` (each after the statement at its first index,
    /// not empty; a label first where they are a block that nothing reaches, which goes with
    /// them), where their scope stays the same without them: and the goto before them, where
    /// `label` is the label right after them that it names. The labels that their gotos name
    /// go to `pending`. The ranges taken, when they are.
    #[allow(clippy::type_complexity)]
    fn take_dead(
        &mut self,
        list: &'a [Stmt],
        parts: &[(usize, std::ops::Range<usize>)],
        label: Option<&Stmt>,
        (scope, scopes, names): (
            usize,
            &[(&'a [Stmt], Option<&'a ast::Parameters>)],
            &mut HashMap<usize, Names<'a>>,
        ),
        pending: &mut Vec<TextRange>,
    ) -> Option<Vec<TextRange>> {
        let mut own = Names::none(self.markers);
        let mut ranges = Vec::with_capacity(parts.len());
        let mut labels = HashSet::new();
        for (after, part) in parts {
            let dead = &list[part.clone()];
            let (first, last) = (&dead[0], &dead[dead.len() - 1]);
            let labelled = self.markers.labels.contains_key(&first.start());
            if labelled {
                labels.insert(first.start());
            }
            let statements = &dead[usize::from(labelled)..];
            // From the start of its first line, so that no indentation is left there, to the
            // end of the comment after the last, which goes with it.
            let end = self.trailing(last).map_or(last.end(), Ranged::end);
            let range = TextRange::new(self.lines.start(first.start()), end);
            let before = &list[*after];
            let apart = self.lines.alone(self.text, before.range())
                && self.lines.line(before.end()) < self.lines.line(first.start())
                && (list.get(part.end))
                    .is_none_or(|next| self.lines.line(last.end()) < self.lines.line(next.start()));
            let inside = TextRange::new(
                statements.first().map_or(range.end(), Ranged::start),
                range.end(),
            );
            if !apart
                || self.markers.labelled(inside)
                || self.lines.tabbed(before.start(), last.end())
            {
                return None;
            }
            for stmt in statements {
                own.visit_stmt(stmt);
            }
            ranges.push(range);
        }
        let (body, parameters) = scopes[scope];
        let scope =
            (names.entry(scope)).or_insert_with(|| Names::of(body, parameters, self.markers));
        let neutral = own.plain
            && (own.bound.keys()).all(|name| scope.elsewhere(&own, name, false))
            && (own.loaded.keys()).all(|name| scope.elsewhere(&own, name, true));
        if !neutral {
            return None;
        }
        // Gone: a later stretch of the scope finds the names of these nowhere else.
        for (own, all) in [
            (&own.bound, &mut scope.bound),
            (&own.loaded, &mut scope.loaded),
        ] {
            for (name, count) in own {
                if let Some(total) = all.get_mut(name) {
                    *total -= count;
                }
            }
        }
        // Their gotos go with them: a label that only they name goes too (the label of a
        // block that nothing reaches goes with its statements).
        let gotos = &self.markers.ordered_gotos;
        for range in &ranges {
            let inner = gotos.partition_point(|&at| at < range.start());
            for at in gotos[inner..].iter().take_while(|&&at| at < range.end()) {
                let target = self.markers.targets[at];
                if !labels.contains(&target.start()) {
                    pending.push(target);
                }
            }
        }
        for &range in &ranges {
            let edits = vec![(range, self.comments_of(range))];
            match label {
                Some(label) => self.skip_to_next(list, parts[0].0, label, edits),
                None => self.skips.push(Skip {
                    edits,
                    skipped: None,
                    label: None,
                    dead: None,
                    becomes: None,
                }),
            }
        }
        Some(ranges)
    }

    /// Takes the goto at `at` of `list` as a jump to the statement after it (with `edits`
    /// that take what lies between), `label`, both alone on their lines: the goto goes
    /// (`pass` where the list may be left empty), and the label where no other goto names
    /// it.
    fn skip_to_next(&mut self, list: &[Stmt], at: usize, label: &Stmt, mut edits: Edits) {
        let goto = &list[at];
        edits.push(self.gone(goto, if self.may_empty(list, at) { "pass" } else { "" }));
        self.take_each(label, 1, edits, None, None);
    }

    /// Takes each goto to `label` that ends a clause of `stmt`, an `if` right before the
    /// label, at any depth of `if`s that end their clauses: where it goes is where the clause
    /// falls through to (`if C: goto .l` / `label .l` is `if C: pass`).
    fn fall_to(&mut self, stmt: &Stmt, label: &Stmt) {
        let Some(name) = self.markers.labels.get(&label.start()) else {
            return;
        };
        if !self.lines.alone(self.text, label.range()) {
            return;
        }
        for (clause, last) in clause_ends(stmt) {
            // Not one that nothing reaches (after a statement that never falls through, or
            // in a block that nothing reaches): the pass takes those with the dead code.
            let at = clause.len() - 1;
            let reached = (at.checked_sub(1)).is_none_or(|before| {
                !self.never_falls(&clause[before])
                    && !(self.unreached(clause).iter())
                        .any(|&(label, end)| (label..end).contains(&at))
            });
            if reached && self.markers.gotos.get(&last.start()) == Some(name) {
                let pass = if clause.len() == 1 { "pass" } else { "" };
                let edits = vec![self.gone(last, pass)];
                self.take_each(label, 1, edits, None, None);
            }
        }
    }

    /// The comment after `stmt` on its last line, if nothing else lies between.
    fn trailing(&self, stmt: &Stmt) -> Option<&TextRange> {
        let next = (self.comments).partition_point(|comment| comment.start() < stmt.end());
        (self.comments.get(next)).filter(|comment| {
            self.lines.line(comment.start()) == self.lines.line(stmt.end())
                && self.text[usize::from(stmt.end())..usize::from(comment.start())]
                    .trim()
                    .is_empty()
        })
    }

    /// The edit that writes `stmt` as `with`: where that is nothing, up to the comment
    /// after it on its line, if any, which then stands where the statement did.
    fn gone(&self, stmt: &Stmt, with: &str) -> (TextRange, String) {
        match self.trailing(stmt) {
            Some(comment) if with.is_empty() => {
                (TextRange::new(stmt.start(), comment.start()), String::new())
            }
            _ => (stmt.range(), with.to_owned()),
        }
    }

    /// Whether `stmt` is alone on its line, with no comment after it.
    fn bare(&self, stmt: &Stmt) -> bool {
        let line = self.lines.line(stmt.end()) + 1;
        let end = self
            .lines
            .starts
            .get(line)
            .map_or(self.text.len(), |&at| usize::from(at));
        self.lines.alone(self.text, stmt.range())
            && self.text[usize::from(stmt.end())..end].trim().is_empty()
    }

    /// Whether the pass may leave `list` empty where it takes the goto at `at`: the first
    /// statement, and every statement a marker or after a goto up to the next label (what
    /// this pass may take away).
    fn may_empty(&self, list: &[Stmt], at: usize) -> bool {
        let mut dead = false;
        at == 0
            && list.iter().all(|stmt| {
                if self.markers.gotos.contains_key(&stmt.start()) {
                    dead = true;
                } else if self.markers.labels.contains_key(&stmt.start()) {
                    dead = false;
                } else if !dead {
                    return false;
                }
                true
            })
    }

    /// What is left of the text of `range` with its statements gone: each comment that
    /// stands on a line of its own, where it was, and nothing else.
    fn comments_of(&self, range: TextRange) -> String {
        let text = &self.text[range];
        let mut kept = String::with_capacity(text.len() / 4);
        let mut at = range.start();
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                kept.push('\n');
            }
            let start = at;
            at += TextSize::of(line) + TextSize::of("\n");
            let first = self
                .comments
                .partition_point(|comment| comment.start() < start);
            // A comment of its own line: one after a statement goes with it.
            let comment = (self.comments.get(first)).filter(|comment| {
                comment.end() <= start + TextSize::of(line)
                    && self.text[usize::from(start)..usize::from(comment.start())]
                        .trim()
                        .is_empty()
            });
            if let Some(comment) = comment {
                let column = usize::from(comment.start() - start);
                kept.push_str(&" ".repeat(column));
                kept.push_str(&self.text[*comment]);
            }
        }
        kept
    }
}
