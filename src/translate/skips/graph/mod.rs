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
//! Taken where every label of the function is a statement of its body or of a clause of an `if` or
//! a case of a `match` in it (at any depth of those), and every goto lies in that body under `if`s
//! and `match`es only: the body is then a list of blocks (the statements before the first label,
//! then each label's up to the next; an `if` or `match` with a label in a clause ends a block, and
//! what follows it starts one, which each clause falls into: [`read`]), each a tree of `if`s and
//! `match`es whose leaves are gotos, exits (`return`, `raise`, and what follows them in their list,
//! which never runs) and falls into the next block. An `if` one of whose clauses falls through
//! takes the statements after it into that clause (into none when no clause does, and only a goto
//! when several do). The graph of the blocks is read as the Relooper family reads it ("Beyond
//! Relooper", Ramsey 2022): a block's dominator writes it, inside its own code where one edge
//! enters it, after its own code where more do (in reverse postorder) and after its loop where it
//! lies outside the loop (else where its one edge is), and `while True:` around a block that an
//! edge from a block it dominates enters again, its body falling back to its head (else into what
//! follows it, by a `break` at its end). Each jump is then written by where it goes from where it
//! is, and by nothing else: nothing where the code falls there anyway, `continue` to the innermost
//! loop's head, `break` to what follows the innermost loop, a `return` or `raise` that a label
//! holds alone copied, the code of a block that only this jump enters; a loop whose head leaves it
//! on a test is `while not (TEST):`, an `else` that is one such `if` alone its `elif`s ([`write`]).
//! Where none of these say a jump in any of those ways of placing the blocks, a block of at most
//! [`SMALL`] simple statements that several edges enter is copied to each (with the jump it ends
//! in, written from there), as a person writes `log.append("else")` in two clauses rather than a
//! flag for it. Where that does not say one either (out of two loops at once, to a larger block two
//! places enter that is not the one after), and Python has no labelled `break` (Kosaraju, 1974:
//! some such graphs need a variable or a copy), the jump sets a flag named after its label
//! (`_goto_done = True; break`), read by `if _goto_done: break` after the loops it leaves and `if
//! not _goto_done:` around the blocks it goes past, `False` before them; the way that sets the
//! fewest is taken, and only for the functions that no way writes without (the passes may take the
//! others once those are written, in the next round). A `global` or `nonlocal` statement, a
//! function of more than [`NODES`] blocks, or code nesting deeper than [`LEVELS`] or CPython's
//! blocks, and the function is left to the passes and the dispatch loop: so every jump is written
//! as one that goes where the goto went, through the same statements (the function's own, no `with`
//! or `try` in between), and the written function is the same program. Comments go with the
//! statement after them, a label's before its block or on its `while True:`, a goto's with what it
//! becomes; the statements keep their text, one level deeper or shallower, and the body its number
//! of lines where it does not grow (blank lines after it).

use super::*;
use crate::translate::blocks;

mod read;
mod write;

use read::{Blocks, End, Tail, simple};
use write::Writer;

/// The largest function taken, in blocks.
const NODES: usize = 1_000;

/// How many levels deeper than its body the written function nests at most.
const LEVELS: usize = 40;

/// How many statements a block copied to its jumps holds at most.
const SMALL: usize = 2;

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
    /// The blocks that a way may copy to every jump to them ([`Writer::copies`]).
    small: Vec<bool>,
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
        let write = |(exits_after, breaks), (flags, copies)| {
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
                copies,
                chains: Vec::new(),
                names: HashMap::new(),
            };
            writer.tree(0, To::Exit, 0).map(|_| writer)
        };
        // Then the same with small blocks copied to their jumps, where there are any.
        let copies: &[bool] = if flow.small.contains(&true) {
            &[false, true]
        } else {
            &[false]
        };
        let writer = (copies.iter())
            .find_map(|&copies| ways.into_iter().find_map(|way| write(way, (false, copies))))
            .or_else(|| {
                (copies.iter())
                    .flat_map(|&copies| ways.map(|way| (way, copies)))
                    .filter_map(|(way, copies)| write(way, (true, copies)))
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
        let mut found = Vec::new();
        if !self.labels_of(body, &mut found, 0) || found.is_empty() || found.len() != self.labels {
            return None;
        }
        let names: HashMap<&str, usize> = (found.iter().enumerate())
            .map(|(nth, label)| (self.markers.labels[&label.start()].as_str(), nth + 1))
            .collect();
        let mut labels = vec![None];
        labels.extend(found.iter().map(|&label| Some(label)));
        let mut blocks = Blocks {
            names: &names,
            tails: vec![None; labels.len()],
            labels,
        };
        blocks.tails[0] = Some(self.list(body, End::Exit, &mut blocks, 0)?);
        let Blocks { labels, tails, .. } = blocks;
        let tails: Vec<Tail> = tails.into_iter().collect::<Option<_>>()?;
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
            small: vec![false; count],
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
        // A copy would write its comments twice: the blocks copied have none.
        let quiet: Vec<bool> = (0..count).map(|node| self.quiet(&flow, node)).collect();
        flow.copied = (flow.tails.iter().zip(&quiet))
            .map(|(tail, &quiet)| {
                quiet
                    && matches!(
                        (tail.stmts.as_slice(), &tail.end),
                        ([Stmt::Return(_) | Stmt::Raise(_)], End::Stop)
                    )
            })
            .collect();
        // Blocks of a few simple statements, each on a line of its own, that two or more
        // edges enter and that dominate none, going on to a block that is no such one: a
        // way may copy them to the jumps that reach them (each copy goes on as the block
        // did), so that a block two places enter needs no flag.
        let few = |node: usize| {
            let tail = &flow.tails[node];
            node > 0
                && quiet[node]
                && !flow.copied[node]
                && flow.forward[node] > 1
                && flow.children[node].is_empty()
                && !flow.loops.contains_key(&node)
                && tail.stmts.len() <= SMALL
                && (tail.stmts.iter()).all(|stmt| {
                    simple(stmt) && self.lines.line(stmt.start()) == self.lines.line(stmt.end())
                })
                && matches!(tail.end, End::Goto(..) | End::Exit)
        };
        let few: Vec<bool> = (0..count).map(few).collect();
        flow.small = (0..count)
            .map(|node| {
                few[node] && !matches!(flow.tails[node].end, End::Goto(next, _) if few[next])
            })
            .collect();
        Some(flow)
    }

    /// Whether no comment goes with block `node`'s label or lies among its statements, up
    /// to the goto that ends it (none for a block that no label starts).
    fn quiet(&self, flow: &Flow, node: usize) -> bool {
        let Some(label) = flow.labels[node] else {
            return false;
        };
        let tail = &flow.tails[node];
        let goto = match tail.end {
            End::Goto(_, goto) => goto,
            _ => None,
        };
        let end = (tail.stmts.iter().copied().chain(goto))
            .map(Ranged::end)
            .fold(label.end(), TextSize::max);
        let range = TextRange::new(label.start(), self.line_end(self.lines.line(end)));
        let inside = (self.comments).partition_point(|comment| comment.start() < range.start());
        !self.commented(label)
            && (self.comments.get(inside)).is_none_or(|comment| comment.end() > range.end())
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

    /// The header of a compound statement from `start` to the colon after `end` (closing
    /// brackets between), when it takes one line.
    fn header(&self, start: TextSize, end: TextSize) -> Option<&'g str> {
        let rest = &self.text[usize::from(end)..];
        let colon = usize::from(end) + rest.len() - rest.trim_start_matches([')', ' ']).len();
        let header = &self.text[usize::from(start)..colon];
        (self.text[colon..].starts_with(':') && !header.contains('\n')).then_some(header)
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
