//! The source text as the translator copies it: lines, the lines that start inside a string
//! (copied byte for byte), headers up to their colon, and the output's line allocator.

use std::collections::BTreeSet;

use super::skips::Shifts;

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::token::{TokenKind, Tokens};

/// One physical line of a statement copied from the source: `Rel` lines are indented again
/// relative to the statement's own indentation, `Raw` lines (inside a string, or less
/// indented than the statement, as inside brackets) are copied as they are.
#[derive(Clone, Debug)]
pub(super) enum Piece {
    Rel(String),
    Raw(String),
    /// A line that starts inside a string: copied as it is, and never dropped.
    Str(String),
}

/// What a statement of the output is, for the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A simple statement: one that comes late joins the line before it when that line
    /// holds only simple statements of the same block (`x = 1; y = 2`).
    Simple,
    /// A simple statement with a comment after it on its last line: it may join the line
    /// before it, nothing may join it.
    Noted,
    /// A synthetic one-line statement that goes before the next simple statement on its
    /// line (`_goto_k = 0; x += 1`), so that it takes no line of its own.
    Prefix,
    /// A comment line: dropped when its line is already taken.
    Comment,
    /// A compound statement (`try: x = 1`, a copied `for` loop), a decorator or a comment
    /// that must stay: nothing joins it, it joins nothing.
    Compound,
}

/// The output as a tree of statements, each with the line it wants (0: right after the
/// previous one).
#[derive(Clone, Debug)]
pub(super) enum Out {
    Stmt {
        line: usize,
        pieces: Vec<Piece>,
        kind: Kind,
    },
    Block {
        line: usize,
        header: String,
        body: Vec<Out>,
    },
}

impl Out {
    /// Closes `outs`, the body of a `while True:` that its end leaves, with a `break`, unless
    /// their last statement jumps already (`break`, `continue`, `return`, `raise`), after
    /// which the `break` would never run.
    pub(super) fn close(outs: &mut Vec<Out>) {
        // A statement that starts with `return` or `raise` is one; `break` and `continue`
        // end the jumps gotopy writes (`_goto_k = 2; break`).
        let jumps = |text: &str| {
            let first = text.split([' ', '(', ';']).next().unwrap_or(text);
            let last = text.rsplit("; ").next().unwrap_or(text);
            matches!(first, "return" | "raise") || matches!(last, "break" | "continue")
        };
        let ends = matches!(
            outs.last(),
            Some(Out::Stmt { pieces, kind: Kind::Simple | Kind::Prefix, .. })
                if matches!(pieces.as_slice(), [Piece::Rel(text)] if jumps(text.trim()))
        );
        if !ends {
            outs.push(Out::line(0, "break"));
        }
    }

    /// Every `from` in the text gotopy wrote, at any depth, as `to` (copied lines of a
    /// string are the source's, which holds no added name).
    pub(super) fn rename(&mut self, from: &str, to: &str) {
        match self {
            Out::Stmt { pieces, .. } => {
                for piece in pieces {
                    if let Piece::Rel(text) | Piece::Raw(text) = piece
                        && text.contains(from)
                    {
                        *text = text.replace(from, to);
                    }
                }
            }
            Out::Block { header, body, .. } => {
                if header.contains(from) {
                    *header = header.replace(from, to);
                }
                for out in body {
                    out.rename(from, to);
                }
            }
        }
    }

    /// A one-line statement.
    pub(super) fn line(line: usize, text: impl Into<String>) -> Out {
        Out::Stmt {
            line,
            pieces: vec![Piece::Rel(text.into())],
            kind: Kind::Simple,
        }
    }

    /// A compound statement written on one line.
    pub(super) fn compound(line: usize, text: impl Into<String>) -> Out {
        Out::Stmt {
            line,
            pieces: vec![Piece::Rel(text.into())],
            kind: Kind::Compound,
        }
    }

    pub(super) fn prefix(line: usize, text: impl Into<String>) -> Out {
        Out::Stmt {
            line,
            pieces: vec![Piece::Rel(text.into())],
            kind: Kind::Prefix,
        }
    }

    pub(super) fn block(line: usize, header: impl Into<String>, body: Vec<Out>) -> Out {
        Out::Block {
            line,
            header: header.into(),
            body,
        }
    }
}

pub(super) struct Text<'a> {
    pub(super) src: &'a str,
    pub(super) tokens: &'a Tokens,
    /// Offsets where lines start; line 1 at index 0.
    starts: Vec<usize>,
    /// Lines (1-based) that start inside a string token or an f-string.
    raw: BTreeSet<usize>,
}

impl<'a> Text<'a> {
    pub(super) fn new(src: &'a str, tokens: &'a Tokens) -> Text<'a> {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(at, _)| at + 1));
        let mut spans = Vec::new();
        let mut open = Vec::new();
        for token in tokens.iter() {
            match token.kind() {
                TokenKind::String => spans.push(token.range()),
                TokenKind::FStringStart | TokenKind::TStringStart => open.push(token.start()),
                TokenKind::FStringEnd | TokenKind::TStringEnd => {
                    if let Some(start) = open.pop()
                        && open.is_empty()
                    {
                        spans.push(TextRange::new(start, token.end()));
                    }
                }
                _ => {}
            }
        }
        let mut raw = BTreeSet::new();
        for span in spans {
            let (start, end) = (usize::from(span.start()), usize::from(span.end()));
            let first = starts.partition_point(|&at| at <= start);
            for (index, &at) in starts.iter().enumerate().skip(first) {
                if at >= end {
                    break;
                }
                raw.insert(index + 1);
            }
        }
        Text {
            src,
            tokens,
            starts,
            raw,
        }
    }

    /// The 1-based line of an offset.
    pub(super) fn line(&self, offset: TextSize) -> usize {
        self.starts
            .partition_point(|&at| at <= usize::from(offset))
            .max(1)
    }

    /// The comment after the statement at `range` on its last line (`goto .a  # pragma: no
    /// cover`), if it has one.
    pub(super) fn trailing_comment(&self, range: TextRange) -> Option<&'a str> {
        let last = self.line(range.end());
        let line_text = self.line_text(last);
        let from = (usize::from(range.end()) - self.starts[last - 1]).min(line_text.len());
        let tail = line_text[from..].trim();
        tail.starts_with('#').then_some(tail)
    }

    /// The text of a line without its line break.
    fn line_text(&self, line: usize) -> &'a str {
        let start = self.starts[line - 1];
        let end = self.starts.get(line).map_or(self.src.len(), |&next| next);
        self.src[start..end].trim_end_matches(['\n', '\r'])
    }

    pub(super) fn slice(&self, range: TextRange) -> &'a str {
        &self.src[range]
    }

    /// A statement as the source has it: the line it starts on; its text as pieces, from
    /// its start to its end, or to the end of its last line when only a comment follows it
    /// there (which is then copied with it); and whether that comment follows it. Each of
    /// its two lines is looked up once: a function of thousands of statements asks this of
    /// each of them.
    pub(super) fn statement(&self, range: TextRange) -> (usize, Vec<Piece>, bool) {
        let first = self.line(range.start());
        let last = self.line(range.end());
        let line_start = self.starts[last - 1];
        let line_text = self.line_text(last);
        let tail =
            line_text[(usize::from(range.end()) - line_start).min(line_text.len())..].trim_start();
        let commented = tail.starts_with('#');
        let end = if tail.is_empty() || commented {
            line_start + line_text.len()
        } else {
            usize::from(range.end())
        };
        let indent: &str = {
            let text = self.line_text(first);
            &text[..text.len() - text.trim_start().len()]
        };
        let text = &self.src[usize::from(range.start())..end];
        let pieces = text
            .split('\n')
            .enumerate()
            .map(|(index, part)| {
                let part = part.trim_end_matches('\r');
                if index == 0 {
                    Piece::Rel(part.to_owned())
                } else if self.raw.contains(&(first + index)) {
                    Piece::Str(part.to_owned())
                } else if let Some(rest) = part.strip_prefix(indent)
                    && !rest.is_empty()
                {
                    Piece::Rel(rest.to_owned())
                } else {
                    Piece::Raw(part.to_owned())
                }
            })
            .collect();
        (first, pieces, commented)
    }

    /// The offset of the last `:` before `offset`: where the header of a compound statement
    /// whose body starts at `offset` ends.
    pub(super) fn colon_before(&self, offset: TextSize) -> TextSize {
        self.tokens
            .before(offset)
            .iter()
            .rev()
            .find(|token| token.kind() == TokenKind::Colon)
            .map_or(offset, Ranged::start)
    }

    /// A header copied from `start` up to its colon (not included), its body starting at
    /// `body`.
    pub(super) fn header(&self, start: TextSize, body: TextSize) -> String {
        self.src[usize::from(start)..usize::from(self.colon_before(body))].to_owned()
    }

    /// The line of the last `kind` keyword before `offset` (`else`, `finally`).
    pub(super) fn keyword_line(&self, offset: TextSize, kind: TokenKind) -> usize {
        self.tokens
            .before(offset)
            .iter()
            .rev()
            .find(|token| token.kind() == kind)
            .map_or(0, |token| self.line(token.start()))
    }

    /// The first token of one of `kinds` at or after `offset`.
    pub(super) fn token_after(&self, offset: TextSize, kinds: &[TokenKind]) -> Option<TextSize> {
        self.tokens
            .after(offset)
            .iter()
            .find(|token| kinds.contains(&token.kind()))
            .map(Ranged::start)
    }

    /// Comments that stand on lines of their own within `range`, with their lines.
    pub(super) fn comments(&self, range: TextRange) -> Vec<(usize, &'a str)> {
        let start = self
            .tokens
            .partition_point(|token| token.start() < range.start());
        self.tokens[start..]
            .iter()
            .take_while(|token| token.start() < range.end())
            .filter(|token| token.kind() == TokenKind::Comment)
            .filter_map(|token| {
                let line = self.line(token.start());
                let before = &self.src[self.starts[line - 1]..usize::from(token.start())];
                before
                    .trim()
                    .is_empty()
                    .then(|| (line, self.slice(token.range())))
            })
            .collect()
    }
}

/// Writes the output tree: each statement on the line it wants when that line is still free,
/// else on the next one; simple prefixes joined to the statement after them.
/// The output's text, with `header` (a comment), if any, on the first line that no statement
/// wanted (the line of a removed import, a blank line), or else at the end, so that every
/// statement keeps its line.
pub(super) fn render(outs: Vec<Out>, header: Option<&str>, shifts: &Shifts) -> String {
    let mut lines = Lines {
        shifts: shifts.clone(),
        ..Lines::default()
    };
    write(&normalize(outs), 0, &mut lines);
    match (header, lines.first_free) {
        (None, _) => {}
        (Some(header), Some(free)) => lines.text.insert_str(free, header),
        (Some(header), None) => lines.push("", header),
    }
    lines.text.push('\n');
    lines.text
}

/// The output as the program's new source, whose lines no traceback needs to match: no
/// header, every comment, each statement on a line of its own unless the source had it on
/// the line of the one before (or it is the translation's own, `_goto_k = 0; x += 1`), and
/// before each statement the blank lines that stood before it in `source` (none where the
/// source had something that is gone: a marker, a decorator, an import), also where the
/// translation made the code above it longer or shorter.
pub(super) fn render_compact(outs: Vec<Out>, source: &str, shifts: &Shifts) -> String {
    let blank: Vec<bool> = source
        .split('\n')
        .map(|line| line.trim().is_empty())
        .collect();
    let longest = (blank.iter())
        .scan(0, |run, &blank| {
            *run = if blank { *run + 1 } else { 0 };
            Some(*run)
        })
        .max()
        .unwrap_or(0);
    let mut lines = Lines {
        source: Some(blank),
        longest,
        shifts: shifts.clone(),
        ..Lines::default()
    };
    write(&normalize(outs), 0, &mut lines);
    lines.text.push('\n');
    lines.text
}

/// The output as it is written: its text (lines joined by `\n`), how many lines it has, and
/// where the first blank line that only places a statement on its line starts (not a line
/// of a statement, such as a string's blank line).
#[derive(Default)]
struct Lines {
    text: String,
    count: usize,
    first_free: Option<usize>,
    /// For a migration, which lines of the source are blank: then the output's lines are
    /// not the source's, a statement goes on the next line after the blank lines that
    /// stood before it, and a comment that finds its line taken goes on the next one
    /// rather than being dropped (a generated file, whose statements keep their lines,
    /// drops it).
    source: Option<Vec<bool>>,
    /// For a migration, the line of the source the output's last line stands for.
    source_at: usize,
    /// For a migration, the longest run of blank lines in the source, and the blank lines
    /// the output ends with: no run is longer (blank lines around a line that is gone meet).
    longest: usize,
    run: usize,
    /// For a migration, the statements written in a row on lines where the user's source
    /// was blank (the closing `break` of a loop the passes wrote): as many blank lines go
    /// before the next statement of the module's top level, so that a definition keeps its
    /// spacing.
    owed: usize,
    /// Where the lines the statements want stand in the user's source, when its switches
    /// were written as gotos first (each method here takes the line a statement wants), and
    /// for a migration the last line wanted that is written: two statements that want
    /// lines of their own keep them, also where those stand for one line of the source.
    shifts: Shifts,
    wanted_at: usize,
}

impl Lines {
    /// Starts a line with `indent` and `text`.
    fn push(&mut self, indent: &str, text: &str) {
        if self.count > 0 {
            self.text.push('\n');
        }
        self.count += 1;
        self.text.push_str(indent);
        self.text.push_str(text);
        self.run = if text.is_empty() { self.run + 1 } else { 0 };
    }

    /// The line of the user's source that a statement wanting `line` stands for.
    fn source_line(&self, line: usize) -> usize {
        self.shifts.source_line(line)
    }

    /// Whether line `line` of the user's source (0: none) is blank, in a migration.
    fn was_blank(&self, line: usize) -> bool {
        (self.source.as_ref())
            .is_some_and(|blank| line.checked_sub(1).and_then(|at| blank.get(at)) == Some(&true))
    }

    /// In a migration, a blank line standing for line `line` of the source (as the passes
    /// wrote it), where the user's source had one there too and the run allows it.
    fn blank(&mut self, line: usize) {
        if self.was_blank(self.source_line(line)) {
            self.blank_line();
        }
    }

    /// A blank line, unless the output ends with as many as the source has in a row.
    fn blank_line(&mut self) {
        if self.run < self.longest {
            self.push("", "");
        }
    }

    /// In a migration, a line of the output written for line `line` of the source (0:
    /// none) that is not blank: one more owed where the user's source was blank there.
    fn owe(&mut self, line: usize) {
        if line > 0 {
            self.owed = if self.was_blank(self.source_line(line)) {
                self.owed + 1
            } else {
                0
            };
        }
    }

    /// The line of the source that a statement wanting `line` (0: none) is written for, if
    /// placed now: in a generated file the next line of the output; in a migration its own,
    /// unless that is not past the last one written.
    fn at(&self, line: usize) -> usize {
        match self.source {
            None => self.count + 1,
            Some(_) => self.source_line(line).max(self.source_at),
        }
    }

    /// Whether a statement that wants `line` is late: its line is taken (a generated
    /// file), or it is the line of the statement before it or none (a migration).
    fn late(&self, line: usize) -> bool {
        match self.source {
            None => self.source_line(line) <= self.count,
            Some(_) => line == 0 || line == self.wanted_at,
        }
    }

    /// The statement that wants `line`, placed, took `taken` lines of the output: as many
    /// of the source as its lines stand for.
    fn wrote(&mut self, line: usize, taken: usize) {
        let more = taken.max(1) - 1;
        let span = match line {
            0 => more,
            _ => (self.source_line(line + more)).saturating_sub(self.source_line(line)),
        };
        self.source_at = self.source_at.max(self.at(line) + span);
        self.wanted_at = line.max(self.wanted_at) + more;
    }
}

/// Joins each prefix to the simple statement after it; a block left empty gets `pass`.
fn normalize(outs: Vec<Out>) -> Vec<Out> {
    let mut result: Vec<Out> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for out in outs {
        let out = match out {
            Out::Block { line, header, body } => Out::Block {
                line,
                header,
                body: normalize(body),
            },
            other => other,
        };
        match out {
            Out::Stmt {
                line,
                pieces,
                kind: Kind::Prefix,
            } => {
                let Some(Piece::Rel(text)) = pieces.into_iter().next() else {
                    continue;
                };
                pending = Some(match pending.take() {
                    Some((at, before)) => (at, format!("{before}; {text}")),
                    None => (line, text),
                });
            }
            Out::Stmt {
                line,
                mut pieces,
                kind: kind @ (Kind::Simple | Kind::Noted),
            } if pending.is_some() => {
                let (at, before) = pending.take().expect("pending");
                if let Some(Piece::Rel(first)) = pieces.first_mut() {
                    *first = format!("{before}; {first}");
                    result.push(Out::Stmt {
                        line: if line == 0 { at } else { line },
                        pieces,
                        kind,
                    });
                } else {
                    result.push(Out::line(at, before));
                    result.push(Out::Stmt { line, pieces, kind });
                }
            }
            other => {
                if let Some((at, before)) = pending.take() {
                    result.push(Out::line(at, before));
                }
                result.push(other);
            }
        }
    }
    if let Some((at, before)) = pending.take() {
        result.push(Out::line(at, before));
    }
    if result.iter().all(|out| {
        matches!(
            out,
            Out::Stmt {
                kind: Kind::Comment,
                ..
            }
        )
    }) {
        result.push(Out::line(0, "pass"));
    }
    result
}

/// Blank lines until the next line written, at `depth`, is `line`; in a migration, the
/// source's blank lines between the last line written and `line`.
fn place(line: usize, depth: usize, lines: &mut Lines) {
    let line = lines.source_line(line);
    if lines.source.is_some() {
        if line <= lines.source_at {
            return;
        }
        // The longest run of blank lines between the last line written and this one, the
        // blank lines the output ends with counted in (and, at the top level, those the
        // statements just written took): runs that a line gone parts (`import sys`, a
        // blank line, the goto import, two blank lines) meet as the longer one.
        let owed = if depth == 0 {
            std::mem::take(&mut lines.owed)
        } else {
            0
        };
        let mut run = lines.run + owed;
        let mut longest = run;
        for at in lines.source_at + 1..line {
            run = if lines.was_blank(at) { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        for _ in lines.run..longest {
            lines.blank_line();
        }
        return;
    }
    while line > lines.count + 1 {
        lines.push("", "");
        lines.first_free.get_or_insert(lines.text.len());
    }
}

fn write(outs: &[Out], depth: usize, lines: &mut Lines) {
    let indent = "    ".repeat(depth);
    // The output's last line while it holds only simple statements of this block: a simple
    // statement that could not have its own line (or wants none) joins it (`x = 1; y = 2`),
    // so that the statements after it get their lines back sooner.
    let mut open: Option<usize> = None;
    for out in outs {
        match out {
            Out::Stmt { line, pieces, kind } => {
                if *kind == Kind::Comment && lines.late(*line) && lines.source.is_none() {
                    continue;
                }
                if matches!(kind, Kind::Simple | Kind::Noted)
                    && let [Piece::Rel(text)] = pieces.as_slice()
                {
                    let late = lines.late(*line);
                    if open.is_some_and(|at| late && at + 1 == lines.count) {
                        lines.text.push_str("; ");
                        lines.text.push_str(text);
                    } else {
                        place(*line, depth, lines);
                        lines.wrote(*line, 1);
                        lines.owe(*line);
                        lines.push(&indent, text);
                    }
                    open = (*kind == Kind::Simple).then(|| lines.count - 1);
                    continue;
                }
                place(*line, depth, lines);
                lines.wrote(*line, pieces.len());
                for (index, piece) in pieces.iter().enumerate() {
                    // The line of the source this one stands for (0: none).
                    let from = if *line > 0 { *line + index } else { 0 };
                    match piece {
                        Piece::Rel(text) | Piece::Raw(text)
                            if text.trim().is_empty() && lines.source.is_some() =>
                        {
                            lines.blank(from);
                        }
                        // In a generated file, a blank line of a switch written as gotos
                        // that stands for a line already passed: what follows gets its
                        // lines back.
                        Piece::Rel(text) | Piece::Raw(text)
                            if text.trim().is_empty()
                                && from > 0
                                && lines.shifts.moves()
                                && lines.source_line(from) <= lines.count =>
                        {
                            continue;
                        }
                        Piece::Rel(text) => {
                            lines.owe(from);
                            lines.push(&indent, text);
                        }
                        Piece::Raw(text) | Piece::Str(text) => {
                            lines.owe(from);
                            lines.push("", text);
                        }
                    }
                }
            }
            Out::Block { line, header, body } => {
                place(*line, depth, lines);
                if let Some(inline) = one_line(header, body, lines.at(*line), lines) {
                    lines.wrote(*line, 1);
                    lines.owe(*line);
                    lines.push(&indent, &inline);
                    continue;
                }
                lines.wrote(*line, header.split('\n').count());
                lines.owe(*line);
                for (index, part) in header.split('\n').enumerate() {
                    let part = part.trim_end_matches('\r');
                    lines.push(if index == 0 { &indent } else { "" }, part);
                }
                lines.text.push(':');
                write(body, depth + 1, lines);
            }
        }
    }
}

/// A block on one line (`if _goto_k == 1: break`), when its header takes one line and its
/// body is simple statements that want no line of their own after it (synthetic ones, or
/// user statements already late): what a jump, a post-check or a late guard adds then
/// takes one line.
fn one_line(header: &str, body: &[Out], at: usize, lines: &Lines) -> Option<String> {
    if header.contains('\n') {
        return None;
    }
    let mut text = format!("{header}:");
    for (index, out) in body.iter().enumerate() {
        let Out::Stmt { line, pieces, kind } = out else {
            return None;
        };
        let last = index + 1 == body.len();
        let [Piece::Rel(statement)] = pieces.as_slice() else {
            return None;
        };
        let joins = *kind == Kind::Simple || *kind == Kind::Noted && last;
        if !joins || lines.source_line(*line) > at {
            return None;
        }
        text.push_str(if index == 0 { " " } else { "; " });
        text.push_str(statement);
    }
    (!body.is_empty()).then_some(text)
}
