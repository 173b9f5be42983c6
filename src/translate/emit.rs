//! Writing a scope's tree out as structured Python: statement lists with their guards
//! (nested as a balanced tree), dispatch loops, post-checks, and each statement as the
//! source has it or as a jump becomes.

use super::conditions::{Part, branches, grouped, guarded, runs, within};
use super::*;
use crate::search::expression;

impl<'a> Ctx<'a> {
    pub(super) fn list_range(&self, list: ListId) -> Option<TextRange> {
        let items = &self.lists[list].items;
        Some(TextRange::new(
            self.nodes[*items.first()?].range.start(),
            self.nodes[*items.last()?].range.end(),
        ))
    }

    /// The entering targets inside `range`: targets are numbered in source order, so those
    /// that start in `range` have consecutive numbers, found by bisection (a list of
    /// thousands of statements asks this of each of them).
    pub(super) fn inside(
        &self,
        range: Option<TextRange>,
        entering: &BTreeSet<i64>,
    ) -> BTreeSet<i64> {
        let Some(range) = range else {
            return BTreeSet::new();
        };
        let first = self
            .targets
            .partition_point(|target| target.range.start() < range.start());
        let end = self
            .targets
            .partition_point(|target| target.range.start() < range.end());
        let inside: BTreeSet<i64> = entering
            .range(first as i64 + 1..end as i64 + 1)
            .copied()
            .filter(|&id| range.contains_range(self.targets[(id - 1) as usize].range))
            .collect();
        crate::splice::count(1 + inside.len());
        inside
    }

    pub(super) fn is_special(&self, range: TextRange) -> bool {
        holds(&self.special, range)
    }

    /// A statement list: its dispatch loop if it is a home, guards when it is entered.
    /// `strict`: the register may also hold numbers past this list's (then even its last
    /// part is guarded). `from`: where comments before its first statement start.
    pub(super) fn list(
        &mut self,
        tr: &Translator<'a>,
        list: ListId,
        entering: &BTreeSet<i64>,
        strict: bool,
        from: TextSize,
    ) -> Result<Vec<Out>, Diagnostic> {
        let items = self.lists[list].items.clone();
        let mut parts: Vec<Item> = items.iter().map(|&node| Item::Node(node)).collect();
        if let Some(&(a, b)) = self.regions.get(&list) {
            parts.splice(a..=b, [Item::Dispatch(list, a, b)]);
        }
        let mut outs = self.chain(tr, &parts, entering, strict)?;
        // Comments that stand alone before the first statement.
        if let Some(&first) = items.first() {
            let range = TextRange::new(
                from.min(self.nodes[first].range.start()),
                self.nodes[first].range.start(),
            );
            let mut comments: Vec<Out> = tr
                .comments(range)
                .into_iter()
                .map(|(line, c)| comment_out(line, c))
                .collect();
            comments.append(&mut outs);
            outs = comments;
        }
        Ok(outs)
    }

    pub(super) fn item_range(&self, item: Item) -> TextRange {
        match item {
            Item::Node(node) => self.nodes[node].range,
            Item::Dispatch(list, a, b) => {
                let items = &self.lists[list].items;
                TextRange::new(
                    self.nodes[items[a]].range.start(),
                    self.nodes[items[b]].range.end(),
                )
            }
        }
    }

    pub(super) fn item_line(&self, tr: &Translator<'a>, item: Item) -> usize {
        tr.text.line(self.item_range(item).start())
    }

    pub(super) fn chain(
        &mut self,
        tr: &Translator<'a>,
        items: &[Item],
        entering: &BTreeSet<i64>,
        strict: bool,
    ) -> Result<Vec<Out>, Diagnostic> {
        let k = &self.k.clone();
        let none = BTreeSet::new();
        if entering.is_empty() {
            let mut body = Vec::new();
            for (index, &item) in items.iter().enumerate() {
                body.extend(self.comments_before(tr, items, index));
                body.extend(self.item(tr, item, &none)?);
            }
            if strict && !items.is_empty() {
                self.uses_k = true;
                let line = self.item_line(tr, items[0]);
                return Ok(vec![Out::block(line, format!("if not {k}"), body)]);
            }
            return Ok(body);
        }
        // Each segment: the targets entered at its top, and its items with their index in
        // `items`.
        type Segment = (BTreeSet<i64>, Vec<(usize, Item)>);
        let mut segments: Vec<Segment> = Vec::new();
        for (index, &item) in items.iter().enumerate() {
            let inside = self.inside(Some(self.item_range(item)), entering);
            if !inside.is_empty() || segments.is_empty() {
                segments.push((inside, vec![(index, item)]));
            } else {
                segments
                    .last_mut()
                    .expect("a segment")
                    .1
                    .push((index, item));
            }
        }
        let mut parts = Vec::with_capacity(segments.len());
        for (inside, members) in segments {
            let mut body = Vec::new();
            for (position, &(index, item)) in members.iter().enumerate() {
                body.extend(self.comments_before(tr, items, index));
                body.extend(self.item(tr, item, if position == 0 { &inside } else { &none })?);
            }
            let line = self.item_line(tr, members[0].1);
            parts.push(Part {
                line,
                last: inside.last().copied(),
                body,
            });
        }
        if parts.len() > 1 || strict {
            self.uses_k = true;
        }
        Ok(guarded(k, parts, strict))
    }

    /// The comments that stand alone between `items[index]` and the item before it, before
    /// a statement (not a dispatch loop, which places itself as early as a line is free).
    fn comments_before(&self, tr: &Translator<'a>, items: &[Item], index: usize) -> Vec<Out> {
        let (Some(&before), Item::Node(node)) =
            (index.checked_sub(1).map(|at| &items[at]), items[index])
        else {
            return Vec::new();
        };
        let range = TextRange::new(
            self.item_range(before).end(),
            self.nodes[node].range.start(),
        );
        (tr.comments(range).into_iter())
            .map(|(line, c)| comment_out(line, c))
            .collect()
    }

    pub(super) fn item(
        &mut self,
        tr: &Translator<'a>,
        item: Item,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        match item {
            Item::Node(node) => self.node(tr, node, entering),
            Item::Dispatch(list, a, b) => {
                let mut inner = entering.clone();
                inner.extend(self.homed.get(&list).cloned().unwrap_or_default());
                let members: Vec<Item> = self.lists[list].items[a..=b]
                    .iter()
                    .map(|&n| Item::Node(n))
                    .collect();
                let mut body = self.chain(tr, &members, &inner, false)?;
                // The loop ends where its last statement does not jump or leave.
                let last = &self.nodes[self.lists[list].items[b]];
                if !matches!(last.stmt, Stmt::Return(_) | Stmt::Raise(_))
                    && !matches!(last.kind, NodeKind::Goto(_))
                {
                    Out::close(&mut body);
                }
                // As early as a line is free: its first guard wants the label's line.
                let mut outs = vec![Out::block(0, "while True", body)];
                outs.extend(self.post_check(LoopKey::Dispatch(list)));
                Ok(outs)
            }
        }
    }

    pub(super) fn post_check(&mut self, key: LoopKey) -> Vec<Out> {
        let exact = self.post.get(&key);
        let homes = self.post_homes.get(&key);
        let groups = match (exact, homes) {
            (None, None) => return Vec::new(),
            (Some(actions), None) => runs(grouped(
                (actions.iter())
                    .map(|(&number, action)| (number, action.clone()))
                    .collect(),
            )),
            // The numbers of the jumps to labels first, each run without the numbers
            // between (a computed goto's may be one of them), then the homes' ranges from
            // the innermost out. A number whose range has its action already needs none.
            (exact, Some(homes)) => {
                let depth = |list: ListId| {
                    std::iter::successors(Some(list), |&list| {
                        Some(self.nodes[self.lists[list].parent?].list)
                    })
                    .count()
                };
                let mut ranges: Vec<(usize, (i64, i64), &String)> = (homes.iter())
                    .map(|(&home, action)| (depth(home), self.under.ranges[&home], action))
                    .collect();
                ranges.sort_by_key(|&(depth, ..)| std::cmp::Reverse(depth));
                let mut groups: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
                for (&number, action) in exact.into_iter().flatten() {
                    let ranged = (ranges.iter())
                        .find(|(_, (lo, hi), _)| (*lo..=*hi).contains(&number))
                        .map(|&(.., action)| action);
                    match groups.last_mut() {
                        _ if ranged == Some(action) => {}
                        Some((last, runs)) if last == action && runs[0].1 + 1 == number => {
                            runs[0].1 = number;
                        }
                        _ => groups.push((action.clone(), vec![(number, number)])),
                    }
                }
                for (_, range, action) in ranges {
                    groups.push((action.clone(), vec![range]));
                }
                groups
            }
        };
        let k = &self.k.clone();
        self.uses_k = true;
        match groups.as_slice() {
            [(action, _)] => vec![Out::compound(0, format!("if {k}: {action}"))],
            _ => vec![Out::block(0, format!("if {k}"), branches(k, &groups))],
        }
    }

    pub(super) fn verbatim(&self, tr: &Translator<'a>, node: NodeId) -> Out {
        let simple = matches!(
            self.nodes[node].kind,
            NodeKind::Simple | NodeKind::Break | NodeKind::Continue
        );
        let (line, pieces, commented) = tr.text.statement(self.nodes[node].range);
        Out::Stmt {
            line,
            pieces,
            kind: match (simple, commented) {
                (false, _) => Kind::Compound,
                (true, false) => Kind::Simple,
                (true, true) => Kind::Noted,
            },
        }
    }

    pub(super) fn node(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        let kind = self.nodes[node].kind;
        let range = self.nodes[node].range;
        let line = tr.text.line(range.start());
        let k = &self.k.clone();
        if kind == NodeKind::MarkerImport {
            return Ok(Vec::new());
        }
        if entering.is_empty() && !self.is_special(range) && kind != NodeKind::TryInner {
            return Ok(vec![self.verbatim(tr, node)]);
        }
        let stmt = self.nodes[node].stmt;
        let lists = self.nodes[node].lists.clone();
        let mut outs = Vec::new();
        match kind {
            NodeKind::Label(target) | NodeKind::Case(target) => {
                // A comment after the label stays on its line, before what follows.
                if let Some(comment) = tr.text.trailing_comment(range) {
                    outs.push(comment_out(line, comment));
                }
                if entering.contains(&self.targets[target].id) {
                    match self.reset_after(node) {
                        Some(next) => _ = self.late_resets.insert(next),
                        None => outs.push(Out::prefix(line, format!("{k} = 0"))),
                    }
                }
            }
            NodeKind::Goto(_) | NodeKind::Computed(_) | NodeKind::Break | NodeKind::Continue => {
                match self.codes.get(&node) {
                    Some(code) => {
                        let mut code = code.clone();
                        // A comment after the goto ends what it becomes, wherever that is.
                        if let Some(comment) = tr.text.trailing_comment(range) {
                            noted(&mut code, comment);
                        }
                        outs.extend(code);
                    }
                    None => outs.push(self.verbatim(tr, node)),
                }
            }
            NodeKind::Simple | NodeKind::MarkerImport => match self.codes.get(&node) {
                Some(code) => outs.extend(code.clone()),
                None => outs.push(self.verbatim(tr, node)),
            },
            NodeKind::If => {
                let Stmt::If(stmt) = stmt else { unreachable!() };
                let parts: Vec<BTreeSet<i64>> = lists
                    .iter()
                    .map(|&list| self.inside(self.list_range(list), entering))
                    .collect();
                let last_entered = parts.iter().rposition(|part| !part.is_empty());
                let mut tests: Vec<(Option<&ast::Expr>, TextSize, usize, &'a [Stmt])> =
                    vec![(Some(&stmt.test), stmt.start(), line, &stmt.body)];
                for clause in &stmt.elif_else_clauses {
                    tests.push((
                        clause.test.as_ref(),
                        clause.start(),
                        tr.text.line(clause.start()),
                        &clause.body,
                    ));
                }
                for (index, (test, start, at, body)) in tests.into_iter().enumerate() {
                    let word = match (index, test) {
                        (0, _) => "if",
                        (_, Some(_)) => "elif",
                        (_, None) => "else",
                    };
                    let header = match test {
                        None => "else".to_owned(),
                        Some(test) if last_entered.is_some_and(|last| index <= last) => {
                            let c = tr.text.slice(test.range());
                            if !parts[index].is_empty() {
                                if parts[index].len() == entering.len() {
                                    format!("{word} {k} or ({c})")
                                } else {
                                    format!(
                                        "{word} ({}) if {k} else ({c})",
                                        within(k, &parts[index])
                                    )
                                }
                            } else {
                                format!("{word} not {k} and ({c})")
                            }
                        }
                        Some(_) => tr.text.header(start, body[0].start()),
                    };
                    let inner = self.list(tr, lists[index], &parts[index], false, start)?;
                    outs.push(Out::block(at, header, inner));
                }
            }
            NodeKind::While | NodeKind::For => {
                let orelse = self.inside(self.list_range(lists[1]), entering);
                let (header, entered, body, else_body) = match stmt {
                    Stmt::While(stmt) => {
                        let entered = self.inside(self.list_range(lists[0]), entering);
                        let c = tr.text.slice(stmt.test.range());
                        let header = if entering.is_empty() {
                            tr.text.header(stmt.start(), stmt.body[0].start())
                        } else if orelse.is_empty() {
                            format!("while {k} or ({c})")
                        } else if entered.is_empty() {
                            format!("while not {k} and ({c})")
                        } else {
                            format!("while ({}) if {k} else ({c})", within(k, &entered))
                        };
                        (header, entered, &stmt.body, &stmt.orelse)
                    }
                    Stmt::For(stmt) => {
                        let header = if orelse.is_empty() {
                            tr.text.header(stmt.start(), stmt.body[0].start())
                        } else if stmt.is_async {
                            return Err(self.refuse(
                                range,
                                "a goto into the `else` clause of an `async for` cannot be \
                                 translated",
                                "move the label out of the `else` clause",
                            ));
                        } else {
                            format!(
                                "for {} in (() if {k} else ({}))",
                                tr.text.slice(stmt.target.range()),
                                tr.text.slice(stmt.iter.range())
                            )
                        };
                        // A `for` body is never entered (SPEC: no jump into it).
                        (header, BTreeSet::new(), &stmt.body, &stmt.orelse)
                    }
                    _ => unreachable!("a loop"),
                };
                let inner = self.list(tr, lists[0], &entered, false, stmt.start())?;
                outs.push(Out::block(line, header, inner));
                self.orelse(tr, else_body, body.last(), lists[1], &orelse, &mut outs)?;
                outs.extend(self.post_check(LoopKey::Source(node)));
            }
            NodeKind::Try | NodeKind::TryInner => {
                let Stmt::Try(stmt) = stmt else {
                    unreachable!()
                };
                outs.extend(self.try_parts(tr, stmt, &lists, entering, kind == NodeKind::Try)?);
            }
            NodeKind::TryOuter => {
                let Stmt::Try(stmt) = stmt else {
                    unreachable!()
                };
                let inner_list = lists[0];
                let inner_node = self.lists[inner_list].items[0];
                let inside = self.inside(self.list_range(inner_list), entering);
                let nested = self.regions.contains_key(&inner_list);
                if nested {
                    let body = self.list(tr, inner_list, &inside, false, stmt.start())?;
                    outs.push(Out::block(line, "try", body));
                } else {
                    let inner_lists = self.nodes[inner_node].lists.clone();
                    outs.extend(self.try_parts(tr, stmt, &inner_lists, &inside, false)?);
                }
                outs.push(self.finally(tr, stmt, lists[1])?);
            }
            NodeKind::With => {
                let Stmt::With(stmt) = stmt else {
                    unreachable!()
                };
                let header = tr.text.header(stmt.start(), stmt.body[0].start());
                let mut inner = self.list(tr, lists[0], &BTreeSet::new(), false, stmt.start())?;
                if self.shells.contains(&node) {
                    Out::close(&mut inner);
                    let mut shell = vec![Out::block(0, "while True", inner)];
                    if self.handoffs.contains(&node) {
                        // The register goes on past the statement only when its body
                        // ended through the loop's end: not when `__exit__` swallowed an
                        // exception raised mid-jump. Shells side by side share a `w`,
                        // cleared once read, but one inside another has its own: when
                        // this one's `__exit__` raises after its body set `w`, a shell
                        // around it that swallows the exception must not read this one's
                        // jump. In any other shell nothing runs between a jump and its
                        // leaving, so an exception that `__exit__` swallows found the
                        // register at 0 (`Ctx::find_handoffs`).
                        let depth = self
                            .withs_between(node, 0)
                            .into_iter()
                            .filter(|with| self.handoffs.contains(with))
                            .count();
                        let w = &match depth {
                            0 => tr.names.w.clone(),
                            _ => format!("{}{}", tr.names.w, depth + 1),
                        };
                        outs.push(Out::prefix(0, format!("{w} = 0")));
                        shell.push(Out::line(0, format!("{w} = {k}")));
                        outs.push(Out::block(line, header, shell));
                        outs.push(Out::prefix(0, format!("{k} = {w}")));
                        outs.push(Out::prefix(0, format!("{w} = 0")));
                    } else {
                        outs.push(Out::block(line, header, shell));
                    }
                    outs.extend(self.post_check(LoopKey::Shell(node)));
                } else {
                    outs.push(Out::block(line, header, inner));
                    if self.sets_inside(range) {
                        outs.push(Out::prefix(0, format!("{k} = 0")));
                    }
                }
            }
            NodeKind::Match => {
                let Stmt::Match(stmt) = stmt else {
                    unreachable!()
                };
                let parts: Vec<BTreeSet<i64>> = lists
                    .iter()
                    .map(|&list| self.inside(self.list_range(list), entering))
                    .collect();
                let mut matched = Vec::new();
                for (index, case) in stmt.cases.iter().enumerate() {
                    let header = tr.text.header(case.start(), case.body[0].start());
                    let inner =
                        self.list(tr, lists[index], &BTreeSet::new(), false, case.start())?;
                    matched.push(Out::block(tr.text.line(case.start()), header, inner));
                }
                let header = tr.text.header(stmt.start(), stmt.cases[0].start());
                let plain = Out::block(line, header, matched);
                if entering.is_empty() {
                    outs.push(plain);
                } else {
                    // Entering a case body runs that body without its pattern: the entered
                    // bodies once more, reached only with the register set.
                    self.uses_k = true;
                    outs.push(Out::block(line, format!("if not {k}"), vec![plain]));
                    let entered: Vec<usize> =
                        (0..parts.len()).filter(|&i| !parts[i].is_empty()).collect();
                    for (position, &index) in entered.iter().enumerate() {
                        let case = &stmt.cases[index];
                        let inner =
                            self.list(tr, lists[index], &parts[index], false, case.start())?;
                        let at = tr.text.line(case.start());
                        let hi = parts[index].last().expect("entered");
                        outs.push(if position + 1 == entered.len() {
                            Out::block(at, "else", inner)
                        } else {
                            Out::block(at, format!("elif {k} <= {hi}"), inner)
                        });
                    }
                }
            }
            NodeKind::Switch(id) => outs.extend(self.switch(tr, node, id, entering)?),
            NodeKind::Def | NodeKind::Class => outs.extend(self.definition(tr, node)?),
        }
        if self.late_resets.contains(&node) {
            outs.push(Out::prefix(0, format!("{k} = 0")));
        }
        Ok(outs)
    }

    /// The `if` after a label whose reset can wait until after it, so that the reset joins
    /// the statement after the `if` instead of taking the label's line from its header
    /// (`label .l` then `if x: goto .m`, the shape of generated code). That holds when
    /// every branch of the `if` is a goto that sets the register, the label and the `if`
    /// are on the same side of their list's dispatch loop (not the label at the end of a
    /// loop whose post-check reads the register, nor before a loop whose guards read it),
    /// and no `try` or `with` holds the label: then nothing reads the register before the
    /// reset (an exception from the test leaves the function).
    fn reset_after(&self, label: NodeId) -> Option<NodeId> {
        let Node { list, index, .. } = self.nodes[label];
        if let Some(&(first, last)) = self.regions.get(&list) {
            let inside = |at: usize| first <= at && at <= last;
            if inside(index) != inside(index + 1) {
                return None;
            }
        }
        let next = *self.lists[list].items.get(index + 1)?;
        let jumps_only = self.nodes[next].kind == NodeKind::If
            && self.nodes[next].lists.iter().all(|&body| {
                let items = &self.lists[body].items;
                items.len() == 1
                    && matches!(self.nodes[items[0]].kind, NodeKind::Goto(_))
                    && self.sets_inside(self.nodes[items[0]].range)
            });
        if !jumps_only {
            return None;
        }
        let mut holder = self.lists[list].parent;
        while let Some(node) = holder {
            if matches!(
                self.nodes[node].kind,
                NodeKind::Try | NodeKind::TryOuter | NodeKind::TryInner | NodeKind::With
            ) {
                return None;
            }
            holder = self.lists[self.nodes[node].list].parent;
        }
        Some(next)
    }

    pub(super) fn refuse(&self, range: TextRange, message: &str, help: &str) -> Diagnostic {
        Diagnostic::new(Code::CannotRewrite, range, message).help(help)
    }

    /// Whether a jump that sets the register starts inside `range`.
    pub(super) fn sets_inside(&self, range: TextRange) -> bool {
        holds(&self.setters, range)
    }

    pub(super) fn orelse(
        &mut self,
        tr: &Translator<'a>,
        orelse: &'a [Stmt],
        body_last: Option<&'a Stmt>,
        list: ListId,
        entering: &BTreeSet<i64>,
        outs: &mut Vec<Out>,
    ) -> Result<(), Diagnostic> {
        let Some(first) = orelse.first() else {
            return Ok(());
        };
        let line = tr.text.keyword_line(first.start(), TokenKind::Else);
        let from = body_last.map_or(first.start(), Ranged::end);
        let inner = self.list(tr, list, entering, false, from)?;
        outs.push(Out::block(line, "else", inner));
        Ok(())
    }

    /// A `try` statement's parts: its body, handlers and `else` (and its `finally` when
    /// `with_finally`).
    pub(super) fn try_parts(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a ast::StmtTry,
        lists: &[ListId],
        entering: &BTreeSet<i64>,
        with_finally: bool,
    ) -> Result<Vec<Out>, Diagnostic> {
        let k = &self.k.clone();
        let line = tr.text.line(stmt.start());
        let handlers = stmt.handlers.len();
        let body_in = self.inside(self.list_range(lists[0]), entering);
        let else_in = self.inside(self.list_range(lists[1 + handlers]), entering);
        let mut outs = Vec::new();
        let body = self.list(tr, lists[0], &body_in, !else_in.is_empty(), stmt.start())?;
        outs.push(Out::block(line, "try", body));
        let body_range = self.list_range(lists[0]);
        let resets = body_range.is_some_and(|range| self.sets_inside(range)) && self.uses_k;
        for (index, handler) in stmt.handlers.iter().enumerate() {
            let ExceptHandler::ExceptHandler(handler) = handler;
            let header = tr.text.header(handler.start(), handler.body[0].start());
            let mut inner = self.list(
                tr,
                lists[1 + index],
                &BTreeSet::new(),
                false,
                handler.start(),
            )?;
            if resets {
                // An exception raised while a jump was on its way (by a `finally` or an
                // `__exit__`) ends the jump: the register must not stay set.
                inner.insert(0, Out::prefix(0, format!("{k} = 0")));
            }
            outs.push(Out::block(tr.text.line(handler.start()), header, inner));
        }
        self.orelse(
            tr,
            &stmt.orelse,
            None,
            lists[1 + handlers],
            &else_in,
            &mut outs,
        )?;
        if with_finally && !stmt.finalbody.is_empty() {
            outs.push(self.finally(tr, stmt, lists[2 + handlers])?);
        }
        Ok(outs)
    }

    /// A `finally` body. One that reads the register runs with it cleared and gives it back
    /// at its end, so that a jump passing through (which set it) goes on afterwards; so does
    /// one with a `break` or `continue` of its own, which ends such a jump (language
    /// reference, section 4): leaving the body that way skips the register's return.
    pub(super) fn finally(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a ast::StmtTry,
        list: ListId,
    ) -> Result<Out, Diagnostic> {
        let k = &self.k.clone();
        let first = stmt.finalbody[0].start();
        let line = tr.text.keyword_line(first, TokenKind::Finally);
        let mut inner = self.list(tr, list, &BTreeSet::new(), false, first)?;
        let final_range = self.list_range(list).expect("a finally body");
        let try_range = TextRange::new(stmt.start(), final_range.start());
        let ends_jumps = self.is_special(final_range) || super::skips::loop_exit(&stmt.finalbody);
        if ends_jumps && self.sets_inside(try_range) {
            let count = tr.saves.get() + 1;
            tr.saves.set(count);
            let saved = format!("{}{count}", tr.names.f);
            inner.insert(0, Out::prefix(0, format!("{saved} = {k}; {k} = 0")));
            inner.push(Out::line(0, format!("{k} = {saved}")));
            self.uses_k = true;
        }
        Ok(Out::block(line, "finally", inner))
    }

    pub(super) fn switch(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        id: SwitchId,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        let (k, v) = (&self.k.clone(), &tr.names.v);
        let line = tr.text.line(self.nodes[node].range.start());
        let switch = self.scope.switch(id);
        let body = self.nodes[node].lists[0];
        // The case values in Python's order, each with its case's number.
        let mut keys = Vec::new();
        for (key, marker) in switch_cases(self.scope, id) {
            let MarkerKind::Case { values, .. } = &self.scope.marker(marker).kind else {
                continue;
            };
            let Some(value) = values.iter().find(|value| &value.value == key) else {
                continue;
            };
            let start = self.scope.marker(marker).range.start();
            let Some(target) = self.target_at(start) else {
                continue;
            };
            keys.push((
                format!("({})", tr.text.slice(value.range)),
                self.targets[target].id,
            ));
        }
        let head = vec![
            Out::line(line, format!("{v} = ({})", tr.text.slice(switch.subject))),
            Out::compound(0, format!("try: {k} = {}", expression(v, &keys))),
            Out::compound(0, format!("except BaseException: {k} = 0")),
        ];
        self.uses_k = true;
        let mut outs = Vec::new();
        let inner_entering = self.inside(self.list_range(body), entering);
        if inner_entering.is_empty() {
            outs.extend(head);
        } else {
            outs.push(Out::block(line, format!("if not {k}"), head));
        }
        let mut all = inner_entering;
        all.extend(self.homed.get(&body).cloned().unwrap_or_default());
        let items: Vec<Item> = self.lists[body]
            .items
            .iter()
            .map(|&n| Item::Node(n))
            .collect();
        let mut looped = self.chain(tr, &items, &all, false)?;
        Out::close(&mut looped);
        let mut inner = vec![Out::block(0, "while True", looped)];
        inner.extend(self.post_check(LoopKey::Source(node)));
        outs.push(Out::block(0, format!("if {k}"), inner));
        Ok(outs)
    }

    /// A nested `def` or `class`: its decorators (gotopy's dropped when it is rewritten),
    /// its header, and its body translated as a scope of its own.
    pub(super) fn definition(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
    ) -> Result<Vec<Out>, Diagnostic> {
        let stmt = self.nodes[node].stmt;
        let (decorators, name, body, keywords): (
            &[ast::Decorator],
            TextRange,
            &'a [Stmt],
            &[TokenKind],
        ) = match stmt {
            Stmt::FunctionDef(def) => (
                &def.decorator_list,
                def.name.range,
                &def.body,
                &[TokenKind::Def, TokenKind::Async],
            ),
            Stmt::ClassDef(class) => (
                &class.decorator_list,
                class.name.range,
                &class.body,
                &[TokenKind::Class],
            ),
            _ => unreachable!("a definition"),
        };
        let Some(scope) = tr.scope_of(name) else {
            return Ok(vec![self.verbatim(tr, node)]);
        };
        let mut outs = Vec::new();
        let mut free_line = None;
        for (index, decorator) in decorators.iter().enumerate() {
            let at = tr.text.line(decorator.start());
            if scope.rewritten && scan::is_goto_decorator(&decorator.expression) {
                if index == 0 || free_line.is_some() {
                    free_line = free_line.or(Some(at));
                }
                continue;
            }
            let text = tr.text.slice(decorator.range());
            let text = if text.starts_with('@') {
                text.to_owned()
            } else {
                format!("@{text}")
            };
            outs.push(Out::compound(free_line.take().unwrap_or(at), text));
        }
        let after = decorators.last().map_or(stmt.start(), Ranged::end);
        let keyword = tr.text.token_after(after, keywords).unwrap_or(stmt.start());
        let header = tr.text.header(keyword, body[0].start());
        let line = free_line.unwrap_or_else(|| tr.text.line(keyword));
        let inner = tr.scope_body(scope, body, keyword)?;
        outs.push(Out::block(line, header, inner));
        Ok(outs)
    }
}

/// Whether one of `ranges` (sorted by start, disjoint statements) lies inside `range`.
pub(super) fn holds(ranges: &[TextRange], range: TextRange) -> bool {
    let first = ranges.partition_point(|inner| inner.start() < range.start());
    ranges
        .get(first)
        .is_some_and(|inner| range.contains_range(*inner))
}

/// `code` (what a goto becomes) ending in `comment`: on its last simple statement, which
/// then joins no statement after it; a comment that finds none is left out.
fn noted(code: &mut [Out], comment: &str) {
    if let Some(Out::Stmt {
        pieces,
        kind: kind @ (Kind::Simple | Kind::Noted),
        ..
    }) = code.last_mut()
        && let Some(Piece::Rel(last)) = pieces.last_mut()
    {
        last.push_str("  ");
        last.push_str(comment);
        *kind = Kind::Noted;
    }
}
