//! Preparing the syntax tree before RustPython compiles it: guards that keep reachable the
//! labels (and cases), the end of every `with` body of a rewritten scope that may end
//! abruptly, and the code after each `try` statement a goto leaves; trampolines for gotos
//! that leave `try` statements with a `finally` clause; and switches, computed gotos and
//! cases turned into marker-shaped statements the rewrite finds again by source range.

use std::collections::{HashMap, HashSet};

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::{self, Expr, ExprContext, ModModule, Stmt};

use crate::front::scan::{
    FrameId, FrameKind, MarkerId, MarkerKind, Module, ScopeId, SwitchId, truth,
};

/// What preparing the AST added, for the rewrite to find again by source range.
#[derive(Default)]
pub(crate) struct Prepared {
    /// The test of every guard: those that keep a label reachable, and those around the
    /// `with` bodies that may end abruptly.
    pub(crate) guards: Vec<TextRange>,
    /// The guards among them whose test is `not label`: a false literal test, whose code a
    /// goto enters ([`guard_constant_tests`]).
    pub(crate) negated: Vec<TextRange>,
    /// Every trampoline, by the source range its instructions carry.
    pub(crate) trampolines: Vec<(TextRange, Trampoline)>,
    /// The marker after each `while switch` statement, where its default starts.
    pub(crate) switch_ends: Vec<(TextRange, ScopeId, SwitchId)>,
}

/// The statements `prepare` turns into dispatch points, by where they start.
#[derive(Default)]
struct Dispatches {
    switches: HashMap<TextSize, (ScopeId, SwitchId)>,
    /// `goto *expr` and `case[...]` statements.
    markers: std::collections::HashSet<TextSize>,
}

/// A copy of a `finally` body, placed right after its `try` statement, for one goto that
/// leaves that `try`. The goto jumps there, outside the protected range, so the copy runs as
/// the code generator's own copies for `return` and `break` do: an exception, `return`,
/// `break` or `continue` in it goes where it would after the `try` statement. After the copy
/// the goto carries on from the `try` statement's level.
///
/// It is compiled as `if label: <finally body>; goto .name`, every added node spanning the
/// range from the goto to the end of the `try` statement (unique for the pair). The rewrite
/// turns the test into a jump over the copy, so ordinary control flow never enters it, and
/// lowers the trailing goto like any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Trampoline {
    pub(crate) scope: ScopeId,
    pub(crate) goto: MarkerId,
    /// The `try` statement's frame.
    pub(crate) frame: FrameId,
}

/// The code generator a prepared tree is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generator {
    /// RustPython's, which compiles the prepared tree: a computed goto becomes its value and
    /// a marker, as a switch does.
    RustPython,
    /// CPython's, for which the tree is prepared only for its record (`Prepared`): CPython
    /// compiles `goto *expr` as it is written, and gotopy lowers that code, so computed
    /// gotos are left alone.
    CPython,
}

/// Adds the guards (for labels, `with` bodies that may end abruptly and the ends of `try`
/// statements gotos leave) and the trampolines of gotos that leave `try` statements with a
/// `finally` clause.
pub(crate) fn prepare(
    ast: &mut ModModule,
    module: &Module,
    rewritten: &[ScopeId],
    generator: Generator,
) -> Prepared {
    // Where the labels and cases of each scope stand, sorted, by the start of its name (the
    // module's at 0): a statement that ends before the last has a label after it.
    let mut targets: HashMap<TextSize, Vec<TextSize>> = HashMap::new();
    // Gotos leaving each `try` statement, by the statement's start.
    let mut leaving: HashMap<TextSize, Vec<Trampoline>> = HashMap::new();
    let mut dispatches = Dispatches::default();
    for &id in rewritten {
        let scope = &module.scopes[id.0];
        for marker in &scope.markers {
            match marker.kind {
                MarkerKind::Switch(switch) => {
                    dispatches
                        .switches
                        .insert(marker.range.start(), (id, switch));
                }
                MarkerKind::ComputedGoto { .. } if generator == Generator::RustPython => {
                    dispatches.markers.insert(marker.range.start());
                }
                MarkerKind::Case { .. } => {
                    dispatches.markers.insert(marker.range.start());
                }
                _ => {}
            }
        }
        // Cases are jump targets too. Markers are in source order.
        let starts: Vec<TextSize> = (scope.markers.iter())
            .filter(|m| matches!(m.kind, MarkerKind::Label { .. } | MarkerKind::Case { .. }))
            .map(|m| m.range.start())
            .collect();
        if !starts.is_empty() {
            targets.insert(scope.name_range.start(), starts);
        }
        for (index, marker) in scope.markers.iter().enumerate() {
            // A goto outside every frame leaves none (most gotos of generated code).
            let (MarkerKind::Goto { name, .. }, Some(from)) = (&marker.kind, marker.frame) else {
                continue;
            };
            for frame in scope.frames_left(Some(from), name).unwrap_or_default() {
                if scope.frame(frame).kind == FrameKind::TryFinally {
                    let trampoline = Trampoline {
                        scope: id,
                        goto: MarkerId(index),
                        frame,
                    };
                    let at = scope.frame(frame).header.start();
                    leaving.entry(at).or_default().push(trampoline);
                }
            }
        }
    }
    // A trampoline is placed after its `try` statement, where the code generator removes it
    // as unreachable when the statement never finishes normally (its body ends in `raise`,
    // say). Guarding as if a label stood where the statement ends keeps it.
    let mut ends = HashMap::new();
    try_ends(&mut ast.body, &leaving, &mut ends);
    for (start, trampolines) in &leaving {
        for trampoline in trampolines {
            let scope = &module.scopes[trampoline.scope.0];
            if let Some(&end) = ends.get(start) {
                let starts = targets.entry(scope.name_range.start()).or_default();
                if let Err(at) = starts.binary_search(&end) {
                    starts.insert(at, end);
                }
            }
        }
    }
    let mut prepared = Prepared::default();
    guard_body(
        &mut ast.body,
        targets.get(&TextSize::default()).map_or(&[], Vec::as_slice),
        &targets,
        &mut prepared,
    );
    if !dispatches.switches.is_empty() || !dispatches.markers.is_empty() {
        expand_dispatches(&mut ast.body, &dispatches, &mut prepared);
    }
    if !leaving.is_empty() {
        add_trampolines(&mut ast.body, module, &leaving, &mut prepared.trampolines);
    }
    let rewritten_scopes: HashSet<TextSize> = rewritten
        .iter()
        .map(|id| module.scopes[id.0].name_range.start())
        .collect();
    let module_rewritten = rewritten_scopes.contains(&TextSize::default());
    guard_with_bodies(
        &mut ast.body,
        module_rewritten,
        &rewritten_scopes,
        &mut prepared.guards,
    );
    prepared
}

/// Where each `try` statement that starts at a key of `leaving` ends.
fn try_ends(
    body: &mut [Stmt],
    leaving: &HashMap<TextSize, Vec<Trampoline>>,
    ends: &mut HashMap<TextSize, TextSize>,
) {
    for stmt in body.iter_mut() {
        if let Stmt::Try(statement) = stmt
            && leaving.contains_key(&statement.range.start())
        {
            ends.insert(statement.range.start(), statement.range.end());
        }
        for inner in child_bodies(stmt) {
            try_ends(inner, leaving, ends);
        }
    }
}

/// Compiles the body of every `with` statement of a rewritten scope that may end without
/// finishing normally ([`may_end_abruptly`]) as `if label: <body>` (`rewritten`: whether
/// `body` is in one; `scopes`: where each rewritten scope's name starts). When nothing
/// reaches the end of the body, RustPython's and CPython's code generators leave out the
/// statement's normal exit, which a goto leaving the `with` copies, and RustPython 0.5 covers
/// the code after the statement with the `with`'s own cleanup handler (inserted instructions
/// fail the verifier there, and an exception raised there crashes its VM or calls `__exit__`
/// again). Behind the guard the end is reachable, so both compile as for any `with`; the
/// rewrite deletes the test, so the body runs as written and the exit stays where nothing
/// reaches it.
fn guard_with_bodies(
    body: &mut [Stmt],
    rewritten: bool,
    scopes: &HashSet<TextSize>,
    guards: &mut Vec<TextRange>,
) {
    for stmt in body.iter_mut() {
        let inner_rewritten = match stmt {
            Stmt::FunctionDef(def) => scopes.contains(&def.name.range.start()),
            Stmt::ClassDef(class) => scopes.contains(&class.name.range.start()),
            _ => rewritten,
        };
        for inner in child_bodies(stmt) {
            guard_with_bodies(inner, inner_rewritten, scopes, guards);
        }
        if let Stmt::With(with) = stmt
            && rewritten
            && may_end_abruptly(&mut with.body)
        {
            let inner = std::mem::take(&mut with.body);
            with.body = vec![guarded(with.range, inner)];
            guards.push(with.range);
        }
    }
}

/// Whether the code generator may find the end of `body` unreachable: it holds a `return`,
/// `raise`, `break`, `continue` or a `while` on a true constant ([`always_true`]) anywhere
/// outside nested scopes (what follows one is dead even when it is not last). Erring towards
/// yes costs only a guard.
fn may_end_abruptly(body: &mut [Stmt]) -> bool {
    body.iter_mut().any(|stmt| match stmt {
        Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_) => true,
        Stmt::While(stmt) if always_true(&stmt.test) => true,
        Stmt::Assert(stmt) if always_fails(stmt) => true,
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => false,
        _ => child_bodies(stmt)
            .into_iter()
            .any(|inner| may_end_abruptly(inner)),
    })
}

/// Prepares switches, computed gotos and cases, so that each is found in the bytecode as a
/// marker-shaped statement:
/// - `while switch *subject: body` becomes `while label: subject; switch.switch; body; break`
///   followed by `switch.switch` spanning the whole statement. The guard keeps the loop
///   (so `break` leaves the switch) and is deleted by the rewrite; the value of the
///   expression statement `subject` is left on the stack for the dispatch that replaces the
///   first marker; the second marks where the default (the code after the switch) starts.
/// - `goto *expr` becomes `expr; goto.goto`, the dispatch taking the value likewise.
/// - `case[...]` becomes `case.case`, replaced by a label.
fn expand_dispatches(body: &mut Vec<Stmt>, dispatches: &Dispatches, prepared: &mut Prepared) {
    // The list is built again once: inserting into it in place moved the rest of it for
    // each switch and computed goto (thousands of them in one function).
    let mut out = Vec::with_capacity(body.len());
    for mut stmt in std::mem::take(body) {
        for inner in child_bodies(&mut stmt) {
            expand_dispatches(inner, dispatches, prepared);
        }
        let start = stmt.range().start();
        if let Stmt::While(switch_stmt) = &mut stmt
            && let Some(&(scope, switch)) = dispatches.switches.get(&start)
            && let Expr::BinOp(test) = &*switch_stmt.test
        {
            let subject = (*test.right).clone();
            let header = TextRange::new(start, switch_stmt.test.end());
            *switch_stmt.test = guard_test(header);
            prepared.guards.push(header);
            let last = switch_stmt.body.last().map_or(header, Ranged::range);
            let dispatch = TextRange::new(start, subject.start());
            let mut inner = vec![
                expression_statement(subject),
                marker_statement("switch", "switch", dispatch),
            ];
            inner.append(&mut switch_stmt.body);
            inner.push(Stmt::Break(ast::StmtBreak {
                node_index: Default::default(),
                range: last,
            }));
            switch_stmt.body = inner;
            let end = switch_stmt.range;
            prepared.switch_ends.push((end, scope, switch));
            out.push(stmt);
            out.push(marker_statement("switch", "switch", end));
            continue;
        }
        if let Stmt::Expr(expr_stmt) = &stmt
            && dispatches.markers.contains(&start)
        {
            if let Expr::BinOp(computed) = &*expr_stmt.value {
                let target = (*computed.right).clone();
                let name = TextRange::at(start, TextSize::of("goto"));
                out.push(expression_statement(target));
                out.push(marker_statement("goto", "goto", name));
            } else {
                out.push(marker_statement(
                    "case",
                    "case",
                    TextRange::at(start, TextSize::of("case")),
                ));
            }
            continue;
        }
        out.push(stmt);
    }
    *body = out;
}

/// `value` as a statement whose value the code generator computes and pops, even for a
/// literal (which it would skip): a literal `L` is written `L or L`.
fn expression_statement(value: Expr) -> Stmt {
    let literal = matches!(
        value,
        Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
            | Expr::FString(_)
    );
    let value = if literal {
        Expr::BoolOp(ast::ExprBoolOp {
            node_index: Default::default(),
            range: value.range(),
            op: ast::BoolOp::Or,
            values: vec![value.clone(), value],
        })
    } else {
        value
    };
    Stmt::Expr(ast::StmtExpr {
        node_index: Default::default(),
        range: value.range(),
        value: Box::new(value),
    })
}

/// Guards the statements of one scope's `body` (not of nested scopes, which get their own
/// label lists) after which a label of that scope follows: one that ends before the last of
/// `targets`, the scope's labels and cases in source order (the end of a `try` statement a
/// trampoline follows counts as one); and the literal tests whose code holds a label
/// ([`guard_constant_tests`]). `scopes`: the targets of each scope, by the start of its name.
fn guard_body(
    body: &mut [Stmt],
    targets: &[TextSize],
    scopes: &HashMap<TextSize, Vec<TextSize>>,
    prepared: &mut Prepared,
) {
    let label_after = |range: TextRange| targets.last().is_some_and(|&at| at >= range.end());
    for stmt in body.iter_mut() {
        match stmt {
            Stmt::FunctionDef(def) => {
                let inner = scopes
                    .get(&def.name.range.start())
                    .map_or(&[][..], Vec::as_slice);
                guard_body(&mut def.body, inner, scopes, prepared);
            }
            Stmt::ClassDef(class) => {
                let inner = scopes
                    .get(&class.name.range.start())
                    .map_or(&[][..], Vec::as_slice);
                guard_body(&mut class.body, inner, scopes, prepared);
            }
            Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_) => {
                guard_statement(stmt, label_after(stmt.range()), &mut prepared.guards);
            }
            Stmt::Assert(assert) if always_fails(assert) => {
                guard_statement(stmt, label_after(stmt.range()), &mut prepared.guards);
            }
            Stmt::While(stmt) if always_true(&stmt.test) && label_after(stmt.range) => {
                let range = stmt.test.range();
                *stmt.test = guard_test(range);
                prepared.guards.push(range);
                guard_body(&mut stmt.body, targets, scopes, prepared);
                guard_body(&mut stmt.orelse, targets, scopes, prepared);
            }
            _ => {
                guard_constant_tests(stmt, targets, prepared);
                for inner in child_bodies(stmt) {
                    guard_body(inner, targets, scopes, prepared);
                }
            }
        }
    }
}

/// Keeps the code under the literal tests of `stmt` (an `if`, its `elif`s, a `while`) that a
/// goto enters: both code generators drop the body of `if False:` or `while 0:`, and the
/// clauses after `if True:` or the `else` of `while True:`, labels and all ([`truth`]). Such
/// a test becomes `not label` (false) or `label` (true), which the rewrite turns into a
/// jump over that code or into nothing: ordinary flow goes where the literal sent it, and a
/// goto finds the code compiled. `targets`: the scope's labels and cases, sorted.
fn guard_constant_tests(stmt: &mut Stmt, targets: &[TextSize], prepared: &mut Prepared) {
    let holds_target = |range: TextRange| {
        let first = targets.partition_point(|&at| at < range.start());
        targets.get(first).is_some_and(|&at| at < range.end())
    };
    let mut guard = |test: &mut Expr, value: bool| {
        let range = test.range();
        *test = if value {
            guard_test(range)
        } else {
            Expr::UnaryOp(ast::ExprUnaryOp {
                node_index: Default::default(),
                range,
                op: ast::UnaryOp::Not,
                operand: Box::new(guard_test(range)),
            })
        };
        prepared.guards.push(range);
        if !value {
            prepared.negated.push(range);
        }
    };
    match stmt {
        Stmt::If(stmt) => {
            let end = stmt.range.end();
            let tests = std::iter::once((Some(&mut *stmt.test), &stmt.body))
                .chain((stmt.elif_else_clauses.iter_mut()).map(|c| (c.test.as_mut(), &c.body)));
            for (test, body) in tests {
                let (Some(test), Some(last)) = (test, body.last()) else {
                    continue;
                };
                let skipped = match truth(test) {
                    Some(false) => TextRange::new(body[0].start(), last.end()),
                    Some(true) => TextRange::new(last.end(), end),
                    None => continue,
                };
                if holds_target(skipped) {
                    let value = truth(test) == Some(true);
                    guard(test, value);
                }
            }
        }
        Stmt::While(stmt) => {
            let skipped = match (truth(&stmt.test), stmt.body.last(), stmt.orelse.last()) {
                (Some(false), Some(last), _) => TextRange::new(stmt.body[0].start(), last.end()),
                (Some(true), _, Some(last)) => TextRange::new(stmt.orelse[0].start(), last.end()),
                _ => return,
            };
            if holds_target(skipped) {
                let value = truth(&stmt.test) == Some(true);
                guard(&mut stmt.test, value);
            }
        }
        _ => {}
    }
}

/// Compiles `stmt` (a `return`, `raise`, `break`, `continue`, or an `assert` that always
/// fails) as `if label: <stmt>` when a label follows it, so that the code generator keeps
/// what comes after.
fn guard_statement(stmt: &mut Stmt, label_after: bool, guards: &mut Vec<TextRange>) {
    if !label_after {
        return;
    }
    let range = stmt.range();
    let inner = std::mem::replace(
        stmt,
        Stmt::Pass(ast::StmtPass {
            node_index: Default::default(),
            range,
        }),
    );
    *stmt = guarded(range, vec![inner]);
    guards.push(range);
}

/// Whether an `assert` always raises: its test is a constant that is false (`assert False`,
/// `assert 0, "unreachable"`). Both code generators drop what follows one, as after `raise`.
fn always_fails(stmt: &ast::StmtAssert) -> bool {
    truth(&stmt.test) == Some(false)
}

/// Inserts a trampoline after each `try` statement that gotos leave, in every scope. The
/// list is built again once, as in [`expand_dispatches`].
fn add_trampolines(
    body: &mut Vec<Stmt>,
    module: &Module,
    leaving: &HashMap<TextSize, Vec<Trampoline>>,
    added: &mut Vec<(TextRange, Trampoline)>,
) {
    let mut out = Vec::with_capacity(body.len());
    for mut stmt in std::mem::take(body) {
        for inner in child_bodies(&mut stmt) {
            add_trampolines(inner, module, leaving, added);
        }
        let mut copies = Vec::new();
        if let Stmt::Try(try_stmt) = &stmt
            && let Some(gotos) = leaving.get(&try_stmt.range.start())
        {
            for &trampoline in gotos {
                let scope = &module.scopes[trampoline.scope.0];
                let goto = scope.marker(trampoline.goto);
                let MarkerKind::Goto { name, .. } = &goto.kind else {
                    unreachable!("trampolines are made for gotos")
                };
                let range = TextRange::new(goto.range.start(), try_stmt.range.end());
                let mut copy = try_stmt.finalbody.clone();
                copy.push(goto_statement(range, name));
                copies.push(guarded(range, copy));
                added.push((range, trampoline));
            }
        }
        out.push(stmt);
        out.append(&mut copies);
    }
    *body = out;
}

/// The statement lists directly inside a statement, nested scopes included.
fn child_bodies(stmt: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match stmt {
        Stmt::FunctionDef(def) => vec![&mut def.body],
        Stmt::ClassDef(class) => vec![&mut class.body],
        Stmt::While(stmt) => vec![&mut stmt.body, &mut stmt.orelse],
        Stmt::For(stmt) => vec![&mut stmt.body, &mut stmt.orelse],
        Stmt::With(stmt) => vec![&mut stmt.body],
        Stmt::If(stmt) => std::iter::once(&mut stmt.body)
            .chain(stmt.elif_else_clauses.iter_mut().map(|c| &mut c.body))
            .collect(),
        Stmt::Try(stmt) => {
            let mut bodies = vec![&mut stmt.body];
            for handler in &mut stmt.handlers {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                bodies.push(&mut handler.body);
            }
            bodies.push(&mut stmt.orelse);
            bodies.push(&mut stmt.finalbody);
            bodies
        }
        Stmt::Match(stmt) => stmt.cases.iter_mut().map(|c| &mut c.body).collect(),
        _ => Vec::new(),
    }
}

/// `if label: <body>`, the test and the statement spanning `range`.
fn guarded(range: TextRange, body: Vec<Stmt>) -> Stmt {
    Stmt::If(ast::StmtIf {
        node_index: Default::default(),
        range,
        test: Box::new(guard_test(range)),
        body,
        elif_else_clauses: Vec::new(),
    })
}

/// `goto .name`, every node spanning `range`.
fn goto_statement(range: TextRange, name: &str) -> Stmt {
    marker_statement("goto", name, range)
}

/// `keyword.attribute` as a statement, every node spanning `range`: a marker's shape.
fn marker_statement(keyword: &'static str, name: &str, range: TextRange) -> Stmt {
    let goto = Expr::Name(ast::ExprName {
        node_index: Default::default(),
        range,
        id: ast::name::Name::new_static(keyword),
        ctx: ExprContext::Load,
    });
    Stmt::Expr(ast::StmtExpr {
        node_index: Default::default(),
        range,
        value: Box::new(Expr::Attribute(ast::ExprAttribute {
            node_index: Default::default(),
            range,
            value: Box::new(goto),
            attr: ast::Identifier::new(name, range),
            ctx: ExprContext::Load,
        })),
    })
}

/// The name `label`, loaded, spanning `range`.
fn guard_test(range: TextRange) -> Expr {
    Expr::Name(ast::ExprName {
        node_index: Default::default(),
        range,
        id: ast::name::Name::new_static("label"),
        ctx: ExprContext::Load,
    })
}

/// Whether `test` is a constant that is true: a `while` with such a test never ends but by a
/// jump, and both code generators drop what follows it (RustPython's and CPython's fold
/// literals; CPython also folds `not`, signs and tuples of constants, in its syntax tree or
/// in its flow graph). Only tests without any effect are taken, so that the rewrite may
/// replace one with an unconditional loop.
fn always_true(test: &Expr) -> bool {
    truth(test) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::{Generator, prepare};
    use crate::plan::checked;
    use crate::{Options, Source};

    /// What CPython's plan records of `prepare` (guards, trampolines, the ends of switches)
    /// is what RustPython's preparation records, though only RustPython's expands the
    /// computed gotos: computed gotos in a `finally` body a trampoline copies, in a `with`
    /// body that ends abruptly, in a switch's case, and beside a label after a `return`.
    #[test]
    fn cpythons_record_is_rustpythons() {
        let text = "\
@goto
def f(n, names):
    label .top
    try:
        n -= 1
        if n < 0:
            goto .out
    finally:
        if names:
            goto *names.pop()
    with open(__file__) as handle:
        if n > 5:
            return n
        goto *('top' if n else 'out')
    while switch *n:
        case[1]
        n += 1
        case[2]
        goto *names.pop()
    return n
    label .out
    return -n
";
        let source = Source::new("t.py", text);
        let record = |generator| {
            let checked = checked(&source, Options::new()).expect("the module checks");
            let mut ast = checked.parsed.into_syntax();
            let prepared = prepare(&mut ast, &checked.module, &checked.rewritten, generator);
            (prepared.guards, prepared.trampolines, prepared.switch_ends)
        };
        let rustpython = record(Generator::RustPython);
        assert!(
            !rustpython.0.is_empty() && !rustpython.1.is_empty() && !rustpython.2.is_empty(),
            "the module has guards, trampolines and a switch"
        );
        assert_eq!(record(Generator::CPython), rustpython);
    }
}
