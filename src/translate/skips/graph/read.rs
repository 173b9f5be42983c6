//! The blocks of a function as the graph reads them ([`Graph::list`]): each label starts
//! one, and so does the code after an `if` or `match` with a label in a clause; each block's
//! statements as they run, to the gotos, exits and falls that end them ([`Tail`]).

use super::*;

/// A block's statements, as they run: statements that hold no goto, then how the block goes
/// on.
#[derive(Clone)]
pub(super) struct Tail<'a> {
    pub(super) stmts: Vec<&'a Stmt>,
    pub(super) end: End<'a>,
}

#[derive(Clone)]
pub(super) enum End<'a> {
    /// Falls off its statements (before the blocks are closed).
    Open,
    /// The last statement is a `return` or `raise`.
    Stop,
    /// Falls off the function's end.
    Exit,
    /// Goes to a block: by a goto (its statement), or falling into it.
    Goto(usize, Option<&'a Stmt>),
    /// An `if` that holds gotos, each of its clauses (one more, empty, when it has no
    /// `else`) with what it runs.
    If(&'a ast::StmtIf, Vec<Tail<'a>>),
    /// A `match` that holds gotos, each of its cases (one more when no pattern need hold:
    /// [`clauses`]) with what it runs.
    Match(&'a ast::StmtMatch, Vec<Tail<'a>>),
}

impl End<'_> {
    /// Whether it is an `if` or a `match`.
    fn branches(&self) -> bool {
        matches!(self, End::If(..) | End::Match(..))
    }
}

impl<'a> Tail<'a> {
    /// No statement, then `end`.
    pub(super) fn bare(end: End<'a>) -> Tail<'a> {
        Tail {
            stmts: Vec::new(),
            end,
        }
    }

    /// How many of its ways fall off its statements.
    pub(super) fn opens(&self) -> usize {
        match &self.end {
            End::Open => 1,
            End::If(_, clauses) | End::Match(_, clauses) => clauses.iter().map(Tail::opens).sum(),
            _ => 0,
        }
    }

    /// The one way, if any, that falls off its statements goes on as `then`.
    fn then(&mut self, then: Tail<'a>) {
        let mut then = Some(then);
        self.fill(&mut || then.take().unwrap_or_else(|| Tail::bare(End::Open)));
    }

    /// Each way that falls off its statements goes on as `with` says.
    pub(super) fn fill(&mut self, with: &mut dyn FnMut() -> Tail<'a>) {
        match &mut self.end {
            End::Open => {
                let then = with();
                self.stmts.extend(then.stmts);
                self.end = then.end;
            }
            End::If(_, clauses) | End::Match(_, clauses) => {
                clauses.iter_mut().for_each(|clause| clause.fill(with));
            }
            _ => {}
        }
    }

    /// The blocks it goes to.
    pub(super) fn targets(&self, into: &mut Vec<usize>) {
        match &self.end {
            End::Goto(node, _) => into.push(*node),
            End::If(_, clauses) | End::Match(_, clauses) => {
                clauses.iter().for_each(|clause| clause.targets(into));
            }
            _ => {}
        }
    }
}

/// The blocks of a function as they are read: a label's, and those that start after an
/// `if` or `match` with a label inside ([`Graph::list`]), which no label starts.
pub(super) struct Blocks<'n, 'a> {
    /// The block of each label, by its name.
    pub(super) names: &'n HashMap<&'a str, usize>,
    pub(super) labels: Vec<Option<&'a Stmt>>,
    pub(super) tails: Vec<Option<Tail<'a>>>,
}

impl<'a> Blocks<'_, 'a> {
    /// A block that no label starts, running `tail`: its index.
    pub(super) fn push(&mut self, tail: Tail<'a>) -> usize {
        self.labels.push(None);
        self.tails.push(Some(tail));
        self.tails.len() - 1
    }
}

impl<'g> Graph<'g> {
    /// Pushes the labels of `list` that the graph takes onto `into`, in order: its own
    /// statements', and those in the clauses of its `if`s and `match`es, at any depth.
    /// `false` where it nests deeper than [`LEVELS`].
    pub(super) fn labels_of<'a>(
        &self,
        list: &'a [Stmt],
        into: &mut Vec<&'a Stmt>,
        depth: usize,
    ) -> bool {
        if depth > LEVELS {
            return false;
        }
        for stmt in list {
            if self.markers.labels.contains_key(&stmt.start()) {
                into.push(stmt);
            } else if let Some((bodies, _)) = clauses(stmt)
                && self.markers.labelled(stmt.range())
            {
                for body in bodies {
                    if !self.labels_of(body, into, depth + 1) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The statements of `list` as they run, falling into `after`: a label ends a block and
    /// starts the next (the one `blocks` holds for it), and so does an `if` or `match` with
    /// a label in a clause, entered by its test there and by gotos into its clauses, each
    /// clause going on to what follows it (a block of its own where it holds statements).
    pub(super) fn list<'a>(
        &self,
        list: &'a [Stmt],
        after: End<'a>,
        blocks: &mut Blocks<'_, 'a>,
        depth: usize,
    ) -> Option<Tail<'a>>
    where
        'g: 'a,
    {
        if depth > LEVELS {
            return None;
        }
        let splits: Vec<usize> = (0..list.len())
            .filter(|&at| {
                self.markers.labels.contains_key(&list[at].start())
                    || clauses(&list[at]).is_some() && self.markers.labelled(list[at].range())
            })
            .collect();
        // From the last split back: what runs from each on.
        let mut then = Tail::bare(after);
        for (nth, &at) in splits.iter().enumerate().rev() {
            let end = splits.get(nth + 1).copied().unwrap_or(list.len());
            let rest = self.filled(&list[at + 1..end], then, blocks, depth)?;
            let stmt = &list[at];
            then = match self.markers.labels.get(&stmt.start()) {
                Some(label) => {
                    let node = blocks.names[label.as_str()];
                    blocks.tails[node] = Some(rest);
                    Tail::bare(End::Goto(node, None))
                }
                None => {
                    let join = match rest {
                        Tail { stmts, end } if stmts.is_empty() && !end.branches() => end,
                        rest => End::Goto(blocks.push(rest), None),
                    };
                    branched(stmt, join.clone(), |body| {
                        self.list(body, join.clone(), blocks, depth + 1)
                    })?
                }
            };
        }
        let first = splits.first().copied().unwrap_or(list.len());
        self.filled(&list[..first], then, blocks, depth)
    }

    /// The statements of `list` (no label among them) as they run, each way that falls off
    /// them going on as `then` says (a block of its own where several do and it holds
    /// statements). `None` where none does and `then` is an `if` or `match` that holds a
    /// label: its test would never run.
    fn filled<'a>(
        &self,
        list: &'a [Stmt],
        then: Tail<'a>,
        blocks: &mut Blocks<'_, 'a>,
        depth: usize,
    ) -> Option<Tail<'a>>
    where
        'g: 'a,
    {
        let mut tail = self.tail(list, blocks.names, depth)?;
        match tail.opens() {
            0 if then.end.branches() => return None,
            0 | 1 => tail.then(then),
            _ => {
                let then = if then.stmts.is_empty() && !then.end.branches() {
                    then
                } else {
                    Tail::bare(End::Goto(blocks.push(then), None))
                };
                tail.fill(&mut || then.clone());
            }
        }
        Some(tail)
    }

    /// The statements of `list` as they run; `None` where a goto or label is elsewhere than
    /// under `if`s and `match`es, a statement follows a goto, `return` or `raise`, or the
    /// statements after an `if` or `match` would be written twice.
    fn tail<'a>(
        &self,
        list: &'a [Stmt],
        names: &HashMap<&str, usize>,
        depth: usize,
    ) -> Option<Tail<'a>>
    where
        'g: 'a,
    {
        if depth > LEVELS {
            return None;
        }
        let mut tail = Tail::bare(End::Open);
        for (at, stmt) in list.iter().enumerate() {
            let last = at + 1 == list.len();
            if let Some(name) = self.markers.gotos.get(&stmt.start()) {
                tail.end = End::Goto(*names.get(name.as_str())?, Some(stmt));
                // What follows it never runs: the dead-code pass's, where it may go.
                if !last {
                    self.unreached.set(true);
                }
                return last.then_some(tail);
            }
            if !self.markers.goes(stmt.range()) {
                // A `global` or `nonlocal` must come before the uses that the blocks moved may
                // put before it.
                if self.markers.labelled(stmt.range()) || declares(stmt) {
                    return None;
                }
                tail.stmts.push(stmt);
                if jumps(stmt) {
                    // What follows it in its list never runs, and is written after it as it
                    // is (the names it binds stay the function's), where it holds no marker.
                    let dead = &list[at + 1..];
                    if (dead.iter()).any(|stmt| {
                        self.markers.labelled(stmt.range())
                            || declares(stmt)
                            || self.markers.goes(stmt.range())
                    }) {
                        self.unreached.set(true);
                        return None;
                    }
                    tail.stmts.extend(dead);
                    tail.end = End::Stop;
                    return Some(tail);
                }
                continue;
            }
            let rest = &list[at + 1..];
            let mut then = branched(stmt, End::Open, |body| self.tail(body, names, depth + 1))?;
            if !rest.is_empty() {
                let rest = self.tail(rest, names, depth)?;
                match then.opens() {
                    0 => return None,
                    1 => then.then(rest),
                    _ if rest.stmts.is_empty() && matches!(rest.end, End::Goto(..)) => {
                        then.fill(&mut || rest.clone());
                    }
                    _ => return None,
                }
            }
            tail.end = then.end;
            return Some(tail);
        }
        Some(tail)
    }
}

/// The bodies of the clauses of `stmt`, an `if` or a `match`, and whether it may run none
/// of them: an `if` with no `else`, a `match` whose last case is not irrefutable with no
/// guard (`case _:`, `case name:`).
fn clauses(stmt: &Stmt) -> Option<(Vec<&[Stmt]>, bool)> {
    match stmt {
        Stmt::If(branch) => Some((
            std::iter::once(branch.body.as_slice())
                .chain(
                    branch
                        .elif_else_clauses
                        .iter()
                        .map(|clause| clause.body.as_slice()),
                )
                .collect(),
            (branch.elif_else_clauses.last()).is_none_or(|clause| clause.test.is_some()),
        )),
        Stmt::Match(matched) => Some((
            (matched.cases.iter())
                .map(|case| case.body.as_slice())
                .collect(),
            (matched.cases.last())
                .is_none_or(|case| case.guard.is_some() || !case.pattern.is_irrefutable()),
        )),
        _ => None,
    }
}

/// `stmt`, an `if` or a `match`, as what runs from it on: each clause's body as `read`
/// reads it, and `none` where it may run none of them.
fn branched<'a>(
    stmt: &'a Stmt,
    none: End<'a>,
    read: impl FnMut(&'a [Stmt]) -> Option<Tail<'a>>,
) -> Option<Tail<'a>> {
    let (bodies, may) = clauses(stmt)?;
    let mut tails: Vec<Tail> = bodies.into_iter().map(read).collect::<Option<_>>()?;
    if may {
        tails.push(Tail::bare(none));
    }
    Some(Tail::bare(match stmt {
        Stmt::If(branch) => End::If(branch, tails),
        Stmt::Match(matched) => End::Match(matched, tails),
        _ => return None,
    }))
}

/// Whether `stmt` is a simple statement that goes on to the next: one that a block copied
/// to its jumps may hold.
pub(super) fn simple(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Expr(_)
            | Stmt::Assign(_)
            | Stmt::AugAssign(_)
            | Stmt::AnnAssign(_)
            | Stmt::Pass(_)
            | Stmt::Delete(_)
            | Stmt::Assert(_)
    )
}

/// Whether `stmt` is or holds a `global` or `nonlocal` statement of its scope.
pub(super) fn declares(stmt: &Stmt) -> bool {
    let mut work = vec![std::slice::from_ref(stmt)];
    while let Some(list) = work.pop() {
        for stmt in list {
            match stmt {
                Stmt::Global(_) | Stmt::Nonlocal(_) => return true,
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                other => work.extend(child_lists(other)),
            }
        }
    }
    false
}
