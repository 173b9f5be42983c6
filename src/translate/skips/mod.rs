//! Forward skips as `if`s and `else`s, and loops as `while`s, before the translation
//! proper: a ladder of conditional gotos to blocks that meet again is one `if` with its
//! `elif`s ([`ladder`]), a loop that tests at its end `while True:` ([`repeat`]); `if TEST: goto .l`, then some statements, then `label .l`, all three in one
//! statement list, is the same program as `if not (TEST):` over those statements ([`skip`]); an `if`
//! whose body ends with `goto .l` before some statements and `label .l` is that `if` with an
//! `else:` over them; `label .l` then an `if TEST:` whose body ends with `goto .l` is `while
//! TEST:` over the rest of that body, and `label .l`, `if TEST:` over an exit, some
//! statements, `goto .l` is `while not (TEST):` over them, the exit after it; a loop that a goto restarts is `while True:` around
//! it with an `else:`; a loop that a goto leaves for the label after it is that loop with a
//! `break`, what came between its `else:`; two loops left at once are `break`, `else:` and
//! `continue` ([`escape`]); a `try` whose handlers go past the statements after it is that
//! `try` with those statements its `else:` ([`handled`]); a block that one goto alone enters
//! moves to that goto ([`inline`]; [`Shape`]). A label goes when no other goto names it.
//! The source is written so, on the same lines (the new `if` on the old one's, the `else:`
//! on the goto's, the statements one level deeper, the label's line left blank but for its
//! comment), and the translation proper takes that source: what needed the register and a
//! dispatch loop needs neither.
//!
//! Skips in one list are taken where they nest or follow each other, never where they
//! cross. A goto to a label inside the skipped statements, or out of them, stays a goto of
//! the rewritten source, which the translation proper handles as any other. In a scope
//! with a computed goto only loops are taken, their labels kept and none in their bodies
//! ([`Markers::reached_inside`]). Nothing is taken from a scope with a switch, nor where
//! the text would not survive a change of indentation: a tab in the indentation, carriage
//! returns. The lines inside a string are copied as they are.

use std::collections::{HashMap, HashSet};

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::token::TokenKind;
use rustpython_compiler::ast::{self as ast, Stmt};

use crate::front::scan::{MarkerKind, Module, Options};
use crate::front::source::Source;
use crate::plan::{Checked, CompileError, on_checked};

mod block;
mod dead;
mod escape;
mod exit;
mod graph;
mod handled;
mod inline;
mod ladder;
mod leave;
mod repeat;
mod skip;
mod switch;
mod unelse;

pub(super) use switch::{Shifts, switches_written};

/// `then` of the source with its forward skips written as `if`s and `else`s and its loops
/// as `while`s, and the functions whose gotos the passes leave written from their graphs,
/// each whole or not at all ([`graph`]): each source a pass writes is checked once, and
/// that check serves the passes after it and then `then`. `None` when no pass takes
/// anything, or when a written source fails (its check, or `then`): the caller goes on with
/// the source as it is. `checked` is the source's.
pub(super) fn structured<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    then: impl Fn(&Source, Checked) -> Result<T, CompileError> + Sync,
) -> Option<T> {
    rounds(source, checked, options, &then)
}

/// [`structured`]: the passes, then the graph over the functions they leave gotos in; where
/// it writes some, the same again from its text (the passes may take what the graph left,
/// and the graph then what needs a flag), else `then`. Each round writes a function more
/// without gotos, so they end.
fn rounds<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    then: &(dyn Fn(&Source, Checked) -> Result<T, CompileError> + Sync),
) -> Option<T> {
    /// What the passes came to: `then`'s result, or the source with the functions they
    /// leave gotos in written from their graphs, for the passes to start again from.
    enum Next<T> {
        Done(T),
        Graphed(String),
    }
    let passed = |written: &Source, written_checked: Checked| match graph::graphed(
        source,
        checked,
        &written_checked,
        options,
    ) {
        Some(text) => Ok(Next::Graphed(text)),
        None => then(written, written_checked).map(Next::Done),
    };
    let text = match run(source, checked, options, &passed) {
        Some(Next::Done(done)) => return Some(done),
        Some(Next::Graphed(text)) => text,
        None => graph::graphed(source, checked, checked, options)?,
    };
    let written = Source::new(source.path(), text);
    let done = on_checked(&written, options, |written_checked| {
        match rounds(&written, &written_checked, options, then) {
            Some(done) => Ok(done),
            None => then(&written, written_checked),
        }
    });
    debug_assert!(
        !done.as_ref().is_err_and(misparsed),
        "a function written from its graph does not parse:\n{}",
        written.text()
    );
    done.ok()
}

/// [`structured`]'s passes: `then` of the source the last pass wrote; `None` when no pass
/// takes anything, or a written source fails.
fn run<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    then: &(dyn Fn(&Source, Checked) -> Result<T, CompileError> + Sync),
) -> Option<T> {
    /// What one check of a written source came to.
    enum Step<T> {
        /// A pass wrote the source again: the next pass's index, the text, and the round
        /// of the last passes.
        Written(usize, String, Round),
        /// No pass after took anything: `then`'s result.
        Done(Result<T, CompileError>),
    }
    let (mut next, text) = passes(0, source, checked);
    let mut written = Source::new(source.path(), text?);
    // The loops the last passes make may close loops around them: those passes run again
    // while one of them took something in the round before, a few rounds at most (each
    // takes a label, but each costs a check).
    let mut round = Round {
        again: feeds(next),
        count: 0,
    };
    loop {
        let step = on_checked(&written, options, |checked| {
            let (mut from, mut round) = (next, round);
            loop {
                match passes(from, &written, &checked) {
                    (after, Some(text)) => {
                        round.again |= feeds(after);
                        return Ok(Step::Written(after, text, round));
                    }
                    (_, None) if round.again && round.count < ROUNDS => {
                        round = Round {
                            again: false,
                            count: round.count + 1,
                        };
                        from = SHAPES.len() - AGAIN;
                    }
                    (_, None) => return Ok(Step::Done(then(&written, checked))),
                }
            }
        });
        if let Err(error) = &step {
            // A pass writes the same program, so what it wrote parses unless it nests past a
            // bound of the language. The module goes on without the passes either way; a
            // test build says why.
            debug_assert!(
                !misparsed(error),
                "a pass wrote what does not parse:\n{error}\n{}",
                written.text()
            );
        }
        match step.ok()? {
            Step::Written(after, text, now) => {
                (next, round) = (after, now);
                written = Source::new(source.path(), text);
            }
            Step::Done(done) => return done.ok(),
        }
    }
}

/// Where the last passes stand ([`AGAIN`]): whether one of them took something since they
/// last ran from the first of them, and how many rounds of them ran again.
#[derive(Clone, Copy)]
struct Round {
    again: bool,
    count: usize,
}

/// Whether `error` is a syntax error other than a bound of nesting (`too many nested
/// parentheses`, `too complex`): one that a pass's own text made.
fn misparsed(error: &CompileError) -> bool {
    let CompileError::Rejected { diagnostics, .. } = error else {
        return false;
    };
    (diagnostics.iter()).any(|diagnostic| {
        diagnostic.code == crate::front::diagnostic::Code::SyntaxError
            && !diagnostic.message.starts_with("syntax error: too ")
    })
}

/// The passes from the `from`-th on `source` as `checked`, up to the first that writes it:
/// the next pass's index, and the text written.
fn passes(from: usize, source: &Source, checked: &Checked) -> (usize, Option<String>) {
    let text = source.text();
    let markers = Markers::of(&checked.module, false);
    // The scopes with a computed goto, for the loop pass alone: a `while` is what runs a
    // tight loop there at the speed of the rewritten code, and every other pass would cost
    // a walk of the function and a check of what it wrote for jumps taken once.
    let looped = (!markers.by_value.is_empty()).then(|| Markers::of(&checked.module, true));
    let all = looped.as_ref().unwrap_or(&markers);
    if text.contains('\r') || all.gotos.is_empty() {
        return (SHAPES.len(), None);
    }
    let lines = Lines::of(text, checked);
    for (at, &shape) in SHAPES.iter().enumerate().skip(from) {
        let markers = if shape == Shape::Loop { all } else { &markers };
        if markers.gotos.is_empty() {
            continue;
        }
        if let Some(text) = pass(shape, text, &lines, markers, checked) {
            return (at + 1, Some(text));
        }
    }
    (SHAPES.len(), None)
}

/// One pass over `text` (its `lines` and `markers`, as `checked`): the source with the
/// skips of `shape` taken.
fn pass(
    shape: Shape,
    text: &str,
    lines: &Lines,
    markers: &Markers,
    checked: &Checked,
) -> Option<String> {
    let mut finder = Finder {
        shape,
        markers,
        text,
        lines,
        skips: Vec::new(),
        shifted: Vec::new(),
        repeated: Vec::new(),
        comments: if matches!(shape, Shape::Dead | Shape::Fall) {
            (checked.parsed.tokens().iter())
                .filter(|token| token.kind() == TokenKind::Comment)
                .map(Ranged::range)
                .collect()
        } else {
            Vec::new()
        },
        entries: std::cell::OnceCell::new(),
        moves: inline::Moves::default(),
    };
    let body = &checked.parsed.syntax().body;
    match shape {
        Shape::Exit => finder.exits(body),
        Shape::Dead | Shape::Fall => finder.deads(body),
        Shape::Ladder => finder.ladders(body),
        _ => finder.lists(body),
    }
    if finder.skips.is_empty() {
        return None;
    }
    rewrite(text, lines, markers, &finder.skips)
}

/// The gotos and labels of the scopes whose forward skips may be taken, by where their
/// statements start.
struct Markers {
    gotos: HashMap<TextSize, String>,
    labels: HashMap<TextSize, String>,
    /// How many gotos of its scope name each label (by where the label starts).
    named: HashMap<TextSize, usize>,
    /// The scope of each goto and label (its index), by where it starts.
    scope: HashMap<TextSize, usize>,
    /// Where the labels start, in order.
    ordered: Vec<TextSize>,
    /// Where the gotos start, in order.
    ordered_gotos: Vec<TextSize>,
    /// The scopes with a computed goto, which may reach any of their labels by value.
    by_value: HashSet<usize>,
    /// The label statement each goto names, by where the goto starts.
    targets: HashMap<TextSize, TextRange>,
    /// Where the first and the last goto that name each label start (by where it starts).
    spans: HashMap<TextSize, (TextSize, TextSize)>,
}

impl Markers {
    /// The markers of `module`'s scopes that the passes may take from: with `with_by_value`,
    /// those of the scopes with a computed goto too.
    fn of(module: &Module, with_by_value: bool) -> Markers {
        let mut markers = Markers {
            gotos: HashMap::new(),
            labels: HashMap::new(),
            named: HashMap::new(),
            scope: HashMap::new(),
            ordered: Vec::new(),
            ordered_gotos: Vec::new(),
            by_value: HashSet::new(),
            targets: HashMap::new(),
            spans: HashMap::new(),
        };
        let written =
            (module.scopes.iter().enumerate()).filter(|(_, scope)| super::is_written(scope));
        for (index, scope) in written {
            let switched = (scope.markers.iter()).any(|marker| {
                matches!(marker.kind, MarkerKind::Switch(_) | MarkerKind::Case { .. })
            });
            if switched {
                continue;
            }
            // A computed goto may name any label of its scope: one goto more for each, so that
            // no label goes; the loop keeps its label where the goto lands, and frames (which
            // decide where a computed goto may go) are never added or taken away. Only the
            // loop pass looks there ([`Markers::of`]'s `by_value`).
            let by_value = (scope.markers.iter())
                .any(|marker| matches!(marker.kind, MarkerKind::ComputedGoto { .. }));
            if by_value {
                markers.by_value.insert(index);
                if !with_by_value {
                    continue;
                }
            }
            let mut names: HashMap<&str, usize> = HashMap::new();
            for marker in &scope.markers {
                if let MarkerKind::Goto { name, .. } = &marker.kind {
                    *names.entry(name.as_str()).or_default() += 1;
                    markers.gotos.insert(marker.range.start(), name.to_string());
                    markers.scope.insert(marker.range.start(), index);
                }
            }
            let mut ranges: HashMap<&str, TextRange> = HashMap::new();
            for marker in &scope.markers {
                if let MarkerKind::Label { name, .. } = &marker.kind {
                    if !by_value {
                        ranges.insert(name.as_str(), marker.range);
                    }
                    let start = marker.range.start();
                    markers.labels.insert(start, name.to_string());
                    markers.scope.insert(start, index);
                    markers.named.insert(
                        start,
                        names.get(name.as_str()).copied().unwrap_or(0) + usize::from(by_value),
                    );
                }
            }
            // Not where a computed goto is: only the loop pass looks there, and it asks
            // neither.
            for marker in scope.markers.iter().filter(|_| !by_value) {
                if let MarkerKind::Goto { name, .. } = &marker.kind
                    && let Some(&label) = ranges.get(name.as_str())
                {
                    let at = marker.range.start();
                    markers.targets.insert(at, label);
                    let span = markers.spans.entry(label.start()).or_insert((at, at));
                    *span = (span.0.min(at), span.1.max(at));
                }
            }
        }
        markers.ordered = markers.labels.keys().copied().collect();
        markers.ordered.sort_unstable();
        markers.ordered_gotos = markers.gotos.keys().copied().collect();
        markers.ordered_gotos.sort_unstable();
        markers
    }

    /// Whether a label starts inside `range`.
    fn labelled(&self, range: TextRange) -> bool {
        starts_inside(&self.ordered, range)
    }

    /// Whether a goto lies inside `range`.
    fn goes(&self, range: TextRange) -> bool {
        starts_inside(&self.ordered_gotos, range)
    }

    /// Whether a label inside `range` may be reached by value: the loop pass, which
    /// puts statements in a new body, takes none there. The translation would enter the body
    /// through a dispatch loop of its own, one block deeper, where the source had one list.
    fn reached_inside(&self, marker: TextSize, range: TextRange) -> bool {
        self.by_value.contains(&self.scope[&marker]) && self.labelled(range)
    }
}

/// A skip to take: its edits of the text, the lines that go one level deeper (from the one
/// after the goto's to the last skipped statement's), and its label's statement.
struct Skip {
    edits: Vec<(TextRange, String)>,
    skipped: Option<TextRange>,
    /// The label, which goes when the skips of the pass take every goto that names it (none
    /// for an edit that takes no goto).
    label: Option<TextRange>,
    /// The statement after the label that goes with it, when no goto names it any more:
    /// an exit that nothing else reaches.
    dead: Option<TextRange>,
    /// What the label's statement becomes when no goto names it any more (else it goes,
    /// its comment kept).
    becomes: Option<&'static str>,
}

/// The shapes taken, each in a pass of its own over the source the pass before wrote.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `goto .l`, then statements that nothing reaches, then `label .l` (or another label,
    /// or the list's end): the statements go, where their scope stays the same without
    /// them, and the goto and its label with them; so do the blocks of a list that nothing
    /// reaches, labels and all ([`dead`]).
    Dead,
    /// [`Shape::Dead`], and `if C: goto .l` (at any depth of `if`s) right before `label .l`:
    /// `if C: pass`. After the passes that read such gotos as a ladder's or a loop's.
    Fall,
    /// A loop with no `break` of its own, or a `try` whose every handler ends with a jump,
    /// and its `else:` clause starting with `label .l`: the clause's statements after the
    /// statement, as they run ([`unelse`]).
    Unelse,
    /// `if C1: goto .a` / `if C2: goto .b` / `goto .c` (or an `if` with `elif`s and an
    /// `else`, each one goto), then the blocks of `.a`, `.b` and `.c`, each but the last
    /// ending in `goto .end` (or a `return`, `raise`, `break` or `continue`), then `label
    /// .end`: `if C1:` A `elif C2:` B `else:` C, when each block is reached by its one
    /// branch alone ([`ladder`]).
    Ladder,
    /// `if A: goto .l` then `if B: goto .l` (each `if` with no other branch and the goto its
    /// only statement): `if A or B: goto .l`, each test made where it was and only where it
    /// was ([`skip`]).
    Merge,
    /// `if TEST: goto .l` / S / `label .l`: `if not (TEST):` / S; `if A:` / `if B:` /
    /// `goto .l` (each `if` with no other branch and one statement) / S / `label .l`: `if not
    /// (A) or not (B):` / S, where S holds no label.
    Skip,
    /// The skips of [`Shape::Skip`] whose goto nests in `if`s, after that pass: the `if`s it
    /// wrote (`if A: goto .m` / `if B: goto .l` / `label .m` is then `if not (A):` / `if B:`
    /// / `goto .l`).
    Nested,
    /// `if TEST:` / S1 / `goto .l` (the last of its body) / S2 / `label .l`: the goto's line
    /// becomes `else:` over S2.
    Else,
    /// `if TEST: goto .l` then a one-line `return`, `raise`, `break` or `continue` ending the
    /// body of an `if` that `label .l` follows (after other statements) in its list: `if not
    /// (TEST):` over that statement, then the goto, which [`Shape::Else`] takes ([`skip`]).
    Swap,
    /// `try:` / B / `except E:` / H / `goto .l` (each handler ending so, or never falling
    /// through) / S / `label .l`: the goto's line becomes the `try`'s `else:` over S
    /// ([`handled`]).
    Handled,
    /// `label .l` / `if TEST:` / E (never falling through) / S / `goto .l`: `while not
    /// (TEST):` / S, then E where the goto was ([`skip`]).
    Until,
    /// `label .l` / `if TEST:` / S / `goto .l` (the last of its body): `while TEST:` / S, when
    /// no `break` or `continue` in S would be the new loop's.
    Loop,
    /// `label .l` / S / `if TEST:` with only `goto .l` in its body, all in one list:
    /// `while True:` on the label's line over S and `if not (TEST):` / `break`, each goto to
    /// `.l` under `if`, `with` and `try` statements in S `continue` ([`repeat`]). So is
    /// `if TEST: goto .out` then `goto .l`: `if TEST: break`, then `goto .out` after it.
    Repeat,
    /// `label .l` / `return X` (or `raise X`, on one line), or `label .l` ending a function:
    /// each `goto .l` becomes that statement (`return` at a function's end), where neither
    /// the goto nor the label is inside a `try` or `with` (whose exits would run before the
    /// value is computed in one program and after in the other).
    Exit,
    /// `label .l` / a `for` or `while` loop whose body goes back to `.l` (`goto .l` under
    /// `if`, `with` and `try` statements only, no `break` of its own) / one simple statement that ends the list: the
    /// label's line becomes `while True:`, each goto `break`, and the statement (not a
    /// `break` or `continue`) `else: STATEMENT` (with `; break` when it is not a `return` or
    /// `raise`): the loop restarts
    /// as the goto restarted it, and leaving it normally runs the statement once. So does
    /// `label .l`, statements, then a `while True:` ending the list whose body goes back to
    /// `.l`: the gotos before it `continue` ([`leave`]).
    Restart,
    /// A `for` or `while` loop whose body alone goes to `label .l` (`goto .l` under `if`,
    /// `with` and `try` statements only, no `break` of its own), then some statements S without labels, then `label
    /// .l`: each goto becomes `break`, and S the loop's `else:` (a line of its own, which the
    /// label's line gives back; with no S, the loop may have an `else` already, which the
    /// goto skipped as `break` does, or a `break` of its own, other gotos may name the
    /// label, and the loop may end a clause of an `if` right before it, at any depth of
    /// `if`s). What a search that stops at its first find is.
    Leave,
    /// A `for` or `while` loop whose body holds a loop whose body alone goes to `label .l`
    /// right after the outer loop: the inner loop's `break`, `else:` over the rest of the
    /// outer body and `continue`, then the outer loop's `break` ([`escape`]).
    Escape,
    /// `if TEST:` / `goto .l` (at any depth of `if`s), and `label .l` after a statement that
    /// never falls through, its block (up to the next label) ending in one such or falling
    /// into the next label (a goto to it then ends the moved block), entered by no other
    /// goto from outside: the block moves to the goto ([`inline`]).
    Inline,
    /// Statements that gotos under `if`, `with` and `try` statements leave for the label
    /// after them, or start again from the label before them: `while True:` over them, each
    /// goto `break` or `continue`, a `break` at their end, where no goto from outside them
    /// enters them ([`block`]).
    Block,
}

/// The passes, in order: statements that nothing reaches gone, an `else` clause a goto
/// enters written as what follows its statement before any goto to it is taken, a ladder of
/// conditional gotos before its gotos are taken one by one as skips, a loop's exit test is a
/// skip first, what is left of the gotos to an exit becomes the exit itself, and only then a
/// loop's exit to its label `break`, one loop's before two loops'; last, blocks one goto
/// enters move to it, gotos to where they fall anyway go, what gotos leave from inside
/// `with` and `try` statements is a block they `break`, and the loops the moves bring
/// together are taken, then the loops around those.
const SHAPES: [Shape; 23] = [
    Shape::Dead,
    Shape::Unelse,
    Shape::Ladder,
    Shape::Merge,
    Shape::Skip,
    Shape::Nested,
    Shape::Else,
    Shape::Handled,
    Shape::Until,
    Shape::Loop,
    Shape::Repeat,
    Shape::Restart,
    Shape::Exit,
    Shape::Leave,
    Shape::Escape,
    // Again while they take something: blocks one goto enters (one moved into another
    // leaves the other one goto), a moved block that ends in a goto to the label after it,
    // the loops that moved blocks bring together, and the loops around those.
    Shape::Inline,
    Shape::Fall,
    Shape::Repeat,
    Shape::Leave,
    Shape::Block,
    Shape::Restart,
    Shape::Swap,
    Shape::Else,
];

/// The last passes, which run again while they take something: a loop of one round may be
/// the body of a loop that the next round takes, or leave it for the label after it.
const AGAIN: usize = 8;

/// Whether the pass before the `next`-th, which wrote the source, is one of the last passes
/// that may feed one before it: all but the repeat pass, whose loops only the passes after
/// it take further.
fn feeds(next: usize) -> bool {
    next > SHAPES.len() - AGAIN && SHAPES[next - 1] != Shape::Repeat
}

/// How many times the last passes run again at most.
const ROUNDS: usize = 4;

struct Finder<'a> {
    shape: Shape,
    markers: &'a Markers,
    text: &'a str,
    lines: &'a Lines,
    skips: Vec<Skip>,
    /// The statements a [`Shape::Leave`] or [`Shape::Escape`] moved one line down, or whose
    /// lines a [`Shape::Unelse`] took a level from: no other of the pass moves lines inside
    /// them (its lines would be counted from the wrong place, or lose two levels).
    shifted: Vec<TextRange>,
    /// The loops a [`Shape::Repeat`] took, from label to `if`, each with whether a goto
    /// inside it became `continue`: loops in other lists of the pass may nest with them.
    repeated: Vec<(TextRange, bool)>,
    /// Where the comments are, in order ([`Shape::Dead`], which keeps them).
    comments: Vec<TextRange>,
    /// Where the gotos that name each label lie ([`Shape::Repeat`]), made when first asked.
    entries: std::cell::OnceCell<repeat::Entries>,
    /// The moves a [`Shape::Inline`] took.
    moves: inline::Moves,
}

impl<'a> Finder<'a> {
    /// Finds the skips of `body` and of every list nested in it (iteratively: an `elif`
    /// chain nests as deep as it is long).
    fn lists(&mut self, body: &[Stmt]) {
        let mut work = vec![body];
        while let Some(list) = work.pop() {
            self.list(list);
            for stmt in list {
                work.extend(child_lists(stmt));
            }
        }
    }

    /// The skips of one list of the pass's shape.
    fn list(&mut self, list: &[Stmt]) {
        match self.shape {
            Shape::Loop => self.loops(list),
            Shape::Until => self.untils(list),
            Shape::Restart => self.restarts(list),
            Shape::Repeat => self.repeats(list),
            Shape::Leave => self.leaves(list),
            Shape::Escape => self.escapes(list),
            Shape::Handled => self.handled(list),
            Shape::Inline => self.inlines(list),
            Shape::Block => self.blocks(list),
            Shape::Unelse => self.unelses(list),
            Shape::Merge => self.merges(list),
            Shape::Swap => self.swaps(list),
            _ => self.skips_and_elses(list),
        }
    }

    /// Whether `stmt` never falls through: a `return`, `raise`, `break`, `continue` or goto.
    fn never_falls(&self, stmt: &Stmt) -> bool {
        jumps(stmt) || self.markers.gotos.contains_key(&stmt.start())
    }
}

/// The source with `skips` taken: each `if TEST: goto .l` written `if not (TEST):`, the
/// labels no other goto names blanked (their comments stay) or written as what they become
/// (a restart's `while True:`), then the skipped lines one level deeper for each skip
/// around them. No skip changes the number of lines: a leave's `else:` takes its label's
/// line, the statements between one line lower, and an escape's the first blank line after
/// its label (each skip's lines to go deeper are counted where they end up). `None` where
/// two edits meet.
fn rewrite(text: &str, lines: &Lines, markers: &Markers, skips: &[Skip]) -> Option<String> {
    let mut edits: Vec<(TextRange, String)> = Vec::new();
    // Each label's first skip, and how many skips take it.
    let mut taken: HashMap<TextSize, (&Skip, usize)> = HashMap::new();
    for skip in skips {
        edits.extend(skip.edits.iter().cloned());
        if let Some(label) = skip.label {
            taken.entry(label.start()).or_insert((skip, 0)).1 += 1;
        }
    }
    for (start, (skip, count)) in taken {
        let (Some(label), dead) = (skip.label, skip.dead) else {
            continue;
        };
        if markers.named.get(&start) != Some(&count) {
            continue;
        }
        if let Some(becomes) = skip.becomes {
            edits.push((label, becomes.to_owned()));
            continue;
        }
        if let Some(dead) = dead {
            // Alone on its one line: the line is left empty.
            edits.push((
                TextRange::new(lines.start(dead.start()), dead.end()),
                String::new(),
            ));
        }
        // With the blanks after it, when a comment follows: the comment takes its place.
        let rest = &text[usize::from(label.end())..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let noted = rest[blanks..].starts_with('#');
        // Without, the indentation before it too: the line is left empty.
        let range = if noted {
            let blanks = TextSize::try_from(blanks).unwrap_or_default();
            TextRange::new(label.start(), label.end() + blanks)
        } else {
            TextRange::new(lines.start(label.start()), label.end())
        };
        edits.push((range, String::new()));
    }
    // Two edits that meet (overlap, or an insertion at either end of another edit: which
    // goes first is then a guess) leave the pass with nothing taken. Each shape's own
    // checks keep its edits apart from another's; this keeps a miss from cutting the text
    // in the middle of an edit or writing one edit into another.
    edits.retain(|(range, with)| !(range.is_empty() && with.is_empty()));
    edits.sort_by_key(|(range, _)| (range.start(), range.end()));
    let meet = |(a, b): (TextRange, TextRange)| {
        a.end() > b.start() || a.end() == b.start() && (a.is_empty() || b.is_empty())
    };
    let met = (edits.windows(2)).find(|pair| meet((pair[0].0, pair[1].0)));
    // A miss: a test build says where.
    debug_assert!(met.is_none(), "two edits of a pass meet: {met:?}");
    if met.is_some() {
        return None;
    }
    let edited = edited(text, edits);
    let mut deeper = vec![0i32; lines.starts.len() + 1];
    for skipped in skips.iter().filter_map(|skip| skip.skipped) {
        deeper[lines.line(skipped.start())] += 1;
        deeper[lines.line(skipped.end()) + 1] -= 1;
    }
    let mut out = String::with_capacity(edited.len() + edited.len() / 8);
    let mut level = 0;
    for (line, text) in edited.split_inclusive('\n').enumerate() {
        level += deeper[line];
        if level > 0 && !text.trim().is_empty() && !lines.inside[line] {
            out.push_str(&"    ".repeat(level.unsigned_abs() as usize));
        }
        out.push_str(text);
    }
    Some(out)
}

/// `text` with each of `edits`, in order and apart, written over its range.
fn edited(text: &str, edits: Vec<(TextRange, String)>) -> String {
    let mut edited = String::with_capacity(text.len());
    let mut at = 0;
    for (range, with) in edits {
        edited.push_str(&text[at..usize::from(range.start())]);
        edited.push_str(&with);
        at = usize::from(range.end());
    }
    edited.push_str(&text[at..]);
    edited
}

/// Whether `stmt` is a `return`, `raise`, `break` or `continue`: a statement that never
/// falls through, goto aside ([`Finder::never_falls`]).
fn jumps(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
    )
}

/// Whether one of `starts`, in order, lies inside `range`.
fn starts_inside(starts: &[TextSize], range: TextRange) -> bool {
    let inside = starts.partition_point(|&start| start < range.start());
    (starts.get(inside)).is_some_and(|&start| start < range.end())
}

/// `stmt` when it is an `if` with no other branch and one statement in its body, with that
/// statement (`if TEST: goto .l`).
fn lone(stmt: &Stmt) -> Option<(&ast::StmtIf, &Stmt)> {
    let Stmt::If(branch) = stmt else { return None };
    let ([only], []) = (&*branch.body, &*branch.elif_else_clauses) else {
        return None;
    };
    Some((branch, only))
}

/// The last statements of the clauses of `stmt`, an `if`, each with its clause, at any
/// depth of `if`s that end their clauses (those `if`s left out): where the statement falls
/// after them is where the `if` falls.
fn clause_ends(stmt: &Stmt) -> Vec<(&[Stmt], &Stmt)> {
    let (mut ends, mut work) = (Vec::new(), child_lists(stmt));
    while let Some(clause) = work.pop() {
        match clause.last() {
            Some(last @ Stmt::If(_)) => work.extend(child_lists(last)),
            Some(last) => ends.push((clause, last)),
            None => {}
        }
    }
    ends
}

/// Whether `stmt` is a compound statement (one with a body of its own).
fn compound(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::If(_)
            | Stmt::For(_)
            | Stmt::While(_)
            | Stmt::With(_)
            | Stmt::Try(_)
            | Stmt::Match(_)
            | Stmt::FunctionDef(_)
            | Stmt::ClassDef(_)
    )
}

/// Whether `body` holds a `break` or `continue` of a loop around it.
pub(super) fn loop_exit(body: &[Stmt]) -> bool {
    exits_loop(body, true)
}

/// Whether `body` holds a `break` of a loop around it.
fn breaks(body: &[Stmt]) -> bool {
    exits_loop(body, false)
}

/// Whether `body` holds a `break` (or, with `continues`, a `continue`) of a loop around it.
fn exits_loop(body: &[Stmt], continues: bool) -> bool {
    let mut work = vec![body];
    while let Some(list) = work.pop() {
        crate::splice::count(list.len());
        for stmt in list {
            match stmt {
                Stmt::Break(_) => return true,
                Stmt::Continue(_) if continues => return true,
                // A loop's own body is its own; its `else` is not.
                Stmt::While(ast::StmtWhile { orelse, .. })
                | Stmt::For(ast::StmtFor { orelse, .. }) => work.push(orelse),
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                other => work.extend(child_lists(other)),
            }
        }
    }
    false
}

/// The statement lists directly inside `stmt`.
fn child_lists(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::If(branch) => {
            let mut lists = vec![branch.body.as_slice()];
            lists.extend(
                branch
                    .elif_else_clauses
                    .iter()
                    .map(|clause| clause.body.as_slice()),
            );
            lists
        }
        Stmt::While(ast::StmtWhile { body, orelse, .. })
        | Stmt::For(ast::StmtFor { body, orelse, .. }) => vec![body, orelse],
        Stmt::With(ast::StmtWith { body, .. }) => vec![body],
        Stmt::Try(attempt) => {
            let mut lists = vec![attempt.body.as_slice()];
            lists.extend(attempt.handlers.iter().map(|handler| {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                handler.body.as_slice()
            }));
            lists.extend([attempt.orelse.as_slice(), attempt.finalbody.as_slice()]);
            lists
        }
        Stmt::Match(choice) => choice
            .cases
            .iter()
            .map(|case| case.body.as_slice())
            .collect(),
        // A nested function or class is a scope of its own, with lists of its own.
        Stmt::FunctionDef(function) => vec![function.body.as_slice()],
        Stmt::ClassDef(class) => vec![class.body.as_slice()],
        _ => Vec::new(),
    }
}

/// Where each line starts, and how many lines before each are indented with a tab.
struct Lines {
    starts: Vec<TextSize>,
    tabbed: Vec<u32>,
    /// Whether each line starts inside a token: a string over several lines.
    inside: Vec<bool>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![TextSize::default()];
        for (at, _) in text.match_indices('\n') {
            starts.push(TextSize::try_from(at + 1).unwrap_or_default());
        }
        let mut tabbed = vec![0u32];
        for line in text.split('\n') {
            let indented = line
                .chars()
                .take_while(|c| c.is_whitespace())
                .any(|c| c == '\t');
            tabbed.push(tabbed.last().unwrap_or(&0) + u32::from(indented));
        }
        let inside = vec![false; starts.len()];
        Lines {
            starts,
            tabbed,
            inside,
        }
    }

    /// The lines of `text`, as `checked`, with those that start inside a token (a string
    /// over several lines), which are copied as they are.
    fn of(text: &str, checked: &Checked) -> Lines {
        let mut lines = Lines::new(text);
        for token in checked.parsed.tokens().iter() {
            let newline = matches!(
                token.kind(),
                TokenKind::Newline | TokenKind::NonLogicalNewline
            );
            if !newline && text[token.range()].contains('\n') {
                let (first, last) = (lines.line(token.start()), lines.line(token.end()));
                lines.inside[first + 1..=last].fill(true);
            }
        }
        lines
    }

    /// Where the line of `offset` starts.
    fn start(&self, offset: TextSize) -> TextSize {
        self.starts[self.line(offset)]
    }

    /// The zero-based line of `offset`.
    fn line(&self, offset: TextSize) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }

    /// Nothing but blanks before `range` on its first line, and nothing but blanks or a
    /// comment after it on its last.
    fn alone(&self, text: &str, range: TextRange) -> bool {
        let first = usize::from(self.starts[self.line(range.start())]);
        let before = text[first..usize::from(range.start())].trim().is_empty();
        let rest = &text[usize::from(range.end())..];
        let after = rest[..rest.find('\n').unwrap_or(rest.len())].trim_start();
        before && (after.is_empty() || after.starts_with('#'))
    }

    /// Some line from the one of `start` to the one of `end` is indented with a tab.
    fn tabbed(&self, start: TextSize, end: TextSize) -> bool {
        self.tabbed[self.line(end) + 1] > self.tabbed[self.line(start)]
    }
}
