//! A ladder of conditional gotos as one `if`/`elif`/`else` ([`Shape::Ladder`]): what a
//! Fortran arithmetic IF or computed GO TO, ported line for line, is made of.
//!
//! ```text
//! if y < 0: goto .neg          if y < 0:
//! if y == 0: goto .zero            k = 1
//! goto .pos                    elif y == 0:
//! label .neg                       k = 2
//! k = 1                        else:
//! goto .next                       k = 3
//! label .zero
//! k = 2
//! goto .next
//! label .pos
//! k = 3
//! label .next
//! ```
//!
//! A default that goes to the end's label, past every block (a switch's, for no case), is
//! no `else`: the chain falls out of the `if` there.
//!
//! The tests run in their order, each once, as before, and each block runs where its branch
//! went: the ladder is taken only where each block's label is named by its one branch and
//! nothing else (a block that the chain also falls into has two ways in, which an `if`
//! cannot give it without a copy). The blocks move next to their tests, so their statements
//! move up; the lines the markers held are given back as blank lines before the end's
//! label, so that nothing after the ladder moves.

use super::*;

/// A branch of a ladder: its test (none for the default), and the label it goes to.
type Branch<'t, 'a> = (Option<&'t ast::Expr>, &'a str);

impl Finder<'_> {
    /// The ladders of `body` and of the lists nested in it, outside the ladders taken (whose
    /// blocks move).
    pub(super) fn ladders(&mut self, body: &[Stmt]) {
        let mut work = vec![body];
        while let Some(list) = work.pop() {
            let mut at = 0;
            while at < list.len() {
                // A chain is taken from its first `if` only (each statement is looked at
                // once, however long a run of such `if`s).
                let first = at == 0
                    || self
                        .clauses(&list[at - 1])
                        .is_none_or(|found| found.last().is_some_and(|&(test, _)| test.is_none()));
                if let Some(end) = first.then(|| self.ladder(list, at)).flatten() {
                    at = end;
                    continue;
                }
                work.extend(child_lists(&list[at]));
                at += 1;
            }
        }
    }

    /// Takes the ladder whose chain starts at `list[at]`, if there is one; the index of its
    /// end's label.
    fn ladder(&mut self, list: &[Stmt], at: usize) -> Option<usize> {
        let (mut branches, chain_end, defaulted) = self.chain(list, at)?;
        // Each test on one line: its header takes one line, as its `if` did.
        let spans_lines = |test: &ast::Expr| self.text[test.range()].contains('\n');
        if branches
            .iter()
            .any(|&(test, _)| test.is_some_and(spans_lines))
        {
            return None;
        }
        let label_at = |index: usize| self.markers.labels.get(&list[index].start());
        let next_label = |from: usize| (from..list.len()).find(|&next| label_at(next).is_some());
        // A default that goes to the end's label, past every block (a switch's, for no
        // case): no `else`, the chain falls out of the `if` there. Only where every block
        // goes there too, never falls through, or (the last) falls into it (else that
        // label's block is the default's own, which the blocks before do not reach).
        let past = match branches.split_last() {
            Some((&(None, last), rest)) if defaulted => {
                let others: HashSet<&str> = rest.iter().map(|&(_, to)| to).collect();
                let label_of = |at: usize| (at < list.len()).then(|| label_at(at)).flatten();
                // A block goes to the end's label, never falls through, or (the last) falls
                // into it.
                let leaves = |block: &[Stmt], last_block: bool| match block.last() {
                    Some(stmt) => match self.markers.gotos.get(&stmt.start()) {
                        Some(to) => to == last,
                        None => jumps(stmt) || last_block,
                    },
                    None => last_block,
                };
                let mut end = label_of(chain_end).map(|name| (chain_end, name.as_str()));
                let mut ends = true;
                while let Some((at, name)) = end
                    && others.contains(name)
                {
                    end =
                        next_label(at + 1).and_then(|next| Some((next, label_of(next)?.as_str())));
                    let stop = end.map_or(list.len(), |(next, _)| next);
                    let last_block = end.is_some_and(|(_, next)| !others.contains(next));
                    ends &= leaves(&list[at + 1..stop], last_block);
                }
                ends && end.is_some_and(|(_, name)| name == last && !others.contains(last))
            }
            _ => false,
        };
        if past {
            branches.pop();
        }
        // The blocks, in the source's order: each its name, its label's index (none for
        // the statements the chain falls into before any label), its first statement's and
        // the index after its last. Without a default, the chain falls into the first.
        let mut blocks: Vec<(&str, Option<usize>, usize, usize)> = Vec::new();
        let mut index = chain_end;
        if !defaulted {
            match label_at(*(chain_end < list.len()).then_some(&chain_end)?) {
                Some(name) => branches.push((None, name.as_str())),
                None => {
                    let stop = next_label(chain_end)?;
                    branches.push((None, ""));
                    blocks.push(("", None, chain_end, stop));
                    index = stop;
                }
            }
        }
        // A chain that falls into the block of one of its branches (a computed GO TO, whose
        // index out of range goes on to its first target) copies that block as its `else`,
        // where the block is one simple statement ([`Finder::copyable`]).
        let copied = match branches.split_last() {
            Some((&(None, last), rest)) if !defaulted => rest.iter().any(|&(_, to)| to == last),
            _ => false,
        };
        let mut targets: Vec<&str> = branches.iter().map(|&(_, target)| target).collect();
        targets.sort_unstable();
        targets.dedup();
        if targets.len() + usize::from(copied) != branches.len() {
            return None;
        }
        // Each from its label to the next label of the list; the first label that is no
        // target's is the end's.
        // (The names of the blocks so far in a set: a chain of 64,000 branches has as many.)
        let mut seen: HashSet<&str> = blocks.iter().map(|block| block.0).collect();
        let end = loop {
            let name = label_at(*(index < list.len()).then_some(&index)?)?.as_str();
            crate::splice::count(1);
            if targets.binary_search(&name).is_err() || seen.contains(name) {
                break index;
            }
            let stop = next_label(index + 1).unwrap_or(list.len());
            seen.insert(name);
            blocks.push((name, Some(index), index + 1, stop));
            index = stop;
        };
        if blocks.len() != targets.len() {
            return None;
        }
        let end_label = &list[end];
        let end_name = self.markers.labels[&end_label.start()].as_str();
        // Each target named by its branch alone (a label the chain falls into, by none
        // unless its block is copied).
        for &(_, label, _, _) in &blocks {
            let fallen_into = !defaulted && label == Some(chain_end);
            let expected = usize::from(!fallen_into || copied);
            let named = label.map(|label| self.markers.named.get(&list[label].start()));
            if named.is_some_and(|named| named != Some(&expected)) {
                return None;
            }
        }
        let region = TextRange::new(
            self.lines.start(list[at].start()),
            self.lines.start(end_label.start()),
        );
        let (first_line, end_line) = (
            self.lines.line(region.start()),
            self.lines.line(region.end()),
        );
        if self.lines.tabbed(list[at].start(), end_label.end())
            || self.lines.inside[first_line..=end_line].contains(&true)
            || !self.lines.alone(self.text, end_label.range())
        {
            return None;
        }
        // What each block keeps (its lines after its label's, to its last statement's, but
        // the goto to the end), and how many gotos to the end go.
        let mut kept: HashMap<&str, Option<(usize, usize)>> = HashMap::new();
        let mut gone = 0;
        for &(name, label, start, stop) in &blocks {
            let body = &list[start..stop];
            let ends = (body.last())
                .and_then(|last| self.markers.gotos.get(&last.start()))
                .is_some_and(|to| to == end_name);
            let statements = &body[..body.len() - usize::from(ends)];
            let last_block = stop == end;
            let falls = !statements.last().is_some_and(jumps);
            if !ends && !last_block && falls
                || copied && label == Some(chain_end) && !self.copyable(statements)
            {
                return None;
            }
            gone += usize::from(ends);
            let lines = match (statements.first(), statements.last()) {
                (Some(first), Some(last)) => {
                    // The line after the label's, or after the chain's last.
                    let from = self.lines.line(list[label.unwrap_or(start - 1)].end()) + 1;
                    let to = self.lines.line(last.end());
                    // Nothing on the label's line but the label, the goto to the end on a
                    // line of its own, no label inside.
                    let goto_line = body.last().map(|goto| self.lines.line(goto.start()));
                    let labelled =
                        (self.markers).labelled(TextRange::new(first.start(), last.end()));
                    if self.lines.line(first.start()) < from
                        || (ends && goto_line <= Some(to))
                        || labelled
                    {
                        return None;
                    }
                    Some((from, to))
                }
                _ => None,
            };
            kept.insert(name, lines);
        }
        // The default's goto goes too.
        gone += usize::from(past);
        // The lines that go hold no comment.
        let keeps = |line: usize| {
            kept.values()
                .flatten()
                .any(|&(from, to)| (from..=to).contains(&line))
        };
        let line_text = |line: usize| {
            &self.text
                [usize::from(self.lines.starts[line])..usize::from(self.lines.starts[line + 1])]
        };
        if (first_line..end_line).any(|line| !keeps(line) && line_text(line).contains('#')) {
            return None;
        }
        let indent = &self.text[usize::from(region.start())..usize::from(list[at].start())];
        // The region's lines as written: each header, and each block's lines one level
        // deeper (a blank line left empty), or `pass`.
        let lines = end_line - first_line;
        let mut written: Vec<String> = Vec::new();
        let mut placed = vec![String::from("\n"); lines];
        // Where the blocks come in the order of their branches, each goes on its own lines,
        // its header on its label's: the statements keep their lines, and the lines the
        // chain held are left empty before the `if`.
        let in_place = !copied
            && (blocks.iter().zip(&branches)).all(|(&(name, label, _, _), &(_, target))| {
                name == target && label.is_some() && kept[name].is_some()
            });
        for (number, &(test, target)) in branches.iter().enumerate() {
            let header = match test {
                Some(test) if number == 0 => format!("if {}:", self.test_text(test)),
                Some(test) => format!("elif {}:", self.test_text(test)),
                None => "else:".to_owned(),
            };
            let header = format!("{indent}{header}\n");
            let block: Vec<(usize, String)> = match kept[target] {
                Some((from, to)) => (from..=to)
                    .map(|line| match line_text(line) {
                        text if text.trim().is_empty() => (line, "\n".to_owned()),
                        text => (line, format!("    {text}")),
                    })
                    .collect(),
                None => vec![(0, format!("{indent}    pass\n"))],
            };
            if in_place && let Some(label) = blocks[number].1 {
                placed[self.lines.line(list[label].start()) - first_line] = header;
                for (line, text) in block {
                    placed[line - first_line] = text;
                }
            } else {
                written.push(header);
                written.extend(block.into_iter().map(|(_, text)| text));
            }
        }
        // Else one after the other, and the lines the markers held, given back before the
        // end's label.
        if in_place {
            written = placed;
        } else if written.len() > lines {
            return None;
        } else {
            written.resize(lines, "\n".to_owned());
        }
        let written = written.concat();
        // A skip per goto to the end that went, so that the end's label goes with its last
        // (one with no label where none went: every block ends otherwise).
        let mut edits = vec![(region, written)];
        let label = (gone > 0).then(|| end_label.range());
        for _ in 0..gone.max(1) {
            self.skips.push(Skip {
                edits: std::mem::take(&mut edits),
                skipped: None,
                label,
                dead: None,
                becomes: None,
            });
        }
        Some(end)
    }

    /// The chain starting at `list[at]`: `if`s whose every clause is one goto, up to a
    /// default (an `else` clause, or a goto after them); with the index after it and
    /// whether it has a default. `None` without a test.
    fn chain<'t>(&self, list: &'t [Stmt], at: usize) -> Option<(Vec<Branch<'t, '_>>, usize, bool)> {
        let mut branches = Vec::new();
        for (next, stmt) in list.iter().enumerate().skip(at) {
            if let Some(target) = self.markers.gotos.get(&stmt.start()) {
                branches.push((None, target.as_str()));
                return (next > at).then_some((branches, next + 1, true));
            }
            let Some(found) = self.clauses(stmt) else {
                return (next > at).then_some((branches, next, false));
            };
            let defaulted = found.last().is_some_and(|&(test, _)| test.is_none());
            branches.extend(found);
            if defaulted {
                return Some((branches, next + 1, true));
            }
        }
        (!branches.is_empty()).then_some((branches, list.len(), false))
    }

    /// The branches of `stmt` when it is an `if` whose every clause is one goto.
    fn clauses<'t>(&self, stmt: &'t Stmt) -> Option<Vec<Branch<'t, '_>>> {
        let Stmt::If(branch) = stmt else { return None };
        let clauses = std::iter::once((Some(&*branch.test), &branch.body)).chain(
            (branch.elif_else_clauses.iter()).map(|clause| (clause.test.as_ref(), &clause.body)),
        );
        clauses
            .map(|(test, body)| match body.as_slice() {
                [goto] => Some((test, self.markers.gotos.get(&goto.start())?.as_str())),
                _ => None,
            })
            .collect()
    }

    /// Whether a block of `statements` may be written twice: one simple statement, on one
    /// line (a copy has no line of its own, so nothing longer is copied).
    fn copyable(&self, statements: &[Stmt]) -> bool {
        let [only] = statements else { return false };
        !compound(only) && self.lines.line(only.start()) == self.lines.line(only.end())
    }

    /// The text of an `if`'s test, as a header's: in parentheses where it needs them there
    /// (the tree's range leaves out the source's own).
    fn test_text(&self, test: &ast::Expr) -> String {
        let text = &self.text[test.range()];
        match test {
            ast::Expr::Named(_) | ast::Expr::Yield(_) | ast::Expr::YieldFrom(_) => {
                format!("({text})")
            }
            _ => text.to_owned(),
        }
    }
}
