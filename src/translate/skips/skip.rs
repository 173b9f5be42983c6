//! The first passes' forward skips and loops, each an `if` and its goto in one statement
//! list ([`Shape::Skip`], [`Shape::Else`], [`Shape::Loop`]), and the test of a skip
//! written as its `not`.

use super::*;

impl<'a> Finder<'a> {
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
                && (self.shape == Shape::Skip || alone(goto))
                && !self.lines.tabbed(stmt.start(), label.end());
            if !fits {
                continue;
            }
            let Stmt::If(branch) = stmt else { continue };
            let edits = if self.shape == Shape::Skip {
                // The goto goes, with the blanks before it on its line.
                let blanks = self.text[..usize::from(goto.start())]
                    .trim_end_matches([' ', '\t'])
                    .len();
                let blanks = TextSize::try_from(blanks).unwrap_or_default();
                vec![
                    (branch.test.range(), self.negated(&branch.test)),
                    (TextRange::new(blanks, goto.end()), String::new()),
                ]
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

    /// The text of `not (TEST)` for an `if`'s test: `not x` (or `not (x)`) is tested as `x`
    /// (or `(x)`), a name, attribute, call or subscript without parentheses, and `x is y`
    /// as `x is not y` (`is not` as `is`, `in` as `not in`, `not in` as `in`: Python
    /// defines each as the other's `not`, where `==` and `<` call methods of their own).
    pub(super) fn negated(&self, test: &ast::Expr) -> String {
        let text = &self.text[test.range()];
        match test {
            ast::Expr::UnaryOp(ast::ExprUnaryOp {
                op: ast::UnaryOp::Not,
                ..
            }) => text[3..].trim_start().to_owned(),
            ast::Expr::Compare(compare) if let Some(inverse) = self.inverse(compare) => inverse,
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
    fn inverse(&self, compare: &ast::ExprCompare) -> Option<String> {
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
        let between = &self.text[usize::from(compare.left.end())..usize::from(right.start())];
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
            &self.text[usize::from(compare.start())..usize::from(compare.left.end())],
            &self.text[usize::from(right.start())..usize::from(compare.end())],
        ))
    }

    /// The name and range of the goto of `stmt`, an `if` with no other branch: its only
    /// statement (a skip), or its last after others (an else).
    fn goto_branch(&self, stmt: &Stmt) -> Option<(&'a String, TextRange)> {
        let Stmt::If(branch) = stmt else { return None };
        if !branch.elif_else_clauses.is_empty() {
            return None;
        }
        let goto = match (self.shape, branch.body.as_slice()) {
            (Shape::Skip, [only]) => only,
            (Shape::Else | Shape::Loop, [_, .., last]) => last,
            _ => return None,
        };
        let name = self.markers.gotos.get(&goto.start())?;
        Some((name, goto.range()))
    }
}
