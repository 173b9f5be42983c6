//! The lines of a function written from its flow graph ([`Writer`]): each block where the
//! graph says, each jump as where it goes from where it is.

use super::*;

/// The lines of a function written from its graph.
pub(super) struct Writer<'w, 'g, 'a> {
    pub(super) graph: &'w Graph<'g>,
    pub(super) flow: &'w Flow<'a>,
    /// The body's indentation.
    pub(super) indent: String,
    /// The body's first line: comments above it stay where they are.
    pub(super) first: usize,
    pub(super) out: Vec<String>,
    /// The loops around what is written, innermost last, each with its head and what
    /// follows it.
    pub(super) loops: Vec<(usize, To)>,
    /// How many comments were written.
    pub(super) written: usize,
    /// Whether the blocks a loop's head dominates outside the loop follow it, so that a
    /// jump there is a `break`; else those that one edge enters are written where it is.
    pub(super) exits_after: bool,
    /// The blocks written after the code of the block that dominates them, which no jump
    /// writes where it is.
    pub(super) placed: Vec<bool>,
}

impl Writer<'_, '_, '_> {
    /// Writes `node` and the blocks it dominates that more than one edge enters, after it;
    /// falling off them goes to `fall`. Whether they never fall through.
    pub(super) fn tree(&mut self, node: usize, fall: To, depth: usize) -> Option<bool> {
        if depth > LEVELS {
            return None;
        }
        let flow = self.flow;
        let members = flow.loops.get(&node);
        // The blocks after this one's code: those more than one edge enters, and with
        // `exits_after` those outside its loop.
        let after: Vec<usize> = (flow.children[node].iter().copied())
            .filter(|&child| {
                !flow.copied[child]
                    && (flow.forward[child] > 1
                        || self.exits_after
                            && members.is_some_and(|members| !members.contains(&child)))
            })
            .collect();
        for &child in &after {
            self.placed[child] = true;
        }
        self.label(node, depth);
        let Some(members) = members else {
            return self.sequence(node, &after, fall, depth);
        };
        let (inside, outside): (Vec<usize>, Vec<usize>) =
            after.iter().partition(|merge| members.contains(merge));
        let follow = outside.first().map_or(fall, |&next| To::Node(next));
        let comment = (flow.labels[node]).and_then(|label| self.graph.trailing(label));
        self.written += usize::from(comment.is_some());
        let comment = comment.map_or(String::new(), |comment| format!("  {comment}"));
        self.line(depth, format!("while True:{comment}"));
        self.loops.push((node, follow));
        let body = self.sequence(node, &inside, To::Node(node), depth + 1);
        self.loops.pop();
        body?;
        self.chain(&outside, fall, depth)?;
        Some(false)
    }

    /// The comments before `node`'s label, and the one after it unless a loop starts there.
    fn label(&mut self, node: usize, depth: usize) {
        let Some(label) = self.flow.labels[node] else {
            return;
        };
        for comment in self.graph.leading(label, self.first) {
            self.comment(depth, comment);
        }
        if !self.flow.loops.contains_key(&node)
            && let Some(comment) = self.graph.trailing(label)
        {
            self.comment(depth, comment);
        }
    }

    /// `node`'s code, then `merges`, each falling into the next, the last into `fall`.
    fn sequence(&mut self, node: usize, merges: &[usize], fall: To, depth: usize) -> Option<bool> {
        let first = merges.first().map_or(fall, |&next| To::Node(next));
        let stops = self.code(node, &self.flow.tails[node], first, depth)?;
        if merges.is_empty() {
            return Some(stops);
        }
        self.chain(merges, fall, depth)
    }

    /// `nodes`, each falling into the next, the last into `fall`.
    fn chain(&mut self, nodes: &[usize], fall: To, depth: usize) -> Option<bool> {
        let mut stops = false;
        for (nth, &node) in nodes.iter().enumerate() {
            let next = nodes.get(nth + 1).map_or(fall, |&next| To::Node(next));
            stops = self.tree(node, next, depth)?;
        }
        Some(stops)
    }

    /// The statements of `tail`, of block `node`, then where it goes.
    fn code(&mut self, node: usize, tail: &Tail, fall: To, depth: usize) -> Option<bool> {
        let mut before: Option<&Stmt> = None;
        for &stmt in &tail.stmts {
            // After a statement on the same line, on that line too.
            let lines = self.graph.lines;
            let joined = before.is_some_and(|before| {
                lines.line(before.end()) == lines.line(stmt.start())
                    && lines.line(stmt.start()) == lines.line(stmt.end())
            });
            if joined && let Some(line) = self.out.last_mut() {
                line.push_str("; ");
                line.push_str(&self.graph.text[stmt.range()]);
                self.written += usize::from(self.graph.trailing(stmt).is_some());
                if let Some(comment) = self.graph.trailing(stmt) {
                    line.push_str("  ");
                    line.push_str(comment);
                }
            } else {
                self.stmt(stmt, depth)?;
            }
            before = Some(stmt);
        }
        match &tail.end {
            End::Open => None,
            End::Stop => Some(true),
            End::Exit => self.jump(node, To::Exit, None, fall, depth),
            End::Goto(target, goto) => self.jump(node, To::Node(*target), *goto, fall, depth),
            End::If(branch, clauses) => self.branch(node, branch, clauses, fall, depth),
        }
    }

    /// A jump from block `node` to `to` (by `goto`): whether it never falls through.
    fn jump(
        &mut self,
        node: usize,
        to: To,
        goto: Option<&Stmt>,
        fall: To,
        depth: usize,
    ) -> Option<bool> {
        let graph = self.graph;
        if let Some(goto) = goto {
            for comment in graph.leading(goto, self.first) {
                self.comment(depth, comment);
            }
        }
        let comment = goto.and_then(|goto| graph.trailing(goto));
        self.written += usize::from(comment.is_some());
        let after = comment.map_or(String::new(), |comment| format!("  {comment}"));
        let flow = self.flow;
        let exit = |word: &str| Some(format!("{word}{after}"));
        let written = match (to, self.loops.last()) {
            _ if to == fall => None,
            (To::Node(target), _) if flow.copied[target] => {
                self.stmt(flow.tails[target].stmts[0], depth)?;
                if let Some(comment) = comment {
                    self.line(depth, comment.to_owned());
                }
                return Some(true);
            }
            (_, Some(&(head, _))) if to == To::Node(head) => exit("continue"),
            (_, Some(&(_, follow))) if to == follow => exit("break"),
            (To::Exit, _) => exit("return"),
            (To::Node(target), _)
                if !flow.dominates(target, node)
                    && flow.forward[target] == 1
                    && !self.placed[target] =>
            {
                if let Some(comment) = comment {
                    self.line(depth, comment.to_owned());
                }
                return self.tree(target, fall, depth);
            }
            _ => return None,
        };
        match written {
            Some(line) => {
                self.line(depth, line);
                Some(true)
            }
            None => {
                if let Some(comment) = comment {
                    self.line(depth, comment.to_owned());
                }
                Some(false)
            }
        }
    }

    /// An `if` whose clauses hold jumps, of block `node`.
    fn branch(
        &mut self,
        node: usize,
        branch: &ast::StmtIf,
        clauses: &[Tail],
        fall: To,
        depth: usize,
    ) -> Option<bool> {
        let text = self.graph.text;
        let mut written: Vec<(String, Vec<String>, bool)> = Vec::new();
        let last = clauses.len() - 1;
        let mut flat = None;
        for (nth, clause) in clauses.iter().enumerate() {
            let source = nth
                .checked_sub(1)
                .and_then(|at| branch.elif_else_clauses.get(at));
            let (mut header, after) = match source {
                None if nth == 0 => (
                    format!("if {}:", &text[branch.test.range()]),
                    Some(branch.test.end()),
                ),
                Some(ast::ElifElseClause {
                    test: Some(test), ..
                }) => (format!("elif {}:", &text[test.range()]), Some(test.end())),
                Some(clause) => ("else:".to_owned(), Some(clause.start() + TextSize::from(4))),
                None => ("else:".to_owned(), None),
            };
            if let Some(comment) = after.and_then(|after| self.graph.header_comment(after)) {
                self.written += 1;
                header = format!("{header}  {comment}");
            }
            // An `else` after clauses that never fall through: its statements after the `if`.
            if nth == last && nth > 0 && written.iter().all(|(_, _, stops)| *stops) {
                let mark = self.out.len();
                let stops = self.code(node, clause, fall, depth)?;
                flat = Some((self.out.split_off(mark), stops));
                break;
            }
            let mark = self.out.len();
            let stops = self.code(node, clause, fall, depth + 1)?;
            written.push((header, self.out.split_off(mark), stops));
        }
        // An empty `else` goes; `if T: pass` / `else: S` is `if not (T): S`.
        if written.len() > 1
            && (written.last())
                .is_some_and(|(header, body, _)| header == "else:" && body.is_empty())
        {
            written.pop();
        }
        if written.len() == 2 && written[0].1.is_empty() && written[1].0 == "else:" {
            let (_, body, stops) = written.pop()?;
            written[0] = (
                format!("if {}:", skip::negated(text, &branch.test)),
                body,
                stops,
            );
        }
        let mut stops = written.len() > 1
            && written.iter().all(|(_, _, stops)| *stops)
            && written
                .last()
                .is_some_and(|(header, _, _)| header == "else:");
        for (header, body, _) in written {
            self.line(depth, header);
            if body.is_empty() {
                self.line(depth + 1, "pass".to_owned());
            }
            self.out.extend(body);
        }
        if let Some((body, flat_stops)) = flat {
            self.out.extend(body);
            stops = flat_stops;
        }
        Some(stops)
    }

    /// `stmt`'s text at `depth`, with the comments above and after it.
    fn stmt(&mut self, stmt: &Stmt, depth: usize) -> Option<()> {
        let graph = self.graph;
        if self.loops.len() + blocks::deepest(std::slice::from_ref(stmt)).0 >= blocks::LIMIT {
            return None;
        }
        for comment in graph.leading(stmt, self.first) {
            self.comment(depth, comment);
        }
        let (lines, text) = (graph.lines, graph.text);
        let first = lines.line(stmt.start());
        let last = lines.line(stmt.end());
        let end = match graph.trailing(stmt) {
            Some(_) => {
                self.written += 1;
                graph.line_end(last)
            }
            None => stmt.end(),
        };
        let old = usize::from(stmt.start() - lines.starts[first]);
        let new = self.indent.len() + 4 * depth;
        for (nth, piece) in text[usize::from(stmt.start())..usize::from(end)]
            .split('\n')
            .enumerate()
        {
            let piece = piece.strip_suffix('\r').unwrap_or(piece);
            if nth == 0 {
                self.out.push(format!("{}{piece}", " ".repeat(new)));
            } else if lines.inside[first + nth] || piece.trim().is_empty() {
                self.out.push(piece.to_owned());
            } else if new >= old {
                self.out.push(format!("{}{piece}", " ".repeat(new - old)));
            } else {
                let blanks = piece.len() - piece.trim_start_matches(' ').len();
                self.out.push(piece[blanks.min(old - new)..].to_owned());
            }
        }
        // A comment inside a compound statement is written with it.
        let inner = (graph.comments.iter())
            .filter(|comment| stmt.range().contains_range(**comment))
            .count();
        self.written += inner;
        Some(())
    }

    fn comment(&mut self, depth: usize, comment: &str) {
        self.written += 1;
        self.line(depth, comment.to_owned());
    }

    fn line(&mut self, depth: usize, text: String) {
        self.out
            .push(format!("{}{}{text}", self.indent, "    ".repeat(depth)));
    }
}
