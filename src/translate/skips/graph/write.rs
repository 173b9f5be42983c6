//! The lines of a function written from its flow graph ([`Writer`]): each block where the
//! graph says, each jump as where it goes from where it is; where no `continue`, `break` or
//! fall says it, a flag ([`Writer::flag`], [`Writer::past`]).

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
    /// The loops around what is written, innermost last.
    pub(super) loops: Vec<Loop>,
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
    /// Whether a loop's body falls into what follows it, by a `break` at its end (each jump
    /// to its head a `continue`), rather than into its head.
    pub(super) breaks: bool,
    /// Whether a jump that no `continue`, `break` or fall reaches may set a flag.
    pub(super) flags: bool,
    /// Whether the blocks of a few simple statements that several edges enter are copied
    /// to the jumps that reach them ([`Flow::small`]) rather than written once.
    pub(super) copies: bool,
    /// The lists of blocks around what is written, innermost last.
    pub(super) chains: Vec<Chain>,
    /// The flag of each block that a jump sets one for.
    pub(super) names: HashMap<usize, String>,
}

/// A loop around what is written.
pub(super) struct Loop {
    head: usize,
    /// What follows it.
    follow: To,
    /// Where its `while` line is in the lines written.
    line: usize,
    /// The flags set to leave it and the loops around it, each `False` before it.
    flags: Vec<String>,
    /// What the code after it does when each flag is set: `break` or `continue`.
    checks: Vec<(String, &'static str)>,
}

/// Blocks written one after another, each falling into the next: those after a block's
/// code, or after a loop.
pub(super) struct Chain {
    nodes: Vec<usize>,
    /// The index of the block that the code being written falls into, or that a `break`
    /// of the loop it follows reaches.
    next: usize,
    /// How many loops are around it.
    loops: usize,
    /// Where its first line is, or its loop's.
    line: usize,
    /// The flags set to go past its blocks, each with the index of the first it goes past
    /// and of the block it goes to.
    skips: Vec<(String, usize, usize)>,
}

impl Chain {
    /// `flag` goes past its blocks from the `from`th to the `past`th.
    fn skip(&mut self, flag: &str, from: usize, past: usize) {
        match (self.skips.iter_mut()).find(|(set, ..)| set == flag) {
            Some((_, first, _)) => *first = (*first).min(from),
            None => self.skips.push((flag.to_owned(), from, past)),
        }
    }
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
                !self.copied(child)
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
        let comment = self.noted((flow.labels[node]).and_then(|label| self.graph.trailing(label)));
        // A head that leaves the loop when a test holds tests it in the `while`.
        let (test, tail) = match (self.head(node, follow)).filter(|_| !self.breaks) {
            Some((branch, rest)) => (skip::negated(self.graph.text, &branch.test), rest),
            None => ("True".to_owned(), &flow.tails[node]),
        };
        let end = if self.breaks { follow } else { To::Node(node) };
        let chained = !outside.is_empty();
        if chained {
            self.chain(outside);
        }
        self.line(depth, format!("while {test}:{comment}"));
        self.loops.push(Loop {
            head: node,
            follow,
            line: self.out.len() - 1,
            flags: Vec::new(),
            checks: Vec::new(),
        });
        let body = self.sequence(node, tail, &inside, end, depth + 1);
        let done = self.loops.pop()?;
        if !body? && self.breaks {
            self.line(depth + 1, "break".to_owned());
        }
        let set = (done.flags.iter()).map(|flag| self.unset(flag, depth));
        self.out
            .splice(done.line..done.line, set.collect::<Vec<_>>());
        for (flag, then) in done.checks {
            self.line(depth, format!("if {flag}: {then}"));
        }
        if chained {
            self.rest(fall, depth)?;
        }
        Some(false)
    }

    /// Whether every jump to `node` writes its code where it is.
    fn copied(&self, node: usize) -> bool {
        self.flow.copied[node] || self.copies && self.flow.small[node]
    }

    /// `flag = False` at `depth`.
    fn unset(&self, flag: &str, depth: usize) -> String {
        format!("{}{}{flag} = False", self.indent, "    ".repeat(depth))
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
            && !self.copied(target)
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
        let Some(&first) = merges.first() else {
            return self.code(node, tail, fall, depth);
        };
        self.chain(merges.to_vec());
        self.code(node, tail, To::Node(first), depth)?;
        self.rest(fall, depth)
    }

    /// Starts a chain of `nodes` at the lines written so far.
    fn chain(&mut self, nodes: Vec<usize>) {
        self.chains.push(Chain {
            nodes,
            next: 0,
            loops: self.loops.len(),
            line: self.out.len(),
            skips: Vec::new(),
        });
    }

    /// The blocks of the innermost chain from its next on, the last falling into `fall`,
    /// each under `if not flag:` for the flags that go past it, consecutive ones under the
    /// same; then the chain is done, its flags `False` before it. Whether they never fall
    /// through.
    fn rest(&mut self, fall: To, depth: usize) -> Option<bool> {
        let mut stops = false;
        // The flags the blocks being written are under, and where their lines start.
        let mut under: (Vec<String>, usize) = (Vec::new(), 0);
        loop {
            let chain = self.chains.last()?;
            let at = chain.next;
            let Some(&node) = chain.nodes.get(at) else {
                break;
            };
            let next = chain.nodes.get(at + 1).map_or(fall, |&next| To::Node(next));
            let flags: Vec<String> = (chain.skips.iter())
                .filter(|&&(_, from, past)| from <= at && at < past)
                .map(|(flag, ..)| flag.clone())
                .collect();
            if flags != under.0 {
                self.guarded(&under, depth);
                if !flags.is_empty() {
                    let test = match flags.as_slice() {
                        [flag] => flag.clone(),
                        _ => format!("({})", flags.join(" or ")),
                    };
                    self.line(depth, format!("if not {test}:"));
                }
                under = (flags, self.out.len());
            }
            self.chains.last_mut()?.next = at + 1;
            let inner = depth + usize::from(!under.0.is_empty());
            stops = self.tree(node, next, inner)? && under.0.is_empty();
        }
        self.guarded(&under, depth);
        let chain = self.chains.pop()?;
        // A flag that a chain around sets too is `False` before that one.
        let unset: Vec<String> = (chain.skips.iter())
            .filter(|(flag, ..)| {
                !(self.chains.iter()).any(|around| around.skips.iter().any(|(set, ..)| set == flag))
            })
            .map(|(flag, ..)| self.unset(flag, depth))
            .collect();
        self.out.splice(chain.line..chain.line, unset);
        Some(stops)
    }

    /// `pass` under an `if not flag:` that the blocks under it left empty.
    fn guarded(&mut self, (flags, start): &(Vec<String>, usize), depth: usize) {
        if !flags.is_empty() && self.out.len() == *start {
            self.line(depth + 1, "pass".to_owned());
        }
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
            End::Match(matched, clauses) => self.matched(node, matched, clauses, fall, depth),
        }
    }

    /// A `match` whose cases hold jumps, of block `node`: its header and each case's as
    /// the source has them, and `case _:` for the way no pattern holds where that does not
    /// fall through. Whether it never falls through.
    fn matched(
        &mut self,
        node: usize,
        matched: &ast::StmtMatch,
        clauses: &[Tail],
        fall: To,
        depth: usize,
    ) -> Option<bool> {
        let graph = self.graph;
        let header = graph.header(matched.start(), matched.subject.end())?;
        for comment in graph.leading(matched.start(), self.first) {
            self.comment(depth, comment);
        }
        let comment = self.noted(graph.header_comment(matched.subject.end()));
        self.line(depth, format!("{header}:{comment}"));
        let mut stops = true;
        for (nth, tail) in clauses.iter().enumerate() {
            let case = matched.cases.get(nth);
            if let Some(case) = case {
                for comment in graph.leading(case.start(), self.first) {
                    self.comment(depth + 1, comment);
                }
                let end = case
                    .guard
                    .as_ref()
                    .map_or(case.pattern.end(), |guard| guard.end());
                let header = graph.header(case.start(), end)?;
                let comment = self.noted(graph.header_comment(end));
                self.line(depth + 1, format!("{header}:{comment}"));
            }
            let at = self.out.len();
            stops &= self.code(node, tail, fall, depth + 2)?;
            let empty = self.out.len() == at;
            match case {
                Some(_) if empty => self.line(depth + 2, "pass".to_owned()),
                // No pattern held: nothing where that falls through, else `case _:`.
                None if !empty => {
                    self.line(depth + 1, "case _:".to_owned());
                    let header = self.out.pop()?;
                    self.out.insert(at, header);
                }
                _ => {}
            }
        }
        Some(stops)
    }

    /// `comment`, counted, as it ends a line (`  # ...`), or nothing.
    fn noted(&mut self, comment: Option<&str>) -> String {
        self.written += usize::from(comment.is_some());
        comment.map_or(String::new(), |comment| format!("  {comment}"))
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
        let after = self.noted(comment);
        let flow = self.flow;
        let exit = |word: &str| Some(format!("{word}{after}"));
        let innermost = self.loops.last().map(|inner| (inner.head, inner.follow));
        let written = match (to, innermost) {
            _ if to == fall => None,
            (To::Node(target), _) if self.copied(target) => {
                self.own_line(depth, comment);
                return self.code(target, &flow.tails[target], fall, depth);
            }
            (_, Some((head, _))) if to == To::Node(head) => exit("continue"),
            (_, Some((_, follow))) if to == follow => exit("break"),
            (To::Exit, _) => exit("return"),
            (To::Node(target), _)
                if !flow.dominates(target, node)
                    && flow.forward[target] == 1
                    && !self.placed[target] =>
            {
                self.own_line(depth, comment);
                return self.tree(target, fall, depth);
            }
            (To::Node(target), _) if self.flags => match self.past(target, fall) {
                Some((flag, false)) => {
                    self.line(depth, format!("{flag} = True{after}"));
                    return Some(false);
                }
                Some((flag, true)) => exit(&format!("{flag} = True; break")),
                None => exit(&format!("{} = True; break", self.flag(target)?)),
            },
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

    /// The flag named after `target`'s label.
    fn named(&mut self, target: usize) -> Option<String> {
        if let Some(name) = self.names.get(&target) {
            return Some(name.clone());
        }
        let label = self.flow.labels[target]?;
        let base = format!("_goto_{}", self.graph.markers.labels.get(&label.start())?);
        // Not one the source holds, nor another label's (`_goto_s1` taken, `.s1`'s is
        // `_goto_s11`, which `.s11`'s is not then).
        let name = crate::translate::fresh(&base, |name| {
            self.graph.text.contains(name) || self.names.values().any(|used| used == name)
        });
        self.names.insert(target, name.clone());
        Some(name)
    }

    /// The flag that a jump to `target`, the head of a loop around the innermost or what
    /// follows one, sets and `break`s: each loop inside the one `target` goes on from has
    /// `if flag: break` after it, and the code then goes on by `continue` to the head or
    /// `break` to what follows. It is `False` before the outermost loop it leaves.
    fn flag(&mut self, target: usize) -> Option<String> {
        let to = To::Node(target);
        let level = (self.loops.iter())
            .rposition(|outer| outer.follow == to || To::Node(outer.head) == to)?;
        if level + 1 == self.loops.len() {
            return None;
        }
        let flag = self.named(target)?;
        let then = if self.loops[level].head == target {
            "continue"
        } else {
            "break"
        };
        let outermost = &mut self.loops[level + 1];
        if !outermost.flags.contains(&flag) {
            outermost.flags.push(flag.clone());
        }
        self.checks(&flag, level + 1, then);
        Some(flag)
    }

    /// `if flag: then` after loop `level`, `if flag: break` after each inside it.
    fn checks(&mut self, flag: &str, level: usize, then: &'static str) {
        for (nth, left) in self.loops[level..].iter_mut().enumerate() {
            let check = (flag.to_owned(), if nth == 0 { then } else { "break" });
            if !left.checks.contains(&check) {
                left.checks.push(check);
            }
        }
    }

    /// The flag that a jump to `target`, a block of a chain around not yet written, sets to
    /// go past the blocks before it (`if not flag:` around them), and whether it `break`s
    /// to get there. It falls where the code falls, or, inside loops that the chain's code
    /// started, `break`s out of them (`if flag: break` after each but the outermost) to
    /// what follows the outermost; the blocks not yet written of the chains that the
    /// chain's code started before are gone past too, and so the code reaches the chain's
    /// next block, then `target`.
    fn past(&mut self, target: usize, fall: To) -> Option<(String, bool)> {
        let loops = self.loops.len();
        let at = (self.chains.iter()).rposition(|chain| chain.nodes.contains(&target))?;
        let chain = &self.chains[at];
        let past = chain.nodes.iter().position(|&node| node == target)?;
        let reached = match self.loops.get(chain.loops) {
            Some(outermost) => outermost.follow,
            None => fall,
        };
        let between: Vec<usize> = (at + 1..self.chains.len())
            .filter(|&inner| {
                let inner = &self.chains[inner];
                inner.loops == chain.loops && inner.next < inner.nodes.len()
            })
            .collect();
        let next = match between.last() {
            Some(&inner) => &self.chains[inner],
            None => chain,
        };
        let next = To::Node(*next.nodes.get(next.next)?);
        if past < chain.next || reached != next || between.is_empty() && past == chain.next {
            return None;
        }
        let (from, level) = (chain.next, chain.loops);
        let flag = self.named(target)?;
        for inner in between {
            let inner = &mut self.chains[inner];
            inner.skip(&flag, inner.next, inner.nodes.len());
        }
        if past > from {
            self.chains[at].skip(&flag, from, past);
        }
        let leaves = level < loops;
        if leaves {
            self.checks(&flag, level + 1, "break");
        }
        Some((flag, leaves))
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
        // A clause that goes where the code falls anyway says so where that is a loop's
        // head or what follows it.
        let empty = match self.loops.last() {
            Some(inner) if fall == To::Node(inner.head) => "continue",
            Some(inner) if fall == inner.follow => "break",
            _ => "pass",
        };
        let mut stops = chain.len() > 1
            && (chain.iter())
                .all(|clause| clause.stops || clause.body.is_empty() && empty != "pass")
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
                self.line(depth + 1, empty.to_owned());
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
