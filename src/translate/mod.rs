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

mod text;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::token::TokenKind;
use rustpython_compiler::ast::{self as ast, ExceptHandler, Stmt};

use crate::compile::dispatch::{NO_SUCH_LABEL, no_such_label_text, switch_cases};
use crate::compile::{CompileError, rejected};
use crate::diagnostic::{Code, Diagnostic};
use crate::scan::{self, MarkerId, MarkerKind, Module, Options, Scope, ScopeKind, SwitchId};
use crate::search::{Step, balanced};
use crate::source::Source;
use text::{Kind, Out, Piece, Text, render};

/// A translated module.
#[derive(Debug)]
pub struct Translated {
    /// The structured Python source.
    pub text: String,
    /// The warnings `check` gives for the input.
    pub warnings: Vec<Diagnostic>,
}

/// Translates one module: checked first (its errors reject it, as `check` reports them),
/// then every rewritten scope is written without goto, label, switch or case.
pub fn translate_source(source: &Source, options: Options) -> Result<Translated, CompileError> {
    crate::depth::on_deep_stack(source, || translate_source_here(source, options))
}

fn translate_source_here(source: &Source, options: Options) -> Result<Translated, CompileError> {
    let parsed = crate::parse::parse(source).map_err(|e| rejected(vec![e], source))?;
    let module = scan::scan(parsed.syntax(), parsed.tokens(), source, options);
    let mut diagnostics = crate::check::check(&module, source);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(rejected(diagnostics, source));
    }
    let text = Text::new(source.text(), parsed.tokens());
    let named = module
        .scopes
        .iter()
        .filter(|scope| scope.kind != ScopeKind::Module);
    let mut written: Vec<TextSize> = named
        .clone()
        .filter(|scope| scope.decorated || scope.rewritten && !scope.markers.is_empty())
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
        path: source.path(),
        names: Names::new(source.text()),
        saves: std::cell::Cell::new(0),
    };
    let body = &parsed.syntax().body;
    let outs = match translator.module(body) {
        Ok(outs) => outs,
        Err(refusal) => {
            diagnostics.push(refusal);
            return Err(rejected(diagnostics, source));
        }
    };
    let mut rendered = render(outs);
    if source.text().contains("\r\n") {
        rendered = rendered.replace('\n', "\r\n");
    }
    self_check(&rendered, source)?;
    Ok(Translated {
        text: rendered,
        warnings: diagnostics,
    })
}

/// The output parses and no rewritten scope has a marker left: else a bug of gotopy's.
fn self_check(text: &str, source: &Source) -> Result<(), CompileError> {
    let output = Source::new(source.path(), text);
    // The output nests deeper than the input, by its dispatch loops: its own stack.
    let failure = crate::depth::on_deep_stack(&output, || match crate::parse::parse(&output) {
        Err(error) => Some(format!("its output does not parse: {}", error.message)),
        Ok(parsed) => {
            let module = scan::scan(parsed.syntax(), parsed.tokens(), &output, Options::new());
            module
                .scopes
                .iter()
                .any(|scope| scope.rewritten && !scope.markers.is_empty())
                .then(|| "its output still has markers in a rewritten scope".to_owned())
        }
    });
    match failure {
        None => Ok(()),
        Some(what) => Err(rejected(
            vec![Diagnostic::new(
                Code::Internal,
                TextRange::default(),
                format!("gotopy translate failed: {what}; this is a bug in gotopy"),
            )],
            source,
        )),
    }
}

/// The names of the registers: `_goto_k` and friends, with a number added when the module
/// already uses the name.
struct Names {
    k: String,
    v: String,
    t: String,
    f: String,
    w: String,
    r: String,
}

impl Names {
    fn new(text: &str) -> Names {
        let fresh = |base: &str| {
            (0..)
                .map(|n| {
                    if n == 0 {
                        base.to_owned()
                    } else {
                        format!("{base}{n}")
                    }
                })
                .find(|name| !text.contains(name.as_str()))
                .expect("a free name")
        };
        Names {
            k: fresh("_goto_k"),
            v: fresh("_goto_v"),
            t: fresh("_goto_t"),
            f: fresh("_goto_f"),
            w: fresh("_goto_w"),
            r: fresh("_goto_r"),
        }
    }
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
    path: &'a str,
    names: Names,
    /// How many `finally` bodies saved the register so far (each gets its own name).
    saves: std::cell::Cell<usize>,
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
    uses_k: bool,
}

impl<'a> Translator<'a> {
    fn module(&self, body: &'a [Stmt]) -> Result<Vec<Out>, Diagnostic> {
        let mut outs = Vec::new();
        let end = TextSize::try_from(self.text.src.len()).unwrap_or_default();
        let first = body.first().map_or(end, Ranged::start);
        // Leading `#!` and coding lines stay on top (a coding line must be on line 1 or 2).
        let comments = self.text.comments(TextRange::new(TextSize::new(0), first));
        let mut rest = Vec::new();
        for (line, comment) in comments {
            if line <= 2 && (comment.starts_with("#!") || is_coding(comment)) {
                let comment = if is_coding(comment) && !comment.contains("utf") {
                    "# -*- coding: utf-8 -*-"
                } else {
                    comment
                };
                outs.push(Out::line(line, comment));
            } else {
                rest.push((line, comment));
            }
        }
        outs.push(Out::line(
            0,
            format!(
                "# Generated by `gotopy translate` from {}: its gotos as structured Python. \
                 Edit the source, not this file.",
                self.path
            ),
        ));
        for (line, comment) in rest {
            outs.push(comment_out(line, comment));
        }
        outs.extend(self.scope_body(&self.module.scopes[0], body, first)?);
        let last = body.last().map_or(first, Ranged::end);
        for (line, comment) in self.text.comments(TextRange::new(last, end)) {
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
        let rewritten = scope.rewritten && !scope.markers.is_empty();
        let mut ctx = Ctx::build(self, scope, rewritten, body);
        if rewritten {
            ctx.analyse(self);
        }
        let mut outs = ctx.list(self, 0, &BTreeSet::new(), false, from)?;
        if ctx.uses_k {
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
            outs.insert(at, Out::prefix(0, format!("{} = 0", self.names.k)));
        }
        Ok(outs)
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
            if is_marker_import(stmt) {
                let names = match stmt {
                    Stmt::Import(import) => import
                        .names
                        .iter()
                        .map(|alias| match &alias.asname {
                            Some(name) => name.to_string(),
                            None => alias.name.split('.').next().unwrap_or_default().to_owned(),
                        })
                        .collect(),
                    Stmt::ImportFrom(import) => import
                        .names
                        .iter()
                        .map(|alias| alias.asname.as_ref().unwrap_or(&alias.name).to_string())
                        .collect(),
                    _ => Vec::new(),
                };
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

fn is_marker_import(stmt: &Stmt) -> bool {
    let ours = |name: &str| {
        name == "goto"
            || name == "gotopy"
            || name.starts_with("gotopy.")
            || name.starts_with("goto.")
    };
    match stmt {
        Stmt::Import(import) => import.names.iter().all(|alias| ours(alias.name.as_str())),
        Stmt::ImportFrom(import) => {
            import.level == 0 && import.module.as_ref().is_some_and(|m| ours(m.as_str()))
        }
        _ => false,
    }
}

/// One part of a statement list entered with the register set: its first line, the
/// highest target number in it (`None`: none, only its first part), and its statements.
struct Part {
    line: usize,
    last: Option<i64>,
    body: Vec<Out>,
}

/// The parts of a statement list, each reached with a few tests of the register whatever
/// its place: the first half under `if k <= LAST` (its highest target: targets are
/// numbered in source order, and the register is 0 once its target is reached), then the
/// second half, each half split again. A jump to the i-th of n parts takes about log2(n)
/// tests, where a guard per part would take i; running through them in order takes one
/// test per part, as that would. Up to three parts it is that chain exactly. `strict`: the
/// register may hold numbers past the last part, which then is guarded too.
fn guarded(k: &str, mut parts: Vec<Part>, strict: bool) -> Vec<Out> {
    let guard = |part: &Part| match part.last {
        Some(last) => format!("if {k} <= {last}"),
        None => format!("if not {k}"),
    };
    if parts.len() == 1 {
        let part = parts.pop().expect("one part");
        return if strict {
            vec![Out::block(part.line, guard(&part), part.body)]
        } else {
            part.body
        };
    }
    let second = parts.split_off(parts.len() / 2);
    let header = guard(parts.last().expect("a first half"));
    let line = parts[0].line;
    let mut outs = vec![Out::block(line, header, guarded(k, parts, false))];
    outs.extend(guarded(k, second, strict));
    outs
}

/// The statements of `(number, code)` pairs grouped by code, in the order codes first come.
fn grouped(pairs: Vec<(i64, String)>) -> Vec<(String, Vec<i64>)> {
    let mut groups: Vec<(String, Vec<i64>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (number, code) in pairs {
        match index.get(&code) {
            Some(&at) => groups[at].1.push(number),
            None => {
                index.insert(code.clone(), groups.len());
                groups.push((code, vec![number]));
            }
        }
    }
    groups
}

/// `if value == a or value == b: code` / `elif ...` for each group, the last one as `else`.
fn branches(value: &str, groups: Vec<(String, Vec<i64>)>) -> Vec<Out> {
    let count = groups.len();
    groups
        .into_iter()
        .enumerate()
        .map(|(index, (code, numbers))| {
            let test = numbers
                .iter()
                .map(|number| format!("{value} == {number}"))
                .collect::<Vec<_>>()
                .join(" or ");
            let header = match index {
                _ if index + 1 == count => "else".to_owned(),
                0 => format!("if {test}"),
                _ => format!("elif {test}"),
            };
            Out::block(0, header, vec![Out::line(0, code)])
        })
        .collect()
}

/// Whether one of `ranges` (sorted by start, disjoint statements) lies inside `range`.
fn holds(ranges: &[TextRange], range: TextRange) -> bool {
    let first = ranges.partition_point(|inner| inner.start() < range.start());
    ranges
        .get(first)
        .is_some_and(|inner| range.contains_range(*inner))
}

/// `lo <= K <= hi` as Python, or `K == lo`.
fn within(k: &str, ids: &BTreeSet<i64>) -> String {
    let (lo, hi) = (ids.first().copied(), ids.last().copied());
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => format!("{k} == {lo}"),
        (Some(lo), Some(hi)) => format!("{lo} <= {k} <= {hi}"),
        _ => "False".to_owned(),
    }
}

/// A Python string literal of `text`.
fn py_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A balanced search over `keys` (sorted, as Python orders them: literal text and the
/// number it yields) as one conditional expression: gotopy's comparisons in gotopy's order.
fn search(value: &str, keys: &[(String, i64)]) -> String {
    fn build(steps: &[Step], at: &mut usize, value: &str, keys: &[(String, i64)]) -> String {
        let step = steps[*at];
        *at += 1;
        match step {
            Step::Nothing => "0".to_owned(),
            Step::Equal(key) => format!("({} if {value} == {} else 0)", keys[key].1, keys[key].0),
            Step::Less { pivot, .. } => {
                let high = build(steps, at, value, keys);
                // The `Below` step that starts the lower half.
                *at += 1;
                let low = build(steps, at, value, keys);
                format!("({low} if {value} < {} else {high})", keys[pivot].0)
            }
            Step::Below(_) => build(steps, at, value, keys),
        }
    }
    build(&balanced(keys.len()), &mut 0, value, keys)
}

impl<'a> Ctx<'a> {
    fn build(tr: &Translator<'a>, scope: &'a Scope, rewritten: bool, body: &'a [Stmt]) -> Ctx<'a> {
        let markers = if rewritten {
            scope
                .markers
                .iter()
                .enumerate()
                .map(|(index, marker)| (marker.range.start(), MarkerId(index)))
                .collect()
        } else {
            HashMap::new()
        };
        let mut ctx = Ctx {
            scope,
            markers,
            nodes: Vec::new(),
            lists: Vec::new(),
            targets: Vec::new(),
            special: Vec::new(),
            setters: Vec::new(),
            regions: HashMap::new(),
            switch_bodies: HashMap::new(),
            homed: HashMap::new(),
            post: HashMap::new(),
            codes: HashMap::new(),
            pseudo: HashMap::new(),
            shells: HashSet::new(),
            uses_k: false,
        };
        ctx.build_list(tr, body, None, false);
        ctx.special.sort_by_key(|range| range.start());
        ctx
    }

    fn build_list(
        &mut self,
        tr: &Translator<'a>,
        stmts: &'a [Stmt],
        parent: Option<NodeId>,
        loop_body: bool,
    ) -> ListId {
        let list = self.lists.len();
        self.lists.push(List {
            items: Vec::new(),
            parent,
            loop_body,
        });
        for (index, stmt) in stmts.iter().enumerate() {
            let node = self.build_node(tr, stmt, list, index);
            self.lists[list].items.push(node);
        }
        list
    }

    /// The lists of a `try` statement's body, handlers and `else`, under `parent`.
    fn try_lists(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a ast::StmtTry,
        parent: NodeId,
    ) -> Vec<ListId> {
        let mut lists = vec![self.build_list(tr, &stmt.body, Some(parent), false)];
        for handler in &stmt.handlers {
            let ExceptHandler::ExceptHandler(handler) = handler;
            lists.push(self.build_list(tr, &handler.body, Some(parent), false));
        }
        lists.push(self.build_list(tr, &stmt.orelse, Some(parent), false));
        lists
    }

    fn build_node(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a Stmt,
        list: ListId,
        index: usize,
    ) -> NodeId {
        let id = self.nodes.len();
        let marker = self.markers.get(&stmt.start()).copied();
        let kind = match (marker.map(|marker| &self.scope.marker(marker).kind), stmt) {
            (Some(kind @ (MarkerKind::Label { .. } | MarkerKind::Case { .. })), _) => {
                let target = self.targets.len();
                self.targets.push(Target {
                    id: target as i64 + 1,
                    node: id,
                    range: stmt.range(),
                });
                match kind {
                    MarkerKind::Label { .. } => NodeKind::Label(target),
                    _ => NodeKind::Case(target),
                }
            }
            (Some(MarkerKind::Goto { .. }), _) => NodeKind::Goto(marker.expect("a marker")),
            (Some(MarkerKind::ComputedGoto { .. }), _) => {
                NodeKind::Computed(marker.expect("a marker"))
            }
            (Some(MarkerKind::Switch(switch)), _) => NodeKind::Switch(*switch),
            (_, Stmt::Break(_)) => NodeKind::Break,
            (_, Stmt::Continue(_)) => NodeKind::Continue,
            (_, Stmt::If(_)) => NodeKind::If,
            (_, Stmt::While(_)) => NodeKind::While,
            (_, Stmt::For(_)) => NodeKind::For,
            (_, Stmt::Try(stmt)) => {
                if !stmt.finalbody.is_empty()
                    && (!stmt.handlers.is_empty() || !stmt.orelse.is_empty())
                {
                    NodeKind::TryOuter
                } else {
                    NodeKind::Try
                }
            }
            (_, Stmt::With(_)) => NodeKind::With,
            (_, Stmt::Match(_)) => NodeKind::Match,
            (_, Stmt::FunctionDef(_)) => NodeKind::Def,
            (_, Stmt::ClassDef(_)) => NodeKind::Class,
            (_, stmt) if is_marker_import(stmt) && !tr.used_imports.contains(&stmt.range()) => {
                NodeKind::MarkerImport
            }
            _ => NodeKind::Simple,
        };
        self.nodes.push(Node {
            stmt,
            kind,
            list,
            index,
            lists: Vec::new(),
            range: stmt.range(),
        });
        // A definition that is or holds a rewritten scope is written through: a copy would
        // keep its markers and gotopy's decorator.
        let written = match kind {
            NodeKind::Def | NodeKind::Class => tr.holds_rewritten(stmt.range()),
            NodeKind::MarkerImport => true,
            _ => marker.is_some(),
        };
        if written {
            self.special.push(stmt.range());
        }
        let lists = match stmt {
            Stmt::If(stmt) => {
                let mut lists = vec![self.build_list(tr, &stmt.body, Some(id), false)];
                for clause in &stmt.elif_else_clauses {
                    lists.push(self.build_list(tr, &clause.body, Some(id), false));
                }
                lists
            }
            Stmt::While(stmt) if matches!(kind, NodeKind::Switch(_)) => {
                let body = self.build_list(tr, &stmt.body, Some(id), true);
                self.switch_bodies.insert(body, id);
                vec![body]
            }
            Stmt::While(stmt) => vec![
                self.build_list(tr, &stmt.body, Some(id), true),
                self.build_list(tr, &stmt.orelse, Some(id), false),
            ],
            Stmt::For(stmt) => vec![
                self.build_list(tr, &stmt.body, Some(id), true),
                self.build_list(tr, &stmt.orelse, Some(id), false),
            ],
            Stmt::Try(stmt) if kind == NodeKind::TryOuter => {
                // The inner part: a list of one node standing for the same statement.
                let inner_list = self.lists.len();
                self.lists.push(List {
                    items: vec![self.nodes.len()],
                    parent: Some(id),
                    loop_body: false,
                });
                let inner = self.nodes.len();
                let end = stmt
                    .orelse
                    .last()
                    .map(Ranged::end)
                    .or_else(|| stmt.handlers.last().map(Ranged::end))
                    .unwrap_or(stmt.end());
                self.nodes.push(Node {
                    stmt: self.nodes[id].stmt,
                    kind: NodeKind::TryInner,
                    list: inner_list,
                    index: 0,
                    lists: Vec::new(),
                    range: TextRange::new(stmt.start(), end),
                });
                self.nodes[inner].lists = self.try_lists(tr, stmt, inner);
                vec![
                    inner_list,
                    self.build_list(tr, &stmt.finalbody, Some(id), false),
                ]
            }
            Stmt::Try(stmt) => {
                let mut lists = self.try_lists(tr, stmt, id);
                lists.push(self.build_list(tr, &stmt.finalbody, Some(id), false));
                lists
            }
            Stmt::With(stmt) => vec![self.build_list(tr, &stmt.body, Some(id), false)],
            Stmt::Match(stmt) => stmt
                .cases
                .iter()
                .map(|case| self.build_list(tr, &case.body, Some(id), false))
                .collect(),
            _ => Vec::new(),
        };
        self.nodes[id].lists = lists;
        id
    }

    // ---------------------------------------------------------------- analysis

    /// The lists from the root down to a node, each with the index of the statement on the
    /// way.
    fn path(&self, node: NodeId) -> Vec<(ListId, usize)> {
        let mut path = Vec::new();
        let mut at = Some(node);
        while let Some(node) = at {
            let list = self.nodes[node].list;
            path.push((list, self.nodes[node].index));
            at = self.lists[list].parent;
        }
        path.reverse();
        path
    }

    /// The lowest list holding both nodes, with the indexes of the statements holding each.
    fn home(&self, a: NodeId, b: NodeId) -> (ListId, usize, usize) {
        let (pa, pb) = (self.path(a), self.path(b));
        let mut found = (pa[0].0, pa[0].1, pb[0].1);
        for (x, y) in pa.iter().zip(&pb) {
            if x.0 != y.0 {
                break;
            }
            found = (x.0, x.1, y.1);
            if x.1 != y.1 {
                break;
            }
        }
        found
    }

    /// The loops of the output around a node, innermost first.
    fn loops(&self, node: NodeId) -> Vec<LoopKey> {
        let mut out = Vec::new();
        let mut at = node;
        loop {
            let list = self.nodes[at].list;
            let index = self.nodes[at].index;
            if let Some(&(a, b)) = self.regions.get(&list)
                && (a..=b).contains(&index)
            {
                out.push(LoopKey::Dispatch(list));
            }
            let Some(parent) = self.lists[list].parent else {
                break;
            };
            if self.shells.contains(&parent) {
                out.push(LoopKey::Shell(parent));
            }
            if self.lists[list].loop_body {
                out.push(LoopKey::Source(parent));
            }
            at = parent;
        }
        out
    }

    /// The loop a jump homed at `list` continues.
    fn dispatch_of(&self, list: ListId) -> LoopKey {
        match self.switch_bodies.get(&list) {
            Some(&switch) => LoopKey::Source(switch),
            None => LoopKey::Dispatch(list),
        }
    }

    /// The label a dispatch loop starts with, when its first statement is one.
    fn region_start(&self, list: ListId) -> Option<usize> {
        let first = match self.switch_bodies.contains_key(&list) {
            true => 0,
            false => self.regions.get(&list)?.0,
        };
        match self.nodes[*self.lists[list].items.get(first)?].kind {
            NodeKind::Label(target) => Some(target),
            _ => None,
        }
    }

    fn label_target(&self, name: &str) -> usize {
        let entry = self.scope.labels.get(name).expect("check found the label");
        let start = self.scope.marker(entry.definition).range.start();
        self.target_at(start).expect("every label is a target")
    }

    /// The target whose statement starts at `start`, by bisection (targets are in source
    /// order).
    fn target_at(&self, start: TextSize) -> Option<usize> {
        self.targets
            .binary_search_by_key(&start, |target| target.range.start())
            .ok()
    }

    fn analyse(&mut self, tr: &Translator<'a>) {
        // Jumps to labels: gotos and computed gotos (each label it may reach).
        let mut gotos: Vec<(NodeId, usize)> = Vec::new();
        let mut computed: Vec<(NodeId, Vec<(String, usize)>)> = Vec::new();
        for node in 0..self.nodes.len() {
            match self.nodes[node].kind {
                NodeKind::Goto(marker) => {
                    let MarkerKind::Goto { name, .. } = &self.scope.marker(marker).kind else {
                        unreachable!("a goto marker")
                    };
                    gotos.push((node, self.label_target(name)));
                }
                NodeKind::Computed(marker) => {
                    let goto = self.scope.marker(marker);
                    let mut names: Vec<(String, usize)> = self
                        .scope
                        .labels
                        .iter()
                        .filter(|entry| {
                            let label = self.scope.marker(entry.definition);
                            crate::check::jump(self.scope, goto, label, &entry.name).is_none()
                        })
                        .map(|entry| (entry.name.to_string(), self.label_target(&entry.name)))
                        .collect();
                    names.sort();
                    computed.push((node, names));
                }
                _ => {}
            }
        }
        let jumps = gotos.iter().copied().chain(
            computed
                .iter()
                .flat_map(|(node, names)| names.iter().map(|&(_, target)| (*node, target))),
        );
        for (node, target) in jumps.collect::<Vec<_>>() {
            let (home, a, b) = self.home(node, self.targets[target].node);
            if self.switch_bodies.contains_key(&home) {
                continue;
            }
            let (lo, hi) = (a.min(b), a.max(b));
            let region = self.regions.entry(home).or_insert((lo, hi));
            *region = (region.0.min(lo), region.1.max(hi));
        }
        // A `return` or `raise` right after a dispatch loop goes in, as its last statement:
        // then the loop needs no `break` at its end.
        let regions: Vec<(ListId, (usize, usize))> =
            self.regions.iter().map(|(&l, &r)| (l, r)).collect();
        for (list, (a, b)) in regions {
            if let Some(&next) = self.lists[list].items.get(b + 1)
                && matches!(self.nodes[next].stmt, Stmt::Return(_) | Stmt::Raise(_))
                && self.nodes[next].kind == NodeKind::Simple
            {
                self.regions.insert(list, (a, b + 1));
            }
        }
        self.find_shells(&gotos, &computed);
        // Cases are entered from their switch with the register set.
        for target in 0..self.targets.len() {
            let node = self.targets[target].node;
            if let NodeKind::Case(_) = self.nodes[node].kind
                && let Some(body) = self.case_switch_body(node)
            {
                let id = self.targets[target].id;
                self.homed.entry(body).or_default().insert(id);
            }
        }
        for (node, target) in gotos {
            let line = tr.text.line(self.nodes[node].range.start());
            let code = self.jump(tr, node, Goal::Target(target), None);
            self.codes.insert(node, vec![Out::line(line, code)]);
        }
        // A `break` or `continue` that a dispatch loop would capture: a jump of its own.
        for node in 0..self.nodes.len() {
            let is_break = match self.nodes[node].kind {
                NodeKind::Break => true,
                NodeKind::Continue => false,
                _ => continue,
            };
            let Some(owner) = self.owner_loop(node) else {
                continue;
            };
            if self.loops(node).first() == Some(&LoopKey::Source(owner)) {
                continue;
            }
            let goal = if is_break {
                Goal::Break(owner)
            } else {
                Goal::Continue(owner)
            };
            let line = tr.text.line(self.nodes[node].range.start());
            let code = self.jump(tr, node, goal, None);
            self.special.push(self.nodes[node].range);
            self.codes.insert(node, vec![Out::line(line, code)]);
        }
        // A `return` inside a shell leaves it by `break`, its value kept in `_goto_r`.
        for node in 0..self.nodes.len() {
            let Stmt::Return(stmt) = self.nodes[node].stmt else {
                continue;
            };
            let Some(LoopKey::Shell(with)) = self
                .loops(node)
                .into_iter()
                .rfind(|key| matches!(key, LoopKey::Shell(_)))
            else {
                continue;
            };
            let line = tr.text.line(stmt.start());
            let code = self.jump(tr, node, Goal::Return(with, stmt.value.is_some()), None);
            let code = match &stmt.value {
                Some(value) => format!(
                    "{} = ({}); {code}",
                    tr.names.r,
                    tr.text.slice(value.range())
                ),
                None => code,
            };
            self.special.push(self.nodes[node].range);
            self.codes.insert(node, vec![Out::line(line, code)]);
        }
        for (node, names) in computed {
            let code = self.computed(tr, node, &names);
            self.codes.insert(node, code);
        }
        self.special.sort_by_key(|range| range.start());
        self.setters.sort_by_key(|range| range.start());
    }

    /// The `with` statements between a node and the list `stop` holding it.
    fn withs_between(&self, node: NodeId, stop: ListId) -> Vec<NodeId> {
        let mut withs = Vec::new();
        let mut at = node;
        while self.nodes[at].list != stop {
            let Some(parent) = self.lists[self.nodes[at].list].parent else {
                break;
            };
            if self.nodes[parent].kind == NodeKind::With {
                withs.push(parent);
            }
            at = parent;
        }
        withs
    }

    /// Finds `shells`: every `with` a goto or computed goto leaves, every `with` the
    /// source's own `break`, `continue` and `return` statements leave more than once, and
    /// every `with` a `break`/`continue` leaves when a loop of the output (dispatch or
    /// shell) stands between it and its loop, which makes it a jump of its own.
    fn find_shells(
        &mut self,
        gotos: &[(NodeId, usize)],
        computed: &[(NodeId, Vec<(String, usize)>)],
    ) {
        let jumps = gotos.iter().copied().chain(
            computed
                .iter()
                .flat_map(|(node, names)| names.iter().map(|&(_, target)| (*node, target))),
        );
        for (node, target) in jumps {
            let (home, _, _) = self.home(node, self.targets[target].node);
            self.shells.extend(self.withs_between(node, home));
        }
        // A `with` left early twice by the source's own statements.
        let mut left: HashMap<NodeId, usize> = HashMap::new();
        let mut exits = Vec::new();
        for node in 0..self.nodes.len() {
            let withs = match self.nodes[node].kind {
                NodeKind::Break | NodeKind::Continue => {
                    let Some(owner) = self.owner_loop(node) else {
                        continue;
                    };
                    let withs = self.withs_between(node, self.nodes[owner].lists[0]);
                    if !withs.is_empty() {
                        exits.push((node, owner, withs.clone()));
                    }
                    withs
                }
                NodeKind::Simple if matches!(self.nodes[node].stmt, Stmt::Return(_)) => {
                    self.withs_between(node, 0)
                }
                _ => continue,
            };
            for with in withs {
                *left.entry(with).or_default() += 1;
            }
        }
        self.shells.extend(
            left.into_iter()
                .filter(|&(_, count)| count > 1)
                .map(|(with, _)| with),
        );
        // A new shell can capture more of them: until nothing changes.
        let mut changed = true;
        while changed {
            changed = false;
            for (node, owner, withs) in &exits {
                if self.loops(*node).first() != Some(&LoopKey::Source(*owner)) {
                    for &with in withs {
                        changed |= self.shells.insert(with);
                    }
                }
            }
        }
    }

    /// The switch body a case marker belongs to (the innermost switch around it).
    fn case_switch_body(&self, node: NodeId) -> Option<ListId> {
        let mut at = node;
        loop {
            let list = self.nodes[at].list;
            if self.switch_bodies.contains_key(&list) {
                return Some(list);
            }
            at = self.lists[list].parent?;
        }
    }

    /// The loop of the source a `break` or `continue` acts on.
    fn owner_loop(&self, node: NodeId) -> Option<NodeId> {
        let mut at = node;
        loop {
            let list = self.nodes[at].list;
            let parent = self.lists[list].parent?;
            if self.lists[list].loop_body {
                return Some(parent);
            }
            at = parent;
        }
    }

    /// The statements of a jump from `node`; `value` is the register's value when it is not
    /// the target's own number (a computed goto's).
    fn jump(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        goal: Goal,
        value: Option<&str>,
    ) -> String {
        let k = &tr.names.k;
        let loops = self.loops(node);
        let (last, number, home) = match goal {
            Goal::Target(target) => {
                let (home, _, _) = self.home(node, self.targets[target].node);
                (self.dispatch_of(home), self.targets[target].id, Some(home))
            }
            Goal::Break(owner) | Goal::Continue(owner) | Goal::Return(owner, _) => {
                let next = -(self.pseudo.len() as i64) - 1;
                let number = *self.pseudo.entry(goal).or_insert(next);
                let key = match goal {
                    Goal::Return(with, _) => LoopKey::Shell(with),
                    _ => LoopKey::Source(owner),
                };
                (key, number, None)
            }
        };
        // A `return` leaves its shell too: the post-check after it returns.
        let depth = loops
            .iter()
            .position(|&key| key == last)
            .expect("the jump's loop is around it")
            + usize::from(matches!(goal, Goal::Return(..)));
        let starts = match goal {
            Goal::Target(target) => home.and_then(|home| self.region_start(home)) == Some(target),
            _ => false,
        };
        let shown = value.map_or_else(|| number.to_string(), str::to_owned);
        let finish = match goal {
            Goal::Return(_, true) => format!("return {}", tr.names.r),
            Goal::Return(_, false) => "return".to_owned(),
            Goal::Break(_) => format!("{k} = 0; break"),
            Goal::Continue(_) => format!("{k} = 0; continue"),
            Goal::Target(_) if starts => format!("{k} = 0; continue"),
            Goal::Target(_) => "continue".to_owned(),
        };
        if depth == 0 {
            return match goal {
                Goal::Return(..) => unreachable!("a return leaves its shell"),
                Goal::Break(_) => "break".to_owned(),
                Goal::Continue(_) => "continue".to_owned(),
                Goal::Target(_) if starts && value.is_none() => "continue".to_owned(),
                Goal::Target(_) => {
                    self.homed
                        .entry(home.expect("a home"))
                        .or_default()
                        .insert(number);
                    self.uses_k = true;
                    self.setters.push(self.nodes[node].range);
                    format!("{k} = {shown}; continue")
                }
            };
        }
        self.uses_k = true;
        for (index, &key) in loops[..depth].iter().enumerate() {
            let action = if index + 1 == depth {
                finish.clone()
            } else {
                "break".to_owned()
            };
            self.post.entry(key).or_default().insert(number, action);
        }
        if let Goal::Target(_) = goal
            && !starts
        {
            self.homed
                .entry(home.expect("a home"))
                .or_default()
                .insert(number);
        }
        self.setters.push(self.nodes[node].range);
        format!("{k} = {shown}; break")
    }

    fn computed(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        names: &[(String, usize)],
    ) -> Vec<Out> {
        let Names { v, t, .. } = &tr.names;
        let NodeKind::Computed(marker) = self.nodes[node].kind else {
            unreachable!()
        };
        let MarkerKind::ComputedGoto { target } = self.scope.marker(marker).kind else {
            unreachable!()
        };
        let line = tr.text.line(self.nodes[node].range.start());
        let keys: Vec<(String, i64)> = names
            .iter()
            .map(|(name, target)| (py_str(name), self.targets[*target].id))
            .collect();
        let plain: Vec<&str> = names.iter().map(|(name, _)| name.as_str()).collect();
        let message = format!(
            "{}%r{}",
            NO_SUCH_LABEL.replace('%', "%%"),
            no_such_label_text(&self.scope.qualname, &plain).replace('%', "%%")
        );
        let mut outs = vec![
            Out::line(line, format!("{v} = ({})", tr.text.slice(target))),
            Out::compound(0, format!("try: {t} = {}", search(v, &keys))),
            Out::compound(0, format!("except BaseException: {t} = 0")),
            Out::compound(
                0,
                format!(
                    "if not {t}: raise ValueError({} % ({v},))",
                    py_str(&message)
                ),
            ),
        ];
        // One jump per distinct way out; the register takes the computed number.
        let ways = names.iter().map(|&(_, target)| {
            let code = self.jump(tr, node, Goal::Target(target), Some(t));
            (self.targets[target].id, code)
        });
        let ways = grouped(ways.collect::<Vec<_>>());
        match ways.as_slice() {
            [(code, _)] => outs.push(Out::line(0, code.clone())),
            _ => outs.extend(branches(t, ways)),
        }
        outs
    }

    // ---------------------------------------------------------------- emission

    fn list_range(&self, list: ListId) -> Option<TextRange> {
        let items = &self.lists[list].items;
        Some(TextRange::new(
            self.nodes[*items.first()?].range.start(),
            self.nodes[*items.last()?].range.end(),
        ))
    }

    /// The entering targets inside `range`: targets are numbered in source order, so those
    /// that start in `range` have consecutive numbers, found by bisection (a list of
    /// thousands of statements asks this of each of them).
    fn inside(&self, range: Option<TextRange>, entering: &BTreeSet<i64>) -> BTreeSet<i64> {
        let Some(range) = range else {
            return BTreeSet::new();
        };
        let first = self
            .targets
            .partition_point(|target| target.range.start() < range.start());
        let end = self
            .targets
            .partition_point(|target| target.range.start() < range.end());
        let candidates = entering.range(first as i64 + 1..end as i64 + 1);
        crate::splice::count(1 + candidates.clone().count());
        candidates
            .copied()
            .filter(|&id| range.contains_range(self.targets[(id - 1) as usize].range))
            .collect()
    }

    fn is_special(&self, range: TextRange) -> bool {
        holds(&self.special, range)
    }

    /// A statement list: its dispatch loop if it is a home, guards when it is entered.
    /// `strict`: the register may also hold numbers past this list's (then even its last
    /// part is guarded). `from`: where comments before its first statement start.
    fn list(
        &mut self,
        tr: &Translator<'a>,
        list: ListId,
        entering: &BTreeSet<i64>,
        strict: bool,
        from: TextSize,
    ) -> Result<Vec<Out>, Diagnostic> {
        let items = self.lists[list].items.clone();
        let mut parts: Vec<Item> = items.iter().map(|&node| Item::Node(node)).collect();
        if let Some(&(a, b)) = self.regions.get(&list) {
            parts.splice(a..=b, [Item::Dispatch(list, a, b)]);
        }
        let mut outs = self.chain(tr, &parts, entering, strict)?;
        // Comments that stand alone before the first statement.
        if let Some(&first) = items.first() {
            let range = TextRange::new(
                from.min(self.nodes[first].range.start()),
                self.nodes[first].range.start(),
            );
            let mut comments: Vec<Out> = tr
                .text
                .comments(range)
                .into_iter()
                .map(|(line, c)| comment_out(line, c))
                .collect();
            comments.append(&mut outs);
            outs = comments;
        }
        Ok(outs)
    }

    fn item_range(&self, item: Item) -> TextRange {
        match item {
            Item::Node(node) => self.nodes[node].range,
            Item::Dispatch(list, a, b) => {
                let items = &self.lists[list].items;
                TextRange::new(
                    self.nodes[items[a]].range.start(),
                    self.nodes[items[b]].range.end(),
                )
            }
        }
    }

    fn item_line(&self, tr: &Translator<'a>, item: Item) -> usize {
        tr.text.line(self.item_range(item).start())
    }

    fn chain(
        &mut self,
        tr: &Translator<'a>,
        items: &[Item],
        entering: &BTreeSet<i64>,
        strict: bool,
    ) -> Result<Vec<Out>, Diagnostic> {
        let k = tr.names.k.clone();
        let none = BTreeSet::new();
        if entering.is_empty() {
            let mut body = Vec::new();
            for (index, &item) in items.iter().enumerate() {
                if index > 0
                    && let Item::Node(node) = item
                {
                    // Comments between statements.
                    let before = self.item_range(items[index - 1]).end();
                    let range = TextRange::new(before, self.nodes[node].range.start());
                    body.extend(
                        tr.text
                            .comments(range)
                            .into_iter()
                            .map(|(line, c)| comment_out(line, c)),
                    );
                }
                body.extend(self.item(tr, item, &none)?);
            }
            if strict && !items.is_empty() {
                self.uses_k = true;
                let line = self.item_line(tr, items[0]);
                return Ok(vec![Out::block(line, format!("if not {k}"), body)]);
            }
            return Ok(body);
        }
        let mut segments: Vec<(BTreeSet<i64>, Vec<Item>)> = Vec::new();
        for &item in items {
            let inside = self.inside(Some(self.item_range(item)), entering);
            if !inside.is_empty() || segments.is_empty() {
                segments.push((inside, vec![item]));
            } else {
                segments.last_mut().expect("a segment").1.push(item);
            }
        }
        let mut parts = Vec::with_capacity(segments.len());
        for (inside, members) in segments {
            let mut body = Vec::new();
            for (position, &item) in members.iter().enumerate() {
                body.extend(self.item(tr, item, if position == 0 { &inside } else { &none })?);
            }
            let line = self.item_line(tr, members[0]);
            parts.push(Part {
                line,
                last: inside.last().copied(),
                body,
            });
        }
        if parts.len() > 1 || strict {
            self.uses_k = true;
        }
        Ok(guarded(&k, parts, strict))
    }

    fn item(
        &mut self,
        tr: &Translator<'a>,
        item: Item,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        match item {
            Item::Node(node) => self.node(tr, node, entering),
            Item::Dispatch(list, a, b) => {
                let mut inner = entering.clone();
                inner.extend(self.homed.get(&list).cloned().unwrap_or_default());
                let members: Vec<Item> = self.lists[list].items[a..=b]
                    .iter()
                    .map(|&n| Item::Node(n))
                    .collect();
                let mut body = self.chain(tr, &members, &inner, false)?;
                // The loop ends where its last statement does not jump or leave.
                let last = &self.nodes[self.lists[list].items[b]];
                if !matches!(last.stmt, Stmt::Return(_) | Stmt::Raise(_))
                    && !matches!(last.kind, NodeKind::Goto(_))
                {
                    body.push(Out::line(0, "break"));
                }
                let line = self.item_line(tr, item);
                let mut outs = vec![Out::block(line, "while True", body)];
                outs.extend(self.post_check(tr, LoopKey::Dispatch(list)));
                Ok(outs)
            }
        }
    }

    fn post_check(&mut self, tr: &Translator<'a>, key: LoopKey) -> Vec<Out> {
        let Some(actions) = self.post.get(&key) else {
            return Vec::new();
        };
        let k = &tr.names.k;
        let groups = grouped(
            actions
                .iter()
                .map(|(&number, action)| (number, action.clone()))
                .collect(),
        );
        self.uses_k = true;
        match groups.as_slice() {
            [(action, _)] => vec![Out::compound(0, format!("if {k}: {action}"))],
            _ => vec![Out::block(0, format!("if {k}"), branches(k, groups))],
        }
    }

    fn verbatim(&self, tr: &Translator<'a>, node: NodeId) -> Out {
        let range = self.nodes[node].range;
        let simple = matches!(
            self.nodes[node].kind,
            NodeKind::Simple | NodeKind::Break | NodeKind::Continue
        );
        Out::Stmt {
            line: tr.text.line(range.start()),
            pieces: tr.text.pieces(range),
            kind: if simple { Kind::Simple } else { Kind::Compound },
        }
    }

    fn node(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        let kind = self.nodes[node].kind;
        let range = self.nodes[node].range;
        let line = tr.text.line(range.start());
        let k = tr.names.k.clone();
        if kind == NodeKind::MarkerImport {
            return Ok(Vec::new());
        }
        if entering.is_empty() && !self.is_special(range) && kind != NodeKind::TryInner {
            return Ok(vec![self.verbatim(tr, node)]);
        }
        let stmt = self.nodes[node].stmt;
        let lists = self.nodes[node].lists.clone();
        let mut outs = Vec::new();
        match kind {
            NodeKind::Label(target) | NodeKind::Case(target) => {
                if entering.contains(&self.targets[target].id) {
                    outs.push(Out::prefix(line, format!("{k} = 0")));
                }
            }
            NodeKind::Goto(_) | NodeKind::Computed(_) | NodeKind::Break | NodeKind::Continue => {
                match self.codes.get(&node) {
                    Some(code) => outs.extend(code.clone()),
                    None => outs.push(self.verbatim(tr, node)),
                }
            }
            NodeKind::Simple | NodeKind::MarkerImport => match self.codes.get(&node) {
                Some(code) => outs.extend(code.clone()),
                None => outs.push(self.verbatim(tr, node)),
            },
            NodeKind::If => {
                let Stmt::If(stmt) = stmt else { unreachable!() };
                let parts: Vec<BTreeSet<i64>> = lists
                    .iter()
                    .map(|&list| self.inside(self.list_range(list), entering))
                    .collect();
                let last_entered = parts.iter().rposition(|part| !part.is_empty());
                let mut tests: Vec<(Option<&ast::Expr>, TextSize, usize, &'a [Stmt])> =
                    vec![(Some(&stmt.test), stmt.start(), line, &stmt.body)];
                for clause in &stmt.elif_else_clauses {
                    tests.push((
                        clause.test.as_ref(),
                        clause.start(),
                        tr.text.line(clause.start()),
                        &clause.body,
                    ));
                }
                for (index, (test, start, at, body)) in tests.into_iter().enumerate() {
                    let word = match (index, test) {
                        (0, _) => "if",
                        (_, Some(_)) => "elif",
                        (_, None) => "else",
                    };
                    let header = match test {
                        None => "else".to_owned(),
                        Some(test) if last_entered.is_some_and(|last| index <= last) => {
                            let c = tr.text.slice(test.range());
                            if !parts[index].is_empty() {
                                if parts[index].len() == entering.len() {
                                    format!("{word} {k} or ({c})")
                                } else {
                                    format!(
                                        "{word} ({}) if {k} else ({c})",
                                        within(&k, &parts[index])
                                    )
                                }
                            } else {
                                format!("{word} not {k} and ({c})")
                            }
                        }
                        Some(_) => tr.text.header(start, body[0].start()),
                    };
                    let inner = self.list(tr, lists[index], &parts[index], false, start)?;
                    outs.push(Out::block(at, header, inner));
                }
            }
            NodeKind::While | NodeKind::For => {
                let orelse = self.inside(self.list_range(lists[1]), entering);
                let (header, entered, body, else_body) = match stmt {
                    Stmt::While(stmt) => {
                        let entered = self.inside(self.list_range(lists[0]), entering);
                        let c = tr.text.slice(stmt.test.range());
                        let header = if entering.is_empty() {
                            tr.text.header(stmt.start(), stmt.body[0].start())
                        } else if orelse.is_empty() {
                            format!("while {k} or ({c})")
                        } else if entered.is_empty() {
                            format!("while not {k} and ({c})")
                        } else {
                            format!("while ({}) if {k} else ({c})", within(&k, &entered))
                        };
                        (header, entered, &stmt.body, &stmt.orelse)
                    }
                    Stmt::For(stmt) => {
                        let header = if orelse.is_empty() {
                            tr.text.header(stmt.start(), stmt.body[0].start())
                        } else if stmt.is_async {
                            return Err(self.refuse(
                                range,
                                "a goto into the `else` clause of an `async for` cannot be \
                                 translated",
                                "move the label out of the `else` clause",
                            ));
                        } else {
                            format!(
                                "for {} in (() if {k} else ({}))",
                                tr.text.slice(stmt.target.range()),
                                tr.text.slice(stmt.iter.range())
                            )
                        };
                        // A `for` body is never entered (SPEC: no jump into it).
                        (header, BTreeSet::new(), &stmt.body, &stmt.orelse)
                    }
                    _ => unreachable!("a loop"),
                };
                let inner = self.list(tr, lists[0], &entered, false, stmt.start())?;
                outs.push(Out::block(line, header, inner));
                self.orelse(tr, else_body, body.last(), lists[1], &orelse, &mut outs)?;
                outs.extend(self.post_check(tr, LoopKey::Source(node)));
            }
            NodeKind::Try | NodeKind::TryInner => {
                let Stmt::Try(stmt) = stmt else {
                    unreachable!()
                };
                outs.extend(self.try_parts(tr, stmt, &lists, entering, kind == NodeKind::Try)?);
            }
            NodeKind::TryOuter => {
                let Stmt::Try(stmt) = stmt else {
                    unreachable!()
                };
                let inner_list = lists[0];
                let inner_node = self.lists[inner_list].items[0];
                let inside = self.inside(self.list_range(inner_list), entering);
                let nested = self.regions.contains_key(&inner_list);
                if nested {
                    let body = self.list(tr, inner_list, &inside, false, stmt.start())?;
                    outs.push(Out::block(line, "try", body));
                } else {
                    let inner_lists = self.nodes[inner_node].lists.clone();
                    outs.extend(self.try_parts(tr, stmt, &inner_lists, &inside, false)?);
                }
                outs.push(self.finally(tr, stmt, lists[1])?);
            }
            NodeKind::With => {
                let Stmt::With(stmt) = stmt else {
                    unreachable!()
                };
                let header = tr.text.header(stmt.start(), stmt.body[0].start());
                let mut inner = self.list(tr, lists[0], &BTreeSet::new(), false, stmt.start())?;
                if self.shells.contains(&node) {
                    // The register goes on past the statement only when its body ended
                    // through the loop's end: not when `__exit__` swallowed an exception
                    // raised mid-jump.
                    let w = &tr.names.w;
                    inner.push(Out::line(0, "break"));
                    outs.push(Out::prefix(0, format!("{w} = 0")));
                    let shell = vec![
                        Out::block(0, "while True", inner),
                        Out::line(0, format!("{w} = {k}")),
                    ];
                    outs.push(Out::block(line, header, shell));
                    outs.push(Out::prefix(0, format!("{k} = {w}")));
                    outs.extend(self.post_check(tr, LoopKey::Shell(node)));
                } else {
                    outs.push(Out::block(line, header, inner));
                    if self.sets_inside(range) {
                        outs.push(Out::prefix(0, format!("{k} = 0")));
                    }
                }
            }
            NodeKind::Match => {
                let Stmt::Match(stmt) = stmt else {
                    unreachable!()
                };
                let parts: Vec<BTreeSet<i64>> = lists
                    .iter()
                    .map(|&list| self.inside(self.list_range(list), entering))
                    .collect();
                let mut matched = Vec::new();
                for (index, case) in stmt.cases.iter().enumerate() {
                    let header = tr.text.header(case.start(), case.body[0].start());
                    let inner =
                        self.list(tr, lists[index], &BTreeSet::new(), false, case.start())?;
                    matched.push(Out::block(tr.text.line(case.start()), header, inner));
                }
                let header = tr.text.header(stmt.start(), stmt.cases[0].start());
                let plain = Out::block(line, header, matched);
                if entering.is_empty() {
                    outs.push(plain);
                } else {
                    // Entering a case body runs that body without its pattern: the entered
                    // bodies once more, reached only with the register set.
                    self.uses_k = true;
                    outs.push(Out::block(line, format!("if not {k}"), vec![plain]));
                    let entered: Vec<usize> =
                        (0..parts.len()).filter(|&i| !parts[i].is_empty()).collect();
                    for (position, &index) in entered.iter().enumerate() {
                        let case = &stmt.cases[index];
                        let inner =
                            self.list(tr, lists[index], &parts[index], false, case.start())?;
                        let at = tr.text.line(case.start());
                        let hi = parts[index].last().expect("entered");
                        outs.push(if position + 1 == entered.len() {
                            Out::block(at, "else", inner)
                        } else {
                            Out::block(at, format!("elif {k} <= {hi}"), inner)
                        });
                    }
                }
            }
            NodeKind::Switch(id) => outs.extend(self.switch(tr, node, id, entering)?),
            NodeKind::Def | NodeKind::Class => outs.extend(self.definition(tr, node)?),
        }
        Ok(outs)
    }

    fn refuse(&self, range: TextRange, message: &str, help: &str) -> Diagnostic {
        Diagnostic::new(Code::CannotRewrite, range, message).help(help)
    }

    /// Whether a jump that sets the register starts inside `range`.
    fn sets_inside(&self, range: TextRange) -> bool {
        holds(&self.setters, range)
    }

    fn orelse(
        &mut self,
        tr: &Translator<'a>,
        orelse: &'a [Stmt],
        body_last: Option<&'a Stmt>,
        list: ListId,
        entering: &BTreeSet<i64>,
        outs: &mut Vec<Out>,
    ) -> Result<(), Diagnostic> {
        let Some(first) = orelse.first() else {
            return Ok(());
        };
        let line = tr.text.keyword_line(first.start(), TokenKind::Else);
        let from = body_last.map_or(first.start(), Ranged::end);
        let inner = self.list(tr, list, entering, false, from)?;
        outs.push(Out::block(line, "else", inner));
        Ok(())
    }

    /// A `try` statement's parts: its body, handlers and `else` (and its `finally` when
    /// `with_finally`).
    fn try_parts(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a ast::StmtTry,
        lists: &[ListId],
        entering: &BTreeSet<i64>,
        with_finally: bool,
    ) -> Result<Vec<Out>, Diagnostic> {
        let k = tr.names.k.clone();
        let line = tr.text.line(stmt.start());
        let handlers = stmt.handlers.len();
        let body_in = self.inside(self.list_range(lists[0]), entering);
        let else_in = self.inside(self.list_range(lists[1 + handlers]), entering);
        let mut outs = Vec::new();
        let body = self.list(tr, lists[0], &body_in, !else_in.is_empty(), stmt.start())?;
        outs.push(Out::block(line, "try", body));
        let body_range = self.list_range(lists[0]);
        let resets = body_range.is_some_and(|range| self.sets_inside(range)) && self.uses_k;
        for (index, handler) in stmt.handlers.iter().enumerate() {
            let ExceptHandler::ExceptHandler(handler) = handler;
            let header = tr.text.header(handler.start(), handler.body[0].start());
            let mut inner = self.list(
                tr,
                lists[1 + index],
                &BTreeSet::new(),
                false,
                handler.start(),
            )?;
            if resets {
                // An exception raised while a jump was on its way (by a `finally` or an
                // `__exit__`) ends the jump: the register must not stay set.
                inner.insert(0, Out::prefix(0, format!("{k} = 0")));
            }
            outs.push(Out::block(tr.text.line(handler.start()), header, inner));
        }
        self.orelse(
            tr,
            &stmt.orelse,
            None,
            lists[1 + handlers],
            &else_in,
            &mut outs,
        )?;
        if with_finally && !stmt.finalbody.is_empty() {
            outs.push(self.finally(tr, stmt, lists[2 + handlers])?);
        }
        Ok(outs)
    }

    /// A `finally` body. One that reads the register runs with it cleared and gives it back
    /// at its end, so that a jump passing through (which set it) goes on afterwards.
    fn finally(
        &mut self,
        tr: &Translator<'a>,
        stmt: &'a ast::StmtTry,
        list: ListId,
    ) -> Result<Out, Diagnostic> {
        let k = tr.names.k.clone();
        let first = stmt.finalbody[0].start();
        let line = tr.text.keyword_line(first, TokenKind::Finally);
        let mut inner = self.list(tr, list, &BTreeSet::new(), false, first)?;
        let final_range = self.list_range(list).expect("a finally body");
        let try_range = TextRange::new(stmt.start(), final_range.start());
        if self.is_special(final_range) && self.sets_inside(try_range) {
            let count = tr.saves.get() + 1;
            tr.saves.set(count);
            let saved = format!("{}{count}", tr.names.f);
            inner.insert(0, Out::prefix(0, format!("{saved} = {k}; {k} = 0")));
            inner.push(Out::line(0, format!("{k} = {saved}")));
            self.uses_k = true;
        }
        Ok(Out::block(line, "finally", inner))
    }

    fn switch(
        &mut self,
        tr: &Translator<'a>,
        node: NodeId,
        id: SwitchId,
        entering: &BTreeSet<i64>,
    ) -> Result<Vec<Out>, Diagnostic> {
        let Names { k, v, .. } = &tr.names;
        let line = tr.text.line(self.nodes[node].range.start());
        let switch = self.scope.switch(id);
        let body = self.nodes[node].lists[0];
        // The case values in Python's order, each with its case's number.
        let mut keys = Vec::new();
        for (key, marker) in switch_cases(self.scope, id) {
            let MarkerKind::Case { values, .. } = &self.scope.marker(marker).kind else {
                continue;
            };
            let Some(value) = values.iter().find(|value| &value.value == key) else {
                continue;
            };
            let start = self.scope.marker(marker).range.start();
            let Some(target) = self.target_at(start) else {
                continue;
            };
            keys.push((
                format!("({})", tr.text.slice(value.range)),
                self.targets[target].id,
            ));
        }
        let head = vec![
            Out::line(line, format!("{v} = ({})", tr.text.slice(switch.subject))),
            Out::compound(0, format!("try: {k} = {}", search(v, &keys))),
            Out::compound(0, format!("except BaseException: {k} = 0")),
        ];
        self.uses_k = true;
        let mut outs = Vec::new();
        let inner_entering = self.inside(self.list_range(body), entering);
        if inner_entering.is_empty() {
            outs.extend(head);
        } else {
            outs.push(Out::block(line, format!("if not {k}"), head));
        }
        let mut all = inner_entering;
        all.extend(self.homed.get(&body).cloned().unwrap_or_default());
        let items: Vec<Item> = self.lists[body]
            .items
            .iter()
            .map(|&n| Item::Node(n))
            .collect();
        let mut looped = self.chain(tr, &items, &all, false)?;
        looped.push(Out::line(0, "break"));
        let mut inner = vec![Out::block(0, "while True", looped)];
        inner.extend(self.post_check(tr, LoopKey::Source(node)));
        outs.push(Out::block(0, format!("if {k}"), inner));
        Ok(outs)
    }

    /// A nested `def` or `class`: its decorators (gotopy's dropped when it is rewritten),
    /// its header, and its body translated as a scope of its own.
    fn definition(&mut self, tr: &Translator<'a>, node: NodeId) -> Result<Vec<Out>, Diagnostic> {
        let stmt = self.nodes[node].stmt;
        let (decorators, name, body, keywords): (
            &[ast::Decorator],
            TextRange,
            &'a [Stmt],
            &[TokenKind],
        ) = match stmt {
            Stmt::FunctionDef(def) => (
                &def.decorator_list,
                def.name.range,
                &def.body,
                &[TokenKind::Def, TokenKind::Async],
            ),
            Stmt::ClassDef(class) => (
                &class.decorator_list,
                class.name.range,
                &class.body,
                &[TokenKind::Class],
            ),
            _ => unreachable!("a definition"),
        };
        let Some(scope) = tr.scope_of(name) else {
            return Ok(vec![self.verbatim(tr, node)]);
        };
        let mut outs = Vec::new();
        let mut free_line = None;
        for (index, decorator) in decorators.iter().enumerate() {
            let at = tr.text.line(decorator.start());
            if scope.rewritten && scan::is_goto_decorator(&decorator.expression) {
                if index == 0 || free_line.is_some() {
                    free_line = free_line.or(Some(at));
                }
                continue;
            }
            let text = tr.text.slice(decorator.range());
            let text = if text.starts_with('@') {
                text.to_owned()
            } else {
                format!("@{text}")
            };
            outs.push(Out::line(free_line.take().unwrap_or(at), text));
        }
        let after = decorators.last().map_or(stmt.start(), Ranged::end);
        let keyword = tr.text.token_after(after, keywords).unwrap_or(stmt.start());
        let header = tr.text.header(keyword, body[0].start());
        let line = free_line.unwrap_or_else(|| tr.text.line(keyword));
        let inner = tr.scope_body(scope, body, keyword)?;
        outs.push(Out::block(line, header, inner));
        Ok(outs)
    }
}

#[derive(Clone, Copy, Debug)]
enum Item {
    Node(NodeId),
    /// The dispatch loop of a list over its statements `a..=b`.
    Dispatch(ListId, usize, usize),
}
