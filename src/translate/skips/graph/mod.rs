//! A function whose gotos the passes leave, written again from its flow graph
//! ([`structure`]): loops as `while True:`, branches as `if`s, each jump a `continue`, a
//! `break`, a copied `return` or the code it reaches, and no variable added where those
//! say every jump; a flag named after its label where one does not.
//!
//! ```text
//! label .even                        while True:
//! if n % 2:                              if n % 2:
//!     goto .odd                              n = 3 * n + 1
//! n //= 2                                    if n > 100:
//! goto .even                                     return n
//! label .odd                             else:
//! n = 3 * n + 1                              n //= 2
//! if n > 100:
//!     return n
//! goto .even
//! ```
//!
//! Taken where every label of the function is a statement of its body and every goto lies
//! in that body under `if`s only: the body is then a list of blocks (the statements before
//! the first label, then each label's up to the next), each a tree of `if`s whose leaves are
//! gotos, exits (`return`, `raise`, and what follows them in their list, which never runs)
//! and falls into the next block. An `if` one of whose clauses falls through takes the
//! statements after it into that clause (into none when no clause does, and only a goto
//! when several do). The graph of the blocks is read as the Relooper family reads it
//! ("Beyond Relooper", Ramsey 2022): a block's dominator writes it, inside its own code
//! where one edge enters it, after its own code where more do (in reverse postorder) and
//! after its loop where it lies outside the loop (else where its one edge is), and `while
//! True:` around a block that an edge from a block it dominates enters again, its body
//! falling back to its head (else into what follows it, by a `break` at its end). Each jump
//! is then written by where it goes from where it is, and by nothing else: nothing where
//! the code falls there anyway, `continue` to the innermost loop's head, `break` to what
//! follows the innermost loop, a `return` or `raise` that a label holds alone copied, the
//! code of a block that only this jump enters; a loop whose head leaves it on a test is
//! `while not (TEST):`, an `else` that is one such `if` alone its `elif`s ([`write`]).
//! Where none of these say a jump in any of those ways of placing the blocks (out of two
//! loops at once, to a block two places enter that is not the one after), and Python has no
//! labelled `break` (Kosaraju, 1974: some such graphs need a variable or a copy), the jump
//! sets a flag named after its label (`_goto_done = True; break`), read by `if _goto_done:
//! break` after the loops it leaves and `if not _goto_done:` around the blocks it goes past,
//! `False` before them; the way that sets the fewest is taken, and only for the functions
//! that no way writes without (the passes may take the others once those are written, in the
//! next round). A `global` or `nonlocal` statement, a function of more than [`NODES`]
//! blocks, or code nesting deeper than [`LEVELS`] or CPython's blocks, and the function is
//! left to the passes and the dispatch loop: so every jump is written as one that goes where
//! the goto went, through the same statements (the function's own, no `with` or `try` in
//! between), and the written function is the same program. Comments go with the statement
//! after them, a label's before its block or on its `while True:`, a goto's with what it
//! becomes; the statements keep their text, one level deeper or shallower, and the body
//! its number of lines where it does not grow (blank lines after it).

use super::*;
use crate::translate::blocks;

mod write;

use write::Writer;

/// The largest function taken, in blocks.
const NODES: usize = 1_000;

/// How many levels deeper than its body the written function nests at most.
const LEVELS: usize = 40;

/// The source with the functions of `checked`'s scopes that still hold gotos as
/// `written_checked` written from their graphs, where that writes any: where a block that
/// nothing reaches is in the way, from the source as the first passes write it (those
/// blocks gone, [`Shape::Dead`], and `if A: goto .l` / `if B: goto .l` one jump,
/// [`Shape::Merge`]), when that writes more, each function the source writes among them.
pub(super) fn graphed(
    source: &Source,
    checked: &Checked,
    written_checked: &Checked,
    options: Options,
) -> Option<String> {
    let scopes = &written_checked.module.scopes;
    if scopes.len() != checked.module.scopes.len() {
        return None;
    }
    let left: Vec<usize> = (0..scopes.len())
        .filter(|&index| {
            (scopes[index].markers.iter())
                .any(|marker| matches!(marker.kind, MarkerKind::Goto { .. }))
        })
        .collect();
    if left.is_empty() {
        return None;
    }
    let markers = Markers::of(&checked.module, false);
    let first = structure(source.text(), checked, &markers, &left);
    if !first.unreached {
        // The other functions the passes leave stay as they are: no second check of the
        // module for them (a dispatcher of 64,000 states is one).
        return first.text;
    }
    let again = first_passes(
        source,
        checked,
        options,
        &[Shape::Dead, Shape::Merge],
        &|base, base_checked| {
            let markers = Markers::of(&base_checked.module, false);
            (base_checked.module.scopes.len() == scopes.len())
                .then(|| structure(base.text(), base_checked, &markers, &left))
        },
    );
    match again {
        // Where it writes what the source did and more; the functions it does not write are
        // read from the source again in the next round.
        Some(again)
            if again.written.len() > first.written.len()
                && again.written.is_superset(&first.written) =>
        {
            again.text
        }
        _ => first.text,
    }
}

/// `then` of the source as `shapes` write it, each pass's text checked for the next.
fn first_passes<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    shapes: &[Shape],
    then: &(dyn Fn(&Source, &Checked) -> T + Sync),
) -> T {
    let Some((&shape, rest)) = shapes.split_first() else {
        return then(source, checked);
    };
    let markers = Markers::of(&checked.module, false);
    let lines = Lines::of(source.text(), checked);
    let Some(text) = pass(shape, source.text(), &lines, &markers, checked) else {
        return first_passes(source, checked, options, rest, then);
    };
    let written = Source::new(source.path(), text);
    match on_checked(&written, options, |written_checked| {
        Ok(first_passes(
            &written,
            &written_checked,
            options,
            rest,
            then,
        ))
    }) {
        Ok(done) => done,
        Err(_) => then(source, checked),
    }
}

/// What [`structure`] wrote.
struct Structured {
    /// The source with the functions written, `None` when there are none.
    text: Option<String>,
    /// The functions written, by their scopes' indices.
    written: HashSet<usize>,
    /// Whether a function was not for a block that nothing reaches.
    unreached: bool,
}

/// The source with the functions of `scopes` (indices of `checked`'s scopes, those that
/// [`Markers::of`] takes) that the graph writes without gotos written so.
fn structure(text: &str, checked: &Checked, markers: &Markers, scopes: &[usize]) -> Structured {
    // Those with few enough blocks, before anything is read of the text.
    let taken: HashSet<usize> = markers.scope.values().copied().collect();
    let scopes: Vec<(usize, usize)> = (scopes.iter().copied())
        .filter(|index| taken.contains(index))
        .map(|index| {
            let markers = &checked.module.scopes[index].markers;
            let labels = (markers.iter())
                .filter(|marker| matches!(marker.kind, MarkerKind::Label { .. }))
                .count();
            (index, labels)
        })
        .filter(|&(_, labels)| labels < NODES)
        .collect();
    let mut structured = Structured {
        text: None,
        written: HashSet::new(),
        unreached: false,
    };
    if scopes.is_empty() {
        return structured;
    }
    let lines = Lines::of(text, checked);
    let comments: Vec<TextRange> = (checked.parsed.tokens().iter())
        .filter(|token| token.kind() == TokenKind::Comment)
        .map(Ranged::range)
        .collect();
    let mut functions = Vec::new();
    let mut work = vec![checked.parsed.syntax().body.as_slice()];
    while let Some(list) = work.pop() {
        for stmt in list {
            if let Stmt::FunctionDef(function) = stmt {
                functions.push(function);
            }
            work.extend(child_lists(stmt));
        }
    }
    let mut edits: Vec<(usize, TextRange, String, bool)> = Vec::new();
    for (index, labels) in scopes {
        let scope = &checked.module.scopes[index];
        let Some(function) =
            (functions.iter()).find(|function| function.name.range() == scope.name_range)
        else {
            continue;
        };
        let graph = Graph {
            text,
            lines: &lines,
            markers,
            comments: &comments,
            labels,
            unreached: std::cell::Cell::new(false),
        };
        match graph.function(&function.body) {
            Some((range, text, flagged)) => edits.push((index, range, text, flagged)),
            None => structured.unreached |= graph.unreached.get(),
        }
    }
    // Those that set a flag only where none is written without: the passes may take them
    // once the others are written, and the graph those they leave in the next round.
    if edits.iter().any(|&(.., flagged)| !flagged) {
        edits.retain(|&(.., flagged)| !flagged);
    }
    edits.sort_by_key(|(_, range, ..)| range.start());
    // A function inside another that is written too goes as the outer one writes it.
    let mut kept: Vec<(TextRange, String)> = Vec::new();
    for (index, range, with, _) in edits {
        if kept
            .last()
            .is_none_or(|(last, _)| last.end() <= range.start())
        {
            kept.push((range, with));
            structured.written.insert(index);
        }
    }
    if !kept.is_empty() {
        structured.text = Some(edited(text, kept));
    }
    structured
}

/// What one function is read in.
struct Graph<'g> {
    text: &'g str,
    lines: &'g Lines,
    markers: &'g Markers,
    comments: &'g [TextRange],
    /// How many labels the function has.
    labels: usize,
    /// Whether a block of the function is one that nothing reaches.
    unreached: std::cell::Cell<bool>,
}

/// A block's statements, as they run: statements that hold no goto, then how the block goes
/// on.
#[derive(Clone)]
struct Tail<'a> {
    stmts: Vec<&'a Stmt>,
    end: End<'a>,
}

#[derive(Clone)]
enum End<'a> {
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
}

impl<'a> Tail<'a> {
    /// How many of its ways fall off its statements.
    fn opens(&self) -> usize {
        match &self.end {
            End::Open => 1,
            End::If(_, clauses) => clauses.iter().map(Tail::opens).sum(),
            _ => 0,
        }
    }

    /// Each way that falls off its statements goes on as `with` says.
    fn fill(&mut self, with: &mut dyn FnMut() -> Tail<'a>) {
        match &mut self.end {
            End::Open => {
                let then = with();
                self.stmts.extend(then.stmts);
                self.end = then.end;
            }
            End::If(_, clauses) => clauses.iter_mut().for_each(|clause| clause.fill(with)),
            _ => {}
        }
    }

    /// The blocks it goes to.
    fn targets(&self, into: &mut Vec<usize>) {
        match &self.end {
            End::Goto(node, _) => into.push(*node),
            End::If(_, clauses) => clauses.iter().for_each(|clause| clause.targets(into)),
            _ => {}
        }
    }
}

/// Where a jump goes: a block, or off the function's end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum To {
    Node(usize),
    Exit,
}

/// The blocks of one function and what its graph says of them.
struct Flow<'a> {
    labels: Vec<Option<&'a Stmt>>,
    tails: Vec<Tail<'a>>,
    /// The immediate dominator of each block.
    idom: Vec<usize>,
    /// How many edges enter each block that it does not dominate the start of.
    forward: Vec<usize>,
    /// The blocks an edge from a block each dominates enters: the loops, each with the blocks
    /// of its natural loop.
    loops: HashMap<usize, HashSet<usize>>,
    /// The blocks each block immediately dominates, in reverse postorder.
    children: Vec<Vec<usize>>,
    /// The blocks that are one `return` or `raise` alone, which every jump to them copies.
    copied: Vec<bool>,
}

impl Flow<'_> {
    fn dominates(&self, over: usize, mut node: usize) -> bool {
        loop {
            if node == over {
                return true;
            }
            if node == 0 {
                return false;
            }
            node = self.idom[node];
        }
    }
}

impl<'g> Graph<'g> {
    /// The edit that writes `body`, a function's, from its graph: its lines, from the
    /// first's start to the last's end, their new text, and whether it sets a flag.
    fn function<'a>(&self, body: &'a [Stmt]) -> Option<(TextRange, String, bool)>
    where
        'g: 'a,
    {
        let flow = self.flow(body)?;
        let first = self.lines.line(body.first()?.start());
        let last = self.lines.line(body.last()?.end());
        let range = TextRange::new(self.lines.starts[first], self.line_end(last));
        if self.lines.tabbed(range.start(), range.end()) {
            return None;
        }
        let indent = &self.text[usize::from(range.start())..usize::from(body[0].start())];
        if !indent.chars().all(|c| c == ' ') {
            return None;
        }
        // A loop's exits after it first, then where their one jump is; then each loop's body
        // falling into what follows it. With flags where none writes it without, the way
        // that sets the fewest.
        let ways = [(true, false), (false, false), (true, true), (false, true)];
        let write = |(exits_after, breaks), flags| {
            let mut writer = Writer {
                graph: self,
                flow: &flow,
                indent: indent.to_owned(),
                first,
                out: Vec::new(),
                loops: Vec::new(),
                written: 0,
                exits_after,
                placed: vec![false; flow.tails.len()],
                trees: 0,
                breaks,
                flags,
                chains: Vec::new(),
                names: HashMap::new(),
            };
            writer.tree(0, To::Exit, 0).map(|_| writer)
        };
        let writer = (ways.into_iter().find_map(|way| write(way, false))).or_else(|| {
            (ways.into_iter())
                .filter_map(|way| write(way, true))
                .min_by_key(|writer| writer.names.len())
        })?;
        let flagged = !writer.names.is_empty();
        // Every comment of the body, once.
        let within = (self.comments.iter())
            .filter(|comment| range.contains_range(**comment))
            .count();
        if writer.written != within {
            return None;
        }
        let mut out = writer.out;
        // The lines after the body stay where they were, where it does not grow.
        let count = last + 1 - first;
        if out.len() < count {
            out.resize(count, String::new());
        }
        Some((range, out.join("\n"), flagged))
    }

    /// The blocks of `body` and its graph; `None` where a label or goto of the function
    /// lies elsewhere, a block no goto reaches, or more than [`NODES`] blocks.
    fn flow<'a>(&self, body: &'a [Stmt]) -> Option<Flow<'a>>
    where
        'g: 'a,
    {
        let at: Vec<usize> = (0..body.len())
            .filter(|&at| self.markers.labels.contains_key(&body[at].start()))
            .collect();
        if at.is_empty() || at.len() != self.labels {
            return None;
        }
        let names: HashMap<&str, usize> = (at.iter().enumerate())
            .map(|(nth, &at)| (self.markers.labels[&body[at].start()].as_str(), nth + 1))
            .collect();
        let mut starts = vec![0];
        starts.extend(at.iter().map(|&at| at + 1));
        let mut ends = at.clone();
        ends.push(body.len());
        let mut labels = vec![None];
        labels.extend(at.iter().map(|&at| Some(&body[at])));
        let mut tails = Vec::with_capacity(starts.len());
        for (node, (&start, &end)) in starts.iter().zip(&ends).enumerate() {
            let mut tail = self.tail(&body[start..end], &names, 0)?;
            let next = if node + 1 < starts.len() {
                End::Goto(node + 1, None)
            } else {
                End::Exit
            };
            tail.fill(&mut || Tail {
                stmts: Vec::new(),
                end: next.clone(),
            });
            tails.push(tail);
        }
        let count = tails.len();
        let succs: Vec<Vec<usize>> = (tails.iter())
            .map(|tail| {
                let mut into = Vec::new();
                tail.targets(&mut into);
                into
            })
            .collect();
        // Reverse postorder, iteratively.
        let mut order = Vec::with_capacity(count);
        let mut seen = vec![false; count];
        let mut stack = vec![(0, 0)];
        seen[0] = true;
        while let Some((node, next)) = stack.pop() {
            if let Some(&succ) = succs[node].get(next) {
                stack.push((node, next + 1));
                if !seen[succ] {
                    seen[succ] = true;
                    stack.push((succ, 0));
                }
            } else {
                order.push(node);
            }
        }
        if order.len() != count {
            self.unreached.set(true);
            return None;
        }
        order.reverse();
        let mut rank = vec![0; count];
        for (nth, &node) in order.iter().enumerate() {
            rank[node] = nth;
        }
        let mut preds = vec![Vec::new(); count];
        for (node, targets) in succs.iter().enumerate() {
            for &target in targets {
                preds[target].push(node);
            }
        }
        // Cooper, Harvey and Kennedy's dominators.
        let mut idom = vec![usize::MAX; count];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &node in &order[1..] {
                crate::splice::count(preds[node].len());
                let mut done = preds[node].iter().filter(|&&pred| idom[pred] != usize::MAX);
                let Some(&first) = done.next() else { continue };
                let mut new = first;
                for &pred in done {
                    let (mut a, mut b) = (pred, new);
                    while a != b {
                        while rank[a] > rank[b] {
                            a = idom[a];
                        }
                        while rank[b] > rank[a] {
                            b = idom[b];
                        }
                    }
                    new = a;
                }
                if idom[node] != new {
                    idom[node] = new;
                    changed = true;
                }
            }
        }
        let mut flow = Flow {
            labels,
            tails,
            idom,
            forward: vec![0; count],
            loops: HashMap::new(),
            children: vec![Vec::new(); count],
            copied: vec![false; count],
        };
        for &node in &order[1..] {
            flow.children[flow.idom[node]].push(node);
        }
        for (node, targets) in succs.iter().enumerate() {
            for &target in targets {
                if flow.dominates(target, node) {
                    // Its natural loop: the blocks that reach `node` without `target`.
                    let members = flow.loops.entry(target).or_default();
                    members.insert(target);
                    let mut work = vec![node];
                    while let Some(member) = work.pop() {
                        if members.insert(member) {
                            work.extend(preds[member].iter().copied());
                        }
                    }
                } else {
                    flow.forward[target] += 1;
                }
            }
        }
        for node in 1..count {
            let tail = &flow.tails[node];
            let label = flow.labels[node]?;
            let end = body[..ends[node]].last().map_or(label.end(), Ranged::end);
            let range = TextRange::new(label.start(), self.line_end(self.lines.line(end)));
            let inside = (self.comments).partition_point(|comment| comment.start() < range.start());
            // A copy would write its comments twice.
            let quiet = !self.commented(label)
                && (self.comments.get(inside)).is_none_or(|comment| comment.end() > range.end());
            flow.copied[node] = quiet
                && matches!(
                    (tail.stmts.as_slice(), &tail.end),
                    ([Stmt::Return(_) | Stmt::Raise(_)], End::Stop)
                );
        }
        Some(flow)
    }

    /// The statements of `list` as they run; `None` where a goto or label is elsewhere than
    /// under `if`s, a statement follows a goto, `return` or `raise`, or the statements after
    /// an `if` would be written twice.
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
        let mut tail = Tail {
            stmts: Vec::new(),
            end: End::Open,
        };
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
            let Stmt::If(branch) = stmt else { return None };
            let mut clauses = vec![self.tail(&branch.body, names, depth + 1)?];
            for clause in &branch.elif_else_clauses {
                clauses.push(self.tail(&clause.body, names, depth + 1)?);
            }
            if (branch.elif_else_clauses.last()).is_none_or(|clause| clause.test.is_some()) {
                clauses.push(Tail {
                    stmts: Vec::new(),
                    end: End::Open,
                });
            }
            let mut then = Tail {
                stmts: Vec::new(),
                end: End::If(branch, clauses),
            };
            let rest = &list[at + 1..];
            if !rest.is_empty() {
                let rest = self.tail(rest, names, depth)?;
                match then.opens() {
                    0 => return None,
                    1 => {
                        let mut rest = Some(rest);
                        then.fill(&mut || {
                            rest.take().unwrap_or_else(|| Tail {
                                stmts: Vec::new(),
                                end: End::Open,
                            })
                        });
                    }
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

    /// The end of line `line`, before its line break.
    fn line_end(&self, line: usize) -> TextSize {
        (self.lines.starts.get(line + 1))
            .map_or(TextSize::of(self.text), |&next| next - TextSize::from(1))
    }

    /// The comment after `stmt` on its last line, if nothing else follows it there.
    fn trailing(&self, stmt: &Stmt) -> Option<&'g str> {
        let end = self.line_end(self.lines.line(stmt.end()));
        let rest = self.text[usize::from(stmt.end())..usize::from(end)].trim();
        rest.starts_with('#').then_some(rest)
    }

    /// The comment after the header of a clause whose test (or `else`) ends at `after`, when
    /// its body starts on a line of its own.
    fn header_comment(&self, after: TextSize) -> Option<&'g str> {
        let end = self.line_end(self.lines.line(after));
        let rest = self.text[usize::from(after)..usize::from(end)].trim_start_matches([')', ' ']);
        let rest = rest.strip_prefix(':')?.trim();
        rest.starts_with('#').then_some(rest)
    }

    /// The comments on lines of their own right above the line of `start`, from line
    /// `first` on.
    fn leading(&self, start: TextSize, first: usize) -> Vec<&'g str> {
        let mut line = self.lines.line(start);
        let mut found = Vec::new();
        while line > first {
            line -= 1;
            let text =
                &self.text[usize::from(self.lines.starts[line])..usize::from(self.line_end(line))];
            let text = text.trim();
            if !text.starts_with('#') || self.lines.inside[line] {
                break;
            }
            found.push(text);
        }
        found.reverse();
        found
    }

    /// Whether a comment goes with `stmt`: after it, or on lines of their own above it.
    fn commented(&self, stmt: &Stmt) -> bool {
        self.trailing(stmt).is_some() || !self.leading(stmt.start(), 0).is_empty()
    }
}

/// Whether `stmt` is or holds a `global` or `nonlocal` statement of its scope.
fn declares(stmt: &Stmt) -> bool {
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
