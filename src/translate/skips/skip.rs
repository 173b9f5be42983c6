//! The first passes' forward skips and loops, each an `if` and its goto in one statement
//! list ([`Shape::Merge`], [`Shape::Skip`], [`Shape::Nested`], [`Shape::Else`],
//! [`Shape::Loop`], [`Shape::Until`]), and the test of a skip written as its `not`.

use super::repeat::Held;
use super::*;

impl<'a> Finder<'a> {
    /// The runs of `if TEST: goto .l` to one label in `list`, each one `if` whose test is
    /// theirs joined by `or` ([`Shape::Merge`]): the first `if` keeps its lines, the others'
    /// are left empty.
    pub(super) fn merges<'s>(&mut self, list: &'s [Stmt]) {
        let markers = self.markers;
        let lone = |stmt: &'s Stmt| -> Option<(&'a String, &'s ast::Expr)> {
            let (branch, goto) = lone(stmt)?;
            Some((markers.gotos.get(&goto.start())?, &*branch.test))
        };
        let mut at = 0;
        while at < list.len() {
            let Some((name, first)) = lone(&list[at]) else {
                at += 1;
                continue;
            };
            let end = (at + 1..list.len())
                .find(|&next| lone(&list[next]).is_none_or(|(other, _)| other != name))
                .unwrap_or(list.len());
            let run = &list[at..end];
            at = end;
            let [_, second, ..] = run else { continue };
            let gone = TextRange::new(self.lines.start(second.start()), run[run.len() - 1].end());
            let tests: Vec<String> = (run.iter())
                .filter_map(|stmt| Some(self.or_operand(lone(stmt)?.1)))
                .collect();
            // The tests after the first join its line: each must fit on one, and the lines
            // they leave hold no comment.
            let fits = tests[1..].iter().all(|test| !test.contains('\n'))
                && !self.text[gone].contains('#')
                && !self.lines.tabbed(run[0].start(), gone.end());
            if !fits {
                continue;
            }
            self.skips.push(Skip {
                edits: vec![(first.range(), tests.join(" or ")), self.emptied(gone)],
                skipped: None,
                label: None,
                dead: None,
                becomes: None,
            });
        }
    }

    /// The swaps of one list ([`Shape::Swap`]): for each `if` that a label follows, its
    /// body's last two statements when they are `if TEST: goto` that label and a one-line
    /// `return`, `raise`, `break` or `continue`, each alone on its line.
    pub(super) fn swaps(&mut self, list: &[Stmt]) {
        let mut later: HashSet<&str> = HashSet::new();
        for stmt in list.iter().rev() {
            if let Some(name) = self.markers.labels.get(&stmt.start()) {
                later.insert(name);
                continue;
            }
            let Stmt::If(outer) = stmt else { continue };
            let [.., test, exit] = &*outer.body else {
                continue;
            };
            let Some((branch, goto)) = lone(test) else {
                continue;
            };
            let named = (self.markers.gotos.get(&goto.start()))
                .is_some_and(|name| later.contains(name.as_str()));
            let alone = |stmt: &Stmt| self.lines.alone(self.text, stmt.range());
            let fits = named
                && jumps(exit)
                && alone(goto)
                && alone(exit)
                && self.lines.line(exit.start()) == self.lines.line(exit.end())
                && self.lines.line(goto.end()) < self.lines.line(exit.start());
            if !fits {
                continue;
            }
            let text = |stmt: &Stmt| self.text[stmt.range()].to_owned();
            self.skips.push(Skip {
                edits: vec![
                    self.negated_test(stmt, &branch.test),
                    (goto.range(), text(exit)),
                    (exit.range(), text(goto)),
                ],
                skipped: None,
                label: None,
                dead: None,
                becomes: None,
            });
        }
    }

    /// The edit that takes the text of `range` out but for its line breaks: its lines stay,
    /// empty.
    fn emptied(&self, range: TextRange) -> (TextRange, String) {
        (range, "\n".repeat(self.text[range].matches('\n').count()))
    }

    /// The edit that makes the goto `goto` name `to`, written as the source writes it (`goto
    /// .l`, `goto.l`, another name for `goto`): its label's name, replaced.
    pub(super) fn renamed(&self, goto: TextRange, to: &str) -> Option<(TextRange, String)> {
        let name = self.markers.gotos.get(&goto.start())?;
        self.text[goto].ends_with(name.as_str()).then(|| {
            let at = goto.end() - TextSize::of(name.as_str());
            (TextRange::new(at, goto.end()), to.to_owned())
        })
    }

    /// The text of `test` as an operand of `or`: as it is where it [`binds`] at least as
    /// tightly, else in parentheses (the parentheses around a test are not part of its
    /// range).
    fn or_operand(&self, test: &ast::Expr) -> String {
        let text = &self.text[test.range()];
        match binds(test) {
            true => text.to_owned(),
            false => format!("({text})"),
        }
    }

    /// The skips (or elses) of one list, the first of two that cross left out.
    pub(super) fn skips_and_elses(&mut self, list: &[Stmt]) {
        // The labels of the list by name, and the ends of the skips taken around the
        // statement at hand, innermost last (taken skips nest, so the innermost ends first).
        let labels: HashMap<&str, usize> = (list.iter().enumerate())
            .filter_map(|(at, stmt)| Some((self.markers.labels.get(&stmt.start())?.as_str(), at)))
            .collect();
        let mut around: Vec<usize> = Vec::new();
        for (at, stmt) in list.iter().enumerate() {
            let Some((name, goto)) = self.goto_branch(stmt) else {
                continue;
            };
            let Some(&end) = labels.get(name.as_str()).filter(|&&end| end > at + 1) else {
                continue;
            };
            let label = &list[end];
            while around.last().is_some_and(|&to| to < at) {
                around.pop();
            }
            // A skip that ends inside this one would cross it.
            if around.last().is_some_and(|&to| to < end) {
                continue;
            }
            let skipped = TextRange::new(list[at + 1].start(), list[end - 1].end());
            let alone = |range: TextRange| self.lines.alone(self.text, range);
            let fits = self.lines.line(goto.end()) < self.lines.line(skipped.start())
                && self.lines.line(skipped.end()) < self.lines.line(label.start())
                && alone(label.range())
                && (self.shape != Shape::Else || alone(goto))
                && !self.lines.tabbed(stmt.start(), label.end());
            if !fits {
                continue;
            }
            let Stmt::If(branch) = stmt else { continue };
            let edits = if self.shape != Shape::Else {
                // The goto goes, with the blanks before it on its line, and so do the `if`
                // statements it nests in: `if A:` / `if B:` / `goto .l` skips where
                // `not A or not B` (each test made where it was, and only where it was).
                let first = branch.body[0].start();
                let blanks = self.text[..usize::from(first)]
                    .trim_end_matches([' ', '\t'])
                    .len();
                let blanks = TextSize::try_from(blanks).unwrap_or_default();
                let gone = TextRange::new(blanks, goto.end());
                let chain = nested(stmt);
                let tests: Vec<String> = (chain.iter())
                    .filter_map(|stmt| match stmt {
                        Stmt::If(branch) => Some(negated(self.text, &branch.test)),
                        _ => None,
                    })
                    .collect();
                // An inner test joins the outer's line: it must fit on one.
                let one_line = tests[1..].iter().all(|test| !test.contains('\n'));
                // Nor do they skip a label, which the loop and block passes after would
                // take out of the `if` (a goto into a skip stays a goto).
                let nested = tests.len() > 1
                    && (self.text[gone].contains('#') || self.markers.labelled(skipped));
                if !one_line || nested || self.shape == Shape::Nested && tests.len() == 1 {
                    continue;
                }
                let test = match tests.len() {
                    1 => self.negated_test(stmt, &branch.test),
                    _ => self.test_edit(stmt, branch.test.range(), tests.join(" or ")),
                };
                vec![test, self.emptied(gone)]
            } else {
                // The goto's line is the `else:`, as deep as the `if`.
                let indent = self.indent(stmt);
                let line = self.lines.start(goto.start());
                vec![(TextRange::new(line, goto.end()), format!("{indent}else:"))]
            };
            around.push(end);
            // Deeper from the line after the goto's: the comments before the first
            // statement too.
            let after = self.lines.starts[self.lines.line(goto.end()) + 1];
            self.skips.push(Skip {
                edits,
                skipped: Some(TextRange::new(after, skipped.end())),
                label: Some(label.range()),
                dead: None,
                becomes: None,
            });
        }
    }

    /// The loops of one list: `label .l` then an `if` whose body ends with `goto .l`.
    pub(super) fn loops(&mut self, list: &[Stmt]) {
        for (at, stmt) in list.iter().enumerate().skip(1) {
            let Some((name, goto)) = self.goto_branch(stmt) else {
                continue;
            };
            let label = &list[at - 1];
            let Stmt::If(branch) = stmt else { continue };
            let body = &branch.body[..branch.body.len() - 1];
            let last = body.last().map_or(stmt.start(), Ranged::end);
            let fits = self.markers.labels.get(&label.start()) == Some(name)
                && !(self.markers)
                    .reached_inside(label.start(), TextRange::new(stmt.start(), last))
                && self.lines.alone(self.text, label.range())
                && self.lines.alone(self.text, goto)
                && self.lines.line(last) < self.lines.line(goto.start())
                && !loop_exit(body);
            if !fits {
                continue;
            }
            let keyword = TextRange::at(stmt.start(), TextSize::of("if"));
            let line = self.lines.start(goto.start());
            self.skips.push(Skip {
                edits: vec![
                    (keyword, "while".to_owned()),
                    (TextRange::new(line, goto.end()), String::new()),
                ],
                skipped: None,
                label: Some(label.range()),
                dead: None,
                becomes: None,
            });
        }
    }

    /// The loops of one list that leave at their head ([`Shape::Until`]): `label .l`, an
    /// `if` with no other branch whose body E ends in a statement that never falls through,
    /// some statements S, then `goto .l`. The `if`'s header becomes `while not (TEST):`
    /// over S, which moves up into the lines E left, each goto to `.l` in S (under `if`,
    /// `with` and `try` statements only) `continue`, and E goes after the loop, on the lines
    /// that end with the goto's, a blank line before it. Taken where the header's lines hold
    /// no comment and E's no string over several lines, no label lies between the `if` and
    /// the goto, no `break` or `continue` in S would be the new loop's, and no other such
    /// loop of the pass meets this one; E's `break`, `continue` and `return` leave what they
    /// left before, as the loop is all that comes between.
    pub(super) fn untils(&mut self, list: &[Stmt]) {
        let (lines, text) = (self.lines, self.text);
        let mut held: Option<Held> = None;
        for (at, stmt) in list.iter().enumerate().skip(1) {
            let (label, Stmt::If(branch)) = (&list[at - 1], stmt) else {
                continue;
            };
            let (Some(name), Some(exit), true) = (
                self.markers.labels.get(&label.start()),
                branch.body.last(),
                branch.elif_else_clauses.is_empty(),
            ) else {
                continue;
            };
            // The goto back: the first goto of the list after the `if`.
            let Some(back) = (at + 1..list.len())
                .find(|&next| self.markers.gotos.contains_key(&list[next].start()))
            else {
                continue;
            };
            let (body, goto) = (&list[at + 1..back], list[back].range());
            let Some(first) = body.first() else { continue };
            // The header's last line, the colon's (after the test's closing parentheses).
            let rest = &text[usize::from(branch.test.end())..];
            let Some(colon) = rest.find(':').and_then(|at| TextSize::try_from(at).ok()) else {
                continue;
            };
            let header = lines.line(branch.test.end() + colon);
            let (last, end) = (lines.line(exit.end()), lines.line(goto.start()));
            let Some(&after) = lines.starts.get(end + 1) else {
                continue;
            };
            let site = TextRange::new(lines.starts[end], after);
            let region = TextRange::new(label.start(), goto.end());
            let held = held.get_or_insert_with(|| Held::of(self, list));
            let inner: Vec<TextRange> = (held.found(name, at + 1, back).iter())
                .map(|&(_, goto)| goto)
                .collect();
            let fits = self.markers.gotos.get(&goto.start()) == Some(name)
                && lines.alone(text, label.range())
                && !text[usize::from(stmt.start())..usize::from(lines.starts[header + 1])]
                    .contains('#')
                && header < lines.line(branch.body[0].start())
                && text[site].trim() == &text[goto]
                && self.never_falls(exit)
                && !lines.inside[header + 1..=last + 1].contains(&true)
                && !lines.tabbed(label.start(), goto.end())
                && !self
                    .markers
                    .labelled(TextRange::new(stmt.start(), goto.start()))
                && self.gotos_within(TextRange::new(first.start(), goto.start()), name)
                    == inner.len()
                && inner.iter().all(|&goto| lines.alone(text, goto))
                && !held.exits(at + 1, back)
                && !(self.shifted.iter()).any(|other| other.intersect(region).is_some());
            if !fits {
                continue;
            }
            // The gotos back in S, and S's last line once E's lines and those of the gotos
            // that go are out.
            let (mut edits, gone) = self.continues(body, &inner);
            let Some(bottom) = (end - 1)
                .checked_sub(last - header + gone)
                .filter(|&bottom| bottom > header)
            else {
                continue;
            };
            // E's lines, as deep as the `if`, and the lines that go after them.
            let exits = TextRange::new(lines.starts[header + 1], lines.starts[last + 1]);
            let moved = self.reindented(exits, self.indent(&branch.body[0]), self.indent(stmt));
            edits.extend([
                (
                    TextRange::at(stmt.start(), TextSize::of("if")),
                    "while".to_owned(),
                ),
                self.negated_test(stmt, &branch.test),
                (exits, String::new()),
                (site, format!("\n{moved}{}", "\n".repeat(gone))),
            ]);
            self.shifted.push(region);
            let skipped = TextRange::new(lines.starts[header + 1], lines.starts[bottom]);
            self.take_each(label, inner.len() + 1, edits, Some(skipped), None);
        }
    }

    /// The edits that write each of `gotos`, back to the head of a loop made of `body`, as
    /// `continue`, or take it out where `body` ends with it anyway: its line goes, or it is
    /// `pass` where it is its clause's only statement (a comment on its line keeps it as
    /// `continue`); with how many lines go.
    fn continues(&self, body: &[Stmt], gotos: &[TextRange]) -> (Vec<(TextRange, String)>, usize) {
        let (lines, text) = (self.lines, self.text);
        let ends = tails(body);
        let mut gone = 0;
        let edits = (gotos.iter())
            .map(|&goto| {
                let line = lines.line(goto.start());
                let whole = TextRange::new(lines.starts[line], lines.starts[line + 1]);
                let tail = (ends.iter()).find(|(stmt, _)| stmt.start() == goto.start());
                match tail {
                    Some(&(_, true)) => (goto, "pass".to_owned()),
                    Some(_) if text[whole].trim() == &text[goto] => {
                        gone += 1;
                        (whole, String::new())
                    }
                    _ => (goto, "continue".to_owned()),
                }
            })
            .collect();
        (edits, gone)
    }

    /// The edit that writes the test of `stmt`, an `if`, as its `not` ([`negated`]): where
    /// that is `not (TEST)` and the test has parentheses of its own, those (`if (A or B):`
    /// is `not (A or B)`, not `(not (A or B))`).
    pub(super) fn negated_test(&self, stmt: &Stmt, test: &ast::Expr) -> (TextRange, String) {
        let text = self.text;
        let plain = negated(text, test);
        let keyword = stmt.start() + TextSize::of("if");
        let before = &text[usize::from(keyword)..usize::from(test.start())];
        let rest = &text[usize::from(test.end())..];
        let after = rest.trim_start();
        let wrapped = plain == format!("not ({})", &text[test.range()])
            && before.trim() == "("
            && after.starts_with(')');
        match (
            before.find('('),
            TextSize::try_from(rest.len() - after.len() + 1),
        ) {
            (Some(open), Ok(close)) if wrapped => {
                let open = keyword + TextSize::try_from(open).unwrap_or_default();
                let range = TextRange::new(open, test.end() + close);
                self.test_edit(stmt, range, format!("not {}", &text[range]))
            }
            _ => self.test_edit(stmt, test.range(), plain),
        }
    }

    /// The edit that writes `written` over `range`, the test of `stmt` (an `if`) or that
    /// test in its parentheses: a blank before it where it follows the keyword right away
    /// (`if(x):`).
    pub(super) fn test_edit(
        &self,
        stmt: &Stmt,
        range: TextRange,
        written: String,
    ) -> (TextRange, String) {
        match range.start() == stmt.start() + TextSize::of("if") {
            true => (range, format!(" {written}")),
            false => (range, written),
        }
    }

    /// The name and range of the goto of `stmt`, an `if` with no other branch: its only
    /// statement (a skip), or its last after others (an else).
    fn goto_branch(&self, stmt: &Stmt) -> Option<(&'a String, TextRange)> {
        let Stmt::If(branch) = stmt else { return None };
        if !branch.elif_else_clauses.is_empty() {
            return None;
        }
        let goto = match (self.shape, branch.body.as_slice()) {
            (Shape::Skip | Shape::Nested, [_]) => *nested(stmt).last()?,
            (Shape::Else | Shape::Loop, [_, .., last]) => last,
            _ => return None,
        };
        let name = self.markers.gotos.get(&goto.start())?;
        Some((name, goto.range()))
    }
}

/// The statements that end `list` where falling off them falls off `list`: its last, or
/// (where that is an `if`, a `with` or a `try`) the ends of the clauses it falls off from,
/// each with whether it is its clause's only statement.
fn tails(list: &[Stmt]) -> Vec<(&Stmt, bool)> {
    let (mut found, mut work) = (Vec::new(), vec![list]);
    while let Some(list) = work.pop() {
        match list.last() {
            Some(last @ (Stmt::If(_) | Stmt::With(_))) => work.extend(child_lists(last)),
            Some(Stmt::Try(attempt)) if !attempt.is_star => {
                // The body falls into the `else` where there is one; a `finally` runs
                // whichever way the `try` is left.
                work.push(if attempt.orelse.is_empty() {
                    &attempt.body
                } else {
                    &attempt.orelse
                });
                work.extend(attempt.handlers.iter().map(|handler| {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    handler.body.as_slice()
                }));
            }
            Some(last) => found.push((last, list.len() == 1)),
            None => {}
        }
    }
    found
}

/// `stmt` and the statements nested in it, each the only statement of an `if` with no other
/// branch before it: `if A:` / `if B:` / `goto .l` is those three.
fn nested(stmt: &Stmt) -> Vec<&Stmt> {
    let mut chain = vec![stmt];
    while let Some((_, only)) = chain.last().and_then(|last| lone(last)) {
        chain.push(only);
    }
    chain
}

/// Whether `expr` binds at least as tightly as `or`, so that it needs no parentheses as a
/// test or an operand of `or`: a name, attribute, call, subscript, comparison, operation or
/// `and`/`or` (not a conditional expression, a `lambda`, an assignment expression, a
/// `yield` or a tuple).
fn binds(expr: &ast::Expr) -> bool {
    matches!(
        expr,
        ast::Expr::Name(_)
            | ast::Expr::Attribute(_)
            | ast::Expr::Call(_)
            | ast::Expr::Subscript(_)
            | ast::Expr::Compare(_)
            | ast::Expr::UnaryOp(_)
            | ast::Expr::BinOp(_)
            | ast::Expr::BoolOp(_)
    )
}

/// The text of `not (TEST)` for an `if`'s test: `not x` (or `not (x)`) is tested as `x`
/// (a tuple or a test over several lines as `(x)`), a name, attribute, call or subscript without parentheses, and `x is y`
/// as `x is not y` (`is not` as `is`, `in` as `not in`, `not in` as `in`: Python
/// defines each as the other's `not`, where `==` and `<` call methods of their own).
pub(super) fn negated(source: &str, test: &ast::Expr) -> String {
    let text = &source[test.range()];
    match test {
        ast::Expr::UnaryOp(ast::ExprUnaryOp {
            op: ast::UnaryOp::Not,
            operand,
            ..
        }) => {
            // Without the parentheses around it where it needs none as a test or an
            // operand of `or`, on one line (they may hold the line's continuation).
            match binds(operand) && !text.contains('\n') {
                true => source[operand.range()].to_owned(),
                false => text[3..].trim_start().to_owned(),
            }
        }
        ast::Expr::Compare(compare) if let Some(inverse) = inverse(source, compare) => inverse,
        ast::Expr::Name(_)
        | ast::Expr::Attribute(_)
        | ast::Expr::Call(_)
        | ast::Expr::Subscript(_) => format!("not {text}"),
        _ => format!("not ({text})"),
    }
}

/// `compare`, one comparison by identity or membership, with its operator inverted; `None`
/// for another comparison, or where the text between its operands holds more than the
/// operator and parentheses (a comment, a line break).
fn inverse(source: &str, compare: &ast::ExprCompare) -> Option<String> {
    let ([op], [right]) = (&*compare.ops, &*compare.comparators) else {
        return None;
    };
    let (inverse, words): (&str, &[&str]) = match op {
        ast::CmpOp::Is => ("is not", &["is"]),
        ast::CmpOp::IsNot => ("is", &["is", "not"]),
        ast::CmpOp::In => ("not in", &["in"]),
        ast::CmpOp::NotIn => ("in", &["not", "in"]),
        _ => return None,
    };
    // `lead`, the operator's words, `trail`: the left operand's closing parentheses and
    // the right one's opening ones, with the blanks.
    let between = &source[usize::from(compare.left.end())..usize::from(right.start())];
    let rest = between.trim_start_matches([')', ' ']);
    let lead = &between[..between.len() - rest.len()];
    let core = rest.trim_end_matches(['(', ' ']);
    let trail = &rest[core.len()..];
    if !core
        .split(' ')
        .filter(|word| !word.is_empty())
        .eq(words.iter().copied())
    {
        return None;
    }
    Some(format!(
        "{}{lead}{inverse}{trail}{}",
        &source[usize::from(compare.start())..usize::from(compare.left.end())],
        &source[usize::from(right.start())..usize::from(compare.end())],
    ))
}
