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
mod emit;
mod text;
mod tree;

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

#[derive(Clone, Copy, Debug)]
enum Item {
    Node(NodeId),
    /// The dispatch loop of a list over its statements `a..=b`.
    Dispatch(ListId, usize, usize),
}
