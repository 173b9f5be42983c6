//! The lines of a function written from its flow graph ([`Writer`]): each block where the
//! graph says, each jump as where it goes from where it is.

use super::*;

/// A clause of an `if` to write: its test (none for an `else`), the comment after its
/// header, what it runs, and, once written, its lines and whether they never fall through.
struct Clause<'t, 'g> {
    test: Option<&'t ast::Expr>,
    comment: Option<&'g str>,
    tail: &'t Tail<'t>,
    body: Vec<String>,
    stops: bool,
}

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
    /// How many blocks are being written inside one another.
    pub(super) trees: usize,
}

/// How many blocks are written inside one another at most (one that one edge enters is
/// written inside the code of the block it comes from).
const TREES: usize = 200;

impl<'w, 'a> Writer<'w, '_, 'a> {
    /// Writes `node` and the blocks it dominates that more than one edge enters, after it;
    /// falling off them goes to `fall`. Whether they never fall through.
    pub(super) fn tree(&mut self, node: usize, fall: To, depth: usize) -> Option<bool> {
        if depth > LEVELS || self.trees > TREES {
            return None;
        }
        self.trees += 1;
        let done = self.placed_tree(node, fall, depth);
        self.trees -= 1;
        done
    }

    /// [`Writer::tree`], within the bounds.
    fn placed_tree(&mut self, node: usize, fall: To, depth: usize) -> Option<bool> {
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
            return self.sequence(node, &flow.tails[node], &after, fall, depth);
        };
        let (inside, outside): (Vec<usize>, Vec<usize>) =
            after.iter().partition(|merge| members.contains(merge));
        let follow = outside.first().map_or(fall, |&next| To::Node(next));
        let comment = (flow.labels[node]).and_then(|label| self.graph.trailing(label));
        self.written += usize::from(comment.is_some());
        let comment = comment.map_or(String::new(), |comment| format!("  {comment}"));
        // A head that leaves the loop when a test holds tests it in the `while`.
        let (test, tail) = match self.head(node, follow) {
            Some((branch, rest)) => (skip::negated(self.graph.text, &branch.test), rest),
            None => ("True".to_owned(), &flow.tails[node]),
        };
        self.line(depth, format!("while {test}:{comment}"));
        self.loops.push((node, follow));
        let body = self.sequence(node, tail, &inside, To::Node(node), depth + 1);
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
        for comment in self.graph.leading(label.start(), self.first) {
            self.comment(depth, comment);
        }
        if !self.flow.loops.contains_key(&node)
            && let Some(comment) = self.graph.trailing(label)
        {
            self.comment(depth, comment);
        }
    }

    /// The `if` that starts loop head `node`'s code, when it is `if TEST: goto` to what
    /// follows the loop with no other clause but an `else` and no comment, and its `else`.
    fn head(&self, node: usize, follow: To) -> Option<(&'a ast::StmtIf, &'w Tail<'a>)> {
        let graph = self.graph;
        let tail = &self.flow.tails[node];
        let End::If(branch, clauses) = &tail.end else {
            return None;
        };
        let [leave, rest] = clauses.as_slice() else {
            return None;
        };
        let End::Goto(target, goto) = leave.end else {
            return None;
        };
        let quiet = |start: TextSize| graph.leading(start, 0).is_empty();
        let plain = tail.stmts.is_empty()
            && leave.stmts.is_empty()
            && To::Node(target) == follow
            && !self.flow.copied[target]
            && goto.is_none_or(|goto| !graph.commented(goto))
            && quiet(branch.start())
            && graph.header_comment(branch.test.end()).is_none()
            && (branch.elif_else_clauses.iter()).all(|clause| {
                clause.test.is_none()
                    && graph
                        .header_comment(clause.start() + TextSize::from(4))
                        .is_none()
            });
        plain.then_some((*branch, rest))
    }

    /// `tail`, block `node`'s code, then `merges`, each falling into the next, the last into
    /// `fall`.
    fn sequence(
        &mut self,
        node: usize,
        tail: &Tail,
        merges: &[usize],
        fall: To,
        depth: usize,
    ) -> Option<bool> {
        let first = merges.first().map_or(fall, |&next| To::Node(next));
        let stops = self.code(node, tail, first, depth)?;
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
                if let Some(comment) = self.graph.trailing(stmt) {
                    self.written += 1;
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
            for comment in graph.leading(goto.start(), self.first) {
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
                self.own_line(depth, comment);
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
                self.own_line(depth, comment);
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
                self.own_line(depth, comment);
                Some(false)
            }
        }
    }

    /// An `if` whose clauses hold jumps, of block `node`; an `else` that is one such `if`
    /// alone, with no comment, goes on as its `elif`s.
    fn branch<'t>(
        &mut self,
        node: usize,
        branch: &'t ast::StmtIf,
        clauses: &'t [Tail<'t>],
        fall: To,
        depth: usize,
    ) -> Option<bool> {
        let graph = self.graph;
        for comment in graph.leading(branch.start(), self.first) {
            self.comment(depth, comment);
        }
        let mut chain: Vec<Clause> = Vec::new();
        let (mut branch, mut clauses) = (branch, clauses);
        loop {
            for (nth, tail) in clauses.iter().enumerate() {
                let source = nth
                    .checked_sub(1)
                    .and_then(|at| branch.elif_else_clauses.get(at));
                let (test, after) = match source {
                    None if nth == 0 => (Some(&*branch.test), Some(branch.test.end())),
                    Some(ast::ElifElseClause {
                        test: Some(test), ..
                    }) => (Some(test), Some(test.end())),
                    Some(clause) => (None, Some(clause.start() + TextSize::from(4))),
                    None => (None, None),
                };
                let comment = after.and_then(|after| graph.header_comment(after));
                chain.push(Clause {
                    test,
                    comment,
                    tail,
                    body: Vec::new(),
                    stops: false,
                });
            }
            let Some(Clause {
                test: None,
                comment: None,
                tail,
                ..
            }) = chain.last()
            else {
                break;
            };
            let End::If(inner, inner_clauses) = &tail.end else {
                break;
            };
            if !tail.stmts.is_empty() || !graph.leading(inner.start(), self.first).is_empty() {
                break;
            }
            chain.pop();
            (branch, clauses) = (inner, inner_clauses);
        }
        self.written += chain
            .iter()
            .filter(|clause| clause.comment.is_some())
            .count();
        // An `else` after clauses that never fall through: its statements after the `if`.
        let mut flat = None;
        let last = chain.len() - 1;
        for nth in 0..chain.len() {
            let clause = &chain[nth];
            let tail = clause.tail;
            let after = chain[..nth].iter().all(|clause| clause.stops);
            if nth == last && nth > 0 && clause.test.is_none() && clause.comment.is_none() && after
            {
                let mark = self.out.len();
                let stops = self.code(node, tail, fall, depth)?;
                flat = Some((self.out.split_off(mark), stops));
                chain.pop();
                break;
            }
            let mark = self.out.len();
            let stops = self.code(node, tail, fall, depth + 1)?;
            chain[nth].body = self.out.split_off(mark);
            chain[nth].stops = stops;
        }
        // An empty `else` goes; `if T: pass` / `else: S` is `if not (T): S`.
        if chain.len() > 1
            && (chain.last()).is_some_and(|clause| {
                clause.test.is_none() && clause.comment.is_none() && clause.body.is_empty()
            })
        {
            chain.pop();
        }
        let mut negated = None;
        if let [first, otherwise] = chain.as_slice()
            && first.body.is_empty()
            && otherwise.test.is_none()
            && otherwise.comment.is_none()
        {
            negated = first.test.map(|test| skip::negated(graph.text, test));
            chain.swap(0, 1);
            chain.pop();
        }
        let mut stops = chain.len() > 1
            && chain.iter().all(|clause| clause.stops)
            && chain.last().is_some_and(|clause| clause.test.is_none());
        for (nth, clause) in chain.into_iter().enumerate() {
            let keyword = match (nth, clause.test) {
                (0, _) => "if",
                (_, Some(_)) => "elif",
                (_, None) => "else",
            };
            let test = match (&negated, clause.test) {
                (Some(negated), _) => format!(" {negated}"),
                (None, Some(test)) => format!(" {}", &graph.text[test.range()]),
                (None, None) => String::new(),
            };
            let comment = clause
                .comment
                .map_or(String::new(), |comment| format!("  {comment}"));
            self.line(depth, format!("{keyword}{test}:{comment}"));
            if clause.body.is_empty() {
                self.line(depth + 1, "pass".to_owned());
            }
            self.out.extend(clause.body);
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
        for comment in graph.leading(stmt.start(), self.first) {
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

    /// A goto's comment, counted already, on a line of its own where the goto is written as
    /// no statement of its own line.
    fn own_line(&mut self, depth: usize, comment: Option<&str>) {
        if let Some(comment) = comment {
            self.line(depth, comment.to_owned());
        }
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
