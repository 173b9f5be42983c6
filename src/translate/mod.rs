//! `gotopy translate`: a module with its gotos eliminated, as plain structured Python that
//! runs on any Python 3.8 or later without gotopy. How and why: `docs/translate.md`.
//!
//! In short, for each rewritten scope: the statement lists form a tree. A jump's *home* is
//! the lowest list holding both its ends; a home becomes a `while True:` loop (its *dispatch
//! loop*) over the statements from the first to the last one its jumps touch. A jump sets
//! the register `_goto_k` to its target's number and goes to that loop's top with Python's
//! own `break` (out of each loop between, a *post-check* after each passing it on) and
//! `continue`, so every `with`, `finally` and `except` on the way is left as SPEC 4 says.
//! At the top, statements before the target are skipped by *guards* (`if _goto_k <= N:`,
//! target numbers run in source order; nested as a balanced tree, `guarded`) and headers
//! of `if`/`while`/`for`/`try` bodies the target is in are entered without evaluating
//! their tests. Arriving at the label resets the register, so it is 0 whenever user code
//! runs.

mod analysis;
mod blocks;
mod checked;
mod conditions;
mod emit;
mod skips;
mod text;
mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::token::TokenKind;
use rustpython_compiler::ast::{self as ast, ExceptHandler, Stmt};
use rustpython_compiler::parser::Parsed;

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::{self, MarkerId, MarkerKind, Module, Options, Scope, ScopeKind, SwitchId};
use crate::front::source::Source;
use crate::plan::cases::{NO_SUCH_LABEL, no_such_label_text, switch_cases};
use crate::plan::{Checked, CompileError, on_checked, rejected};
use checked::self_check;
use text::{Kind, Out, Piece, Text, render, render_compact};

/// What a translation is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Purpose {
    /// A file generated from the goto source, which stays the one to edit: a header comment
    /// says so, and each statement is on its source line.
    #[default]
    Generated,
    /// The program's new source, for leaving goto behind: no header, and nothing of gotopy
    /// left (its imports and decorators go, as in every translation, and so does a
    /// `# gotopy: all-scopes` line); the statements keep their lines but for the blank ones
    /// at the top.
    Migration,
}

/// A translated module.
#[derive(Debug)]
pub struct Translated {
    /// The structured Python source.
    pub text: String,
    /// The warnings `check` gives for the input.
    pub warnings: Vec<Diagnostic>,
}

/// Translates one module: checked first (its errors reject it, as `check` reports them),
/// then every rewritten scope is written without goto, label, switch or case; the output
/// is a generated file ([`Purpose::Generated`]).
pub fn translate_source(source: &Source, options: Options) -> Result<Translated, CompileError> {
    translate_for(source, options, Purpose::Generated)
}

/// [`translate_source`] for a [`Purpose`]: a generated file or the new source of a
/// migration.
pub fn translate_for(
    source: &Source,
    options: Options,
    purpose: Purpose,
) -> Result<Translated, CompileError> {
    on_checked(source, options, |checked| {
        let original = Original {
            text: source.text(),
            blocks: blocks::deepest(&checked.parsed.syntax().body).0,
            within: crate::front::depth::reach(source)
                .is_ok_and(|deepest| deepest <= CPYTHON_DEPTH)
                || crate::front::depth::deeper_than(checked.parsed.syntax(), CPYTHON_DEPTH)
                    .is_none(),
            marked: (checked.module.scopes.iter())
                .filter(|scope| scope.rewritten && !scope.markers.is_empty())
                .map(|scope| scope.qualname.clone())
                .collect(),
        };
        // The forward skips written as `if`s, when there are some: the same program, which
        // the rest translates with fewer jumps.
        let structured = |source: &Source, checked: Checked, shifts: &skips::Shifts| {
            let simpler =
                skips::structured(source, &checked, options, |simpler, simpler_checked| {
                    translate_checked(simpler, simpler_checked, purpose, &original, shifts)
                });
            match simpler {
                Some(translated) => Ok(translated),
                None => translate_checked(source, checked, purpose, &original, shifts),
            }
        };
        // Its warnings are the source's.
        let warnings = checked.diagnostics.clone();
        // Its switches first, as searches and gotos that the passes take; where that
        // source fails, the one with the switches.
        let translated = match skips::switches_written(source, &checked, options, structured) {
            Some(translated) => translated,
            None => structured(source, checked, &skips::Shifts::default())?,
        };
        Ok(Translated {
            warnings,
            ..translated
        })
    })
}

/// What the user wrote, when the passes of `skips` have written it again.
struct Original<'s> {
    /// The text, whose lines a migration's blank lines follow.
    text: &'s str,
    /// How many blocks it nests at most ([`blocks::deepest`]), and whether it nests no
    /// deeper than CPython compiles ([`CPYTHON_DEPTH`]): a pass's new loop counts against
    /// CPython's limits as the translation's own blocks and levels do.
    blocks: usize,
    within: bool,
    /// The qualified names of the scopes rewritten with markers: each is still translated
    /// as a rewritten scope where the passes took all its markers, so that its `with`
    /// statements are left early at most once (PyPy; `Ctx::shells`).
    marked: std::collections::HashSet<String>,
}

/// `source` translated; `original` is what the user wrote (`source` may be its rewrite with
/// the skips taken).
fn translate_checked(
    source: &Source,
    checked: Checked,
    purpose: Purpose,
    original: &Original,
    shifts: &skips::Shifts,
) -> Result<Translated, CompileError> {
    let Checked {
        parsed,
        module,
        mut diagnostics,
        ..
    } = checked;
    // The output may nest as many blocks as the user's source does, or CPython's limit; and
    // deeper than CPython compiles only where the user's source already does.
    let (blocks_allowed, source_within) = (original.blocks.max(blocks::LIMIT), original.within);
    let text = Text::new(source.text(), parsed.tokens());
    let named = module
        .scopes
        .iter()
        .filter(|scope| scope.kind != ScopeKind::Module);
    let mut written: Vec<TextSize> = named
        .clone()
        .filter(|scope| is_written(scope))
        .map(|scope| scope.name_range.start())
        .collect();
    written.sort();
    let translator = Translator {
        used_imports: used_imports(&parsed.syntax().body, &module, &text),
        scopes: named
            .map(|scope| (scope.name_range.start(), scope))
            .collect(),
        written,
        text,
        module: &module,
        names: Names::new(source.text()),
        saves: std::cell::Cell::new(0),
        purpose,
        marked: &original.marked,
    };
    let body = &parsed.syntax().body;
    let outs = match translator.module(body) {
        Ok(outs) => outs,
        Err(refusal) => {
            diagnostics.push(refusal);
            return Err(rejected(diagnostics, source));
        }
    };
    let header = format!(
        "# Generated by `gotopy translate` from {}: its gotos as structured Python. Edit the \
         source, not this file.",
        source.path()
    );
    let mut rendered = match purpose {
        Purpose::Generated => render(outs, Some(&header), shifts),
        Purpose::Migration => render_compact(outs, original.text, shifts)
            .trim_start_matches('\n')
            .to_owned(),
    };
    if source.text().contains("\r\n") {
        rendered = rendered.replace('\n', "\r\n");
    }
    self_check(&rendered, source, &module, blocks_allowed, source_within)?;
    // The input's tree and tables are done with: freed beside what the caller does next.
    drop(translator);
    crate::front::depth::drop_aside((parsed, module), source);
    Ok(Translated {
        text: rendered,
        warnings: diagnostics,
    })
}

/// How deep a tree CPython 3.10 to 3.12 compile (about 2,980 levels, less what the
/// caller's frames use; gotopy took it as its own bound before it had one of its own). A
/// translation may go deeper only where its source already does: its dispatch loops and
/// guards add a few levels to the statements inside them.
const CPYTHON_DEPTH: usize = 2_900;

/// The names of the registers: `_goto_k` and friends, with a number added when the module
/// already uses the name (a scope's register may be named after its one label instead:
/// [`Translator::register`]).
struct Names {
    k: String,
    v: String,
    t: String,
    /// The prefix of a shared search's name, then of its message's (or, alone, the one
    /// search of the scope and the function that makes its error).
    s: String,
    m: String,
    /// The scope's labels by name, each with its
    /// [`frame_code`](crate::plan::cases::frame_code) and number, for the one search; and
    /// the frame codes by number.
    n: String,
    b: String,
    f: String,
    w: String,
    r: String,
}

impl Names {
    fn new(text: &str) -> Names {
        let fresh = |base: &str| fresh_in(text, base);
        Names {
            k: fresh("_goto_k"),
            v: fresh("_goto_v"),
            t: fresh("_goto_t"),
            s: fresh("_goto_s"),
            m: fresh("_goto_m"),
            n: fresh("_goto_n"),
            b: fresh("_goto_b"),
            f: fresh("_goto_f"),
            w: fresh("_goto_w"),
            r: fresh("_goto_r"),
        }
    }
}

/// `base`, or `base` with a number added, that `text` does not hold.
fn fresh_in(text: &str, base: &str) -> String {
    fresh(base, |name| text.contains(name))
}

/// `base`, or `base` with a number added, that is not `taken`.
fn fresh(base: &str, taken: impl Fn(&str) -> bool) -> String {
    (0..)
        .map(|n| {
            if n == 0 {
                base.to_owned()
            } else {
                format!("{base}{n}")
            }
        })
        .find(|name| !taken(name))
        .expect("a free name")
}

struct Translator<'a> {
    /// Imports of `goto` or `gotopy` whose names the program uses besides its markers and
    /// decorators (`import goto as g; print(g.__name__)`): kept.
    used_imports: Vec<TextRange>,
    /// The class and function scopes by where their names start.
    scopes: HashMap<TextSize, &'a Scope>,
    /// Where the names of the scopes that are written through start (decorated by gotopy,
    /// or rewritten with markers), sorted.
    written: Vec<TextSize>,
    text: Text<'a>,
    module: &'a Module,
    names: Names,
    /// How many `finally` bodies saved the register so far (each gets its own name).
    saves: std::cell::Cell<usize>,
    purpose: Purpose,
    /// The scopes the user's source rewrote with markers ([`Original::marked`]).
    marked: &'a std::collections::HashSet<String>,
}

type NodeId = usize;
type ListId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeKind {
    Simple,
    /// Dropped: `import goto`, `from goto import ...`, and the same for `gotopy`.
    MarkerImport,
    /// A label or case: the number of its target.
    Label(usize),
    Case(usize),
    Goto(MarkerId),
    Computed(MarkerId),
    Switch(SwitchId),
    Break,
    Continue,
    If,
    While,
    For,
    /// A `try` statement as it is written.
    Try,
    /// A `try` with a `finally` and handlers or `else`, split as Python defines it:
    /// `try: [TryInner] finally: ...`, so that jumps inside the inner part stay inside.
    TryOuter,
    TryInner,
    With,
    Match,
    Def,
    Class,
}

struct Node<'a> {
    stmt: &'a Stmt,
    kind: NodeKind,
    list: ListId,
    index: usize,
    lists: Vec<ListId>,
    range: TextRange,
}

struct List {
    items: Vec<NodeId>,
    parent: Option<NodeId>,
    /// The body of a `while`/`for` loop or of a switch: `break` and `continue` act on it.
    loop_body: bool,
}

/// A loop of the output, which `break`/`continue` act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum LoopKey {
    /// A `while`, `for` or switch of the source.
    Source(NodeId),
    /// The dispatch loop of a home list.
    Dispatch(ListId),
    /// The loop around the body of a `with` left early (see `Ctx::shells`).
    Shell(NodeId),
}

/// Where a jump goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Goal {
    Target(usize),
    Break(NodeId),
    Continue(NodeId),
    /// A `return` inside a `with` that has a shell: it leaves the outermost such `with`'s
    /// shell, and the post-check after that `with` returns (`_goto_r`, or nothing for a
    /// bare `return`, which is all an async generator may have).
    Return(NodeId, bool),
}

struct Target {
    id: i64,
    node: NodeId,
    range: TextRange,
}

/// One scope's tree and what the analysis found in it.
struct Ctx<'a> {
    scope: &'a Scope,
    /// The scope's markers by where their statements start (none when it is not rewritten).
    markers: HashMap<TextSize, MarkerId>,
    nodes: Vec<Node<'a>>,
    lists: Vec<List>,
    targets: Vec<Target>,
    /// Ranges of the statements that cannot be copied as they are (markers, jumps, marker
    /// imports, definitions holding rewritten scopes): disjoint, sorted once analysed.
    special: Vec<TextRange>,
    /// Ranges of the jumps that set the register: disjoint, sorted once analysed.
    setters: Vec<TextRange>,
    /// Dispatch loops: a home list's first and last statement inside its loop.
    regions: HashMap<ListId, (usize, usize)>,
    /// Switch bodies: the switch's own loop is their dispatch loop.
    switch_bodies: HashMap<ListId, NodeId>,
    /// Targets a dispatch loop (or switch) is entered at with the register set.
    homed: HashMap<ListId, BTreeSet<i64>>,
    /// What a loop does after it when a jump passing through it has left it.
    post: HashMap<LoopKey, BTreeMap<i64, String>>,
    /// The same for the jumps of computed gotos, by their home: for every number of the
    /// labels under it ([`Under::ranges`]), tested after [`Ctx::post`]'s numbers and from
    /// the innermost home out. A number has one action per loop: the jumps that leave a
    /// loop for a label all have the same home, the lowest list holding the loop and it.
    post_homes: HashMap<LoopKey, BTreeMap<ListId, String>>,
    /// Where the labels are, for computed gotos.
    under: Under,
    /// The statements that stand for a jump.
    codes: HashMap<NodeId, Vec<Out>>,
    /// Register values of the jumps that are not gotos: `break`/`continue` moved out of a
    /// dispatch loop, `return`s out of shells.
    pseudo: HashMap<Goal, i64>,
    /// The `with` statements whose bodies get a loop of their own, `while True: BODY;
    /// break`, which every early exit of the body breaks (jumps, and `break`, `continue` and
    /// `return` of the source); a post-check after the statement goes on. Then no `with` of
    /// a rewritten scope is left early more than once: PyPy 3.11 (8.0.1) compiles a `with`
    /// left by more than one `break`/`continue`/`return` wrongly (its handler stays active
    /// on the later ones, so that an exception after them calls a stale `__exit__` or
    /// crashes the interpreter).
    shells: HashSet<NodeId>,
    /// The shells whose bodies hold a `with` or a `try` with a `finally`: there an
    /// `__exit__` or `finally` body may raise while a jump is on its way out, and the
    /// register goes past the statement through `_goto_w`, set at the body's end (see
    /// [`Ctx::find_handoffs`]). Any other shell's post-check reads the register itself.
    handoffs: HashSet<NodeId>,
    /// The `if` statements after which a label's reset goes instead of before them
    /// (`Ctx::reset_after`).
    late_resets: HashSet<NodeId>,
    uses_k: bool,
    /// The register's name as the scope is written: `_goto_k`, or a stand-in where it may
    /// be named after the scope's one label ([`Translator::one_label`]), named once the
    /// scope is written.
    k: String,
    /// The computed gotos of each frame: the frames whose labels they may reach.
    computed_groups: Vec<ComputedGroup>,
    /// Computed gotos in two or more frames: one search over the scope's labels serves
    /// them all, each goto then testing the frame of the label found against its own
    /// frames ([`ComputedGroup::chain`]); a search per frame would cost frames times labels.
    one_search: bool,
}

/// Where a scope's labels are, found once for its computed gotos
/// ([`Ctx::find_under`]).
#[derive(Default)]
struct Under {
    /// For each list holding a label or a statement around one: the lowest and highest
    /// number of the labels under it. A list's statements are a span of the source and
    /// targets are numbered in source order, so the numbers in that range are the targets
    /// under the list.
    ranges: HashMap<ListId, (i64, i64)>,
    /// For each such list and [`frame_code`](crate::plan::cases::frame_code): how many of
    /// the labels under it are in that frame, and the first and last index of the
    /// statements holding them (list 0, the scope's body, holds them all).
    by_frame: HashMap<(ListId, i64), (usize, usize, usize)>,
}

/// The computed gotos of one frame: the frames whose labels they may reach.
struct ComputedGroup {
    /// How many computed gotos are in the frame.
    gotos: usize,
    /// Its number among the scope's shared searches, when two or more computed gotos are
    /// in the frame (and the scope has no [`Ctx::one_search`]).
    shared: Option<usize>,
    /// The frames whose labels it may reach, innermost first, each as
    /// [`frame_code`](crate::plan::cases::frame_code) numbers it: those around it up to the
    /// innermost `finally` or `except*` handler, that one included, and else the scope's own
    /// level too (SPEC 4: a goto never enters a frame, nor leaves a `finally` or `except*`).
    chain: Vec<i64>,
}

impl<'a> Translator<'a> {
    /// The comments that stand alone in `range`, with their lines; in a migration, which
    /// leaves nothing of gotopy, without the line that asks it for every scope.
    fn comments(&self, range: TextRange) -> Vec<(usize, &'a str)> {
        let mut comments = self.text.comments(range);
        if self.purpose == Purpose::Migration {
            comments.retain(|(_, comment)| comment.trim().as_bytes() != scan::ALL_SCOPES);
        }
        comments
    }

    fn module(&self, body: &'a [Stmt]) -> Result<Vec<Out>, Diagnostic> {
        let mut outs = Vec::new();
        let end = TextSize::try_from(self.text.src.len()).unwrap_or_default();
        let first = body.first().map_or(end, Ranged::start);
        // Leading `#!` and coding lines stay on top (a coding line must be on line 1 or 2).
        let comments = self.comments(TextRange::new(TextSize::new(0), first));
        let mut rest = Vec::new();
        for (line, comment) in comments {
            if line <= 2 && (comment.starts_with("#!") || is_coding(comment)) {
                let comment = if is_coding(comment) && !comment.contains("utf") {
                    "# -*- coding: utf-8 -*-"
                } else {
                    comment
                };
                outs.push(Out::compound(line, comment));
            } else {
                rest.push((line, comment));
            }
        }
        for (line, comment) in rest {
            outs.push(comment_out(line, comment));
        }
        outs.extend(self.scope_body(&self.module.scopes[0], body, first)?);
        let last = body.last().map_or(first, Ranged::end);
        for (line, comment) in self.comments(TextRange::new(last, end)) {
            outs.push(comment_out(line, comment));
        }
        Ok(outs)
    }

    /// A scope's body as output statements.
    fn scope_body(
        &self,
        scope: &'a Scope,
        body: &'a [Stmt],
        from: TextSize,
    ) -> Result<Vec<Out>, Diagnostic> {
        let rewritten =
            scope.rewritten && (!scope.markers.is_empty() || self.marked.contains(&scope.qualname));
        let mut ctx = Ctx::build(self, scope, rewritten, body);
        let label = self.one_label(&ctx);
        if label.is_some() {
            // Unique to the scope, and in no source (CPython refuses null bytes).
            ctx.k = format!("\0{}\0", std::ptr::from_ref(scope) as usize);
        }
        if rewritten {
            ctx.analyse(self);
        }
        let mut outs = ctx.list(self, 0, &BTreeSet::new(), false, from)?;
        // The register's start, and the searches that computed gotos share (which some
        // read even when no jump sets the register: when they reach no label).
        let start: Vec<String> = (ctx.uses_k.then(|| format!("{} = 0", ctx.k)))
            .into_iter()
            .chain(ctx.shared_searches(self))
            .collect();
        if !start.is_empty() {
            // After a docstring and `from __future__` imports.
            let skip = body
                .iter()
                .take_while(|stmt| is_docstring_or_future(stmt))
                .count()
                .min(outs.len());
            let at = outs
                .iter()
                .enumerate()
                .filter(|(_, out)| {
                    !matches!(
                        out,
                        Out::Stmt {
                            kind: Kind::Comment,
                            ..
                        }
                    )
                })
                .nth(skip)
                .map_or(outs.len(), |(index, _)| index);
            outs.splice(
                at..at,
                start.into_iter().map(|statement| Out::prefix(0, statement)),
            );
        }
        if let Some(label) = label.filter(|_| ctx.uses_k) {
            // Named after the label where every jump through the register goes there (no
            // `break`, `continue` or `return` moved through it).
            let name = if ctx.pseudo.is_empty() {
                fresh_in(self.text.src, &format!("_goto_{label}"))
            } else {
                self.names.k.clone()
            };
            for out in &mut outs {
                out.rename(&ctx.k, &name);
            }
        }
        Ok(outs)
    }

    /// The scope's one label, when its register may be named after it
    /// (`_goto_recovered = 1; continue` for `goto .recovered`): the only target, with no
    /// computed goto or switch (whose register holds other numbers).
    fn one_label(&self, ctx: &Ctx<'a>) -> Option<&'a str> {
        let [target] = ctx.targets.as_slice() else {
            return None;
        };
        let by_value = (ctx.scope.markers.iter()).any(|marker| {
            matches!(
                marker.kind,
                MarkerKind::Switch(_) | MarkerKind::ComputedGoto { .. }
            )
        });
        let marker = ctx.markers.get(&target.range.start())?;
        match &ctx.scope.marker(*marker).kind {
            MarkerKind::Label { name, .. } if !by_value => Some(name.as_str()),
            _ => None,
        }
    }

    fn scope_of(&self, name: TextRange) -> Option<&'a Scope> {
        self.scopes.get(&name.start()).copied()
    }

    /// Whether a definition is or holds a scope that is written through, at any depth.
    fn holds_rewritten(&self, range: TextRange) -> bool {
        let first = self.written.partition_point(|&start| start < range.start());
        self.written
            .get(first)
            .is_some_and(|&start| start < range.end())
    }
}

/// Whether translate writes `scope` anew: decorated for goto, or rewritten (every scope,
/// when asked) and holding markers.
fn is_written(scope: &Scope) -> bool {
    scope.decorated || scope.rewritten && !scope.markers.is_empty()
}

fn is_coding(comment: &str) -> bool {
    comment.contains("coding:") || comment.contains("coding=")
}

fn comment_out(line: usize, comment: &str) -> Out {
    Out::Stmt {
        line,
        pieces: vec![Piece::Rel(comment.to_owned())],
        kind: Kind::Comment,
    }
}

fn is_docstring_or_future(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Expr(expr) => expr.value.is_string_literal_expr(),
        Stmt::ImportFrom(import) => import
            .module
            .as_ref()
            .is_some_and(|m| m.as_str() == "__future__"),
        _ => false,
    }
}

/// The imports of `goto`/`gotopy` (at any depth) that bind a name the program uses other
/// than in a marker, a gotopy decorator or such an import.
fn used_imports(body: &[Stmt], module: &Module, text: &Text) -> Vec<TextRange> {
    use rustpython_compiler::ast::visitor::{Visitor, walk_stmt};
    struct Imports<'s> {
        found: Vec<(&'s Stmt, Vec<String>)>,
        decorators: Vec<TextRange>,
    }
    impl<'s> Visitor<'s> for Imports<'s> {
        fn visit_stmt(&mut self, stmt: &'s Stmt) {
            if let Some(names) = scan::marker_import_names(stmt) {
                self.found.push((stmt, names));
            }
            if let Stmt::FunctionDef(def) = stmt {
                for decorator in &def.decorator_list {
                    if scan::is_goto_decorator(&decorator.expression) {
                        self.decorators.push(decorator.range());
                    }
                }
            }
            walk_stmt(self, stmt);
        }
    }
    let mut imports = Imports {
        found: Vec::new(),
        decorators: Vec::new(),
    };
    for stmt in body {
        imports.visit_stmt(stmt);
    }
    let mut excluded: Vec<TextRange> = imports.decorators.clone();
    excluded.extend(imports.found.iter().map(|(stmt, _)| stmt.range()));
    excluded.extend(
        module
            .scopes
            .iter()
            .flat_map(|scope| scope.markers.iter().map(|marker| marker.range)),
    );
    // Sorted, they do not overlap (an import holds no marker): the one that may hold a name
    // is the last one starting before it.
    excluded.sort_by_key(|range| range.start());
    let inside = |range: TextRange| {
        let after = excluded.partition_point(|one| one.start() <= range.start());
        after > 0 && excluded[after - 1].contains_range(range)
    };
    let used: BTreeSet<&str> = text
        .tokens
        .iter()
        .filter(|token| token.kind() == TokenKind::Name)
        .filter(|token| !inside(token.range()))
        .map(|token| text.slice(token.range()))
        .collect();
    imports
        .found
        .into_iter()
        .filter(|(_, names)| names.iter().any(|name| used.contains(name.as_str())))
        .map(|(stmt, _)| stmt.range())
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Item {
    Node(NodeId),
    /// The dispatch loop of a list over its statements `a..=b`.
    Dispatch(ListId, usize, usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`self_check`] says of `output`, as the translation of a source without gotos:
    /// `None` when it passes, else its one diagnostic's message.
    fn self_checked(output: &str) -> Option<String> {
        self_checked_from("x = 1\n", output)
    }

    /// What [`self_check`] says of `output` as the translation of `source`.
    fn self_checked_from(source: &str, output: &str) -> Option<String> {
        let source = Source::new("m.py", source);
        let module = crate::front::run(&source, Options::new())
            .expect("parses")
            .module;
        match self_check(output, &source, &module, blocks::LIMIT, true) {
            Ok(()) => None,
            Err(CompileError::Rejected { diagnostics, .. }) => {
                assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
                Some(diagnostics[0].message.clone())
            }
            Err(other) => panic!("{other}"),
        }
    }

    /// A marker left in a rewritten scope is a bug of gotopy's, found whichever of the
    /// marker names it takes, also in letters the lexer folds to ASCII (the decorator is
    /// `with_goto`, no marker's name, so that each marker is found by its own); the same
    /// names as plain names of a scope that is not rewritten, or in a comment or a
    /// string, are not.
    #[test]
    fn self_check_finds_a_marker_left_in_a_rewritten_scope() {
        let left = [
            "@with_goto\ndef f():\n    label .a\n",
            "@with_goto\ndef f():\n    goto .a\n",
            "@with_goto\ndef f(x):\n    goto *x\n",
            "@with_goto\ndef f(x):\n    while switch *x:\n        pass\n",
            "@with_goto\ndef f():\n    case[1]\n",
            "@with_goto\ndef f():\n    \u{ff4c}\u{ff41}\u{ff42}\u{ff45}\u{ff4c} .a\n",
        ];
        for output in left {
            let message = self_checked(output).unwrap_or_else(|| panic!("passed: {output}"));
            assert!(
                message.contains("still has markers in a rewritten scope"),
                "{output}: {message}"
            );
        }
        let clean = [
            "def f():\n    _goto_k = 0\n",
            "def f(goto, label, case, switch):\n    return goto .a, label, case[1], switch\n",
            "# goto .a\ndef f():\n    return 'label .a'\n",
        ];
        for output in clean {
            assert_eq!(self_checked(output), None, "{output}");
        }
    }

    /// A translation drops the decorators of the scopes it rewrites, so a marker left in
    /// one is found against the source's scopes: the markers of scopes it does not rewrite
    /// stay, and any more is a bug of gotopy's.
    #[test]
    fn self_check_finds_a_marker_left_where_the_decorator_is_gone() {
        let source = "@goto\ndef f():\n    label .a\n    goto .a\n\n\ndef g():\n    goto .b\n";
        let kept = "def f():\n    pass\n\n\ndef g():\n    goto .b\n";
        assert_eq!(self_checked_from(source, kept), None);
        let left = "def f():\n    goto .a\n\n\ndef g():\n    goto .b\n";
        let message = self_checked_from(source, left).expect("a marker left");
        assert!(message.contains("still has markers"), "{message}");
    }
}
