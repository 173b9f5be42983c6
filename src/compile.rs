//! Compiling a module with goto: check it, prepare its AST so that every label survives
//! RustPython's dead-code pass, compile it once with RustPython's code generator, then turn
//! each marker of every rewritten scope into real control flow in that scope's code object.
//!
//! Markers compile, as ordinary Python, to `LOAD name; LOAD_ATTR x; POP_TOP` with the
//! marker statement's source range, which is how they are found again in the bytecode. A
//! label becomes nothing; a goto becomes the cleanup of every frame it leaves, innermost
//! first, then a jump.
//!
//! Label survival: the code generator drops code it proves unreachable (after `return`,
//! `raise`, `break`, `continue`, or a `while True:` without `break`), and a label there would
//! vanish with it. In a rewritten scope, each such statement that has a label after it is
//! compiled as `if label: <statement>` (and such a `while True:` as `while label:`), where
//! the test is the name `label` with the statement's own source range. The code generator
//! cannot fold that test, so what follows stays; the rewrite then deletes the test and its
//! conditional jump, so the statement is unconditional again and nothing of the guard is
//! left to run.

use std::collections::HashMap;

use ruff_source_file::{PositionEncoding, SourceFile, SourceFileBuilder};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::CodeObject;
use rustpython_compiler::ast::{self, Expr, ExprContext, Mod, ModModule, Stmt};
use rustpython_compiler::codegen::compile::{CompileOpts, compile_top};
use rustpython_compiler::core::bytecode::Instruction;
use rustpython_compiler::core::{Mode, SourceLocation};

use crate::bytecode::{Body, BytecodeError, Handler, Instr, Item, Label, for_each_code_mut};
use crate::diagnostic::{Code, Diagnostic};
use crate::scan::{FrameKind, MarkerId, MarkerKind, Module, Options, Scope, ScopeId};
use crate::source::Source;

/// Why a module could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The checker, or the rewrite, found errors; these are all the diagnostics.
    #[error("{} error(s)", .0.iter().filter(|d| d.is_error()).count())]
    Rejected(Vec<Diagnostic>),
    /// RustPython's code generator refused the module (for example `return` outside a
    /// function); the message is its own.
    #[error("{0}")]
    Codegen(String),
}

/// A compiled module: the code object and the warnings found on the way.
pub struct Compiled {
    pub code: CodeObject,
    pub warnings: Vec<Diagnostic>,
}

/// Compiles a module: checked, with every marker of every rewritten scope lowered.
///
/// A module with no marker in a rewritten scope compiles to exactly what
/// `rustpython_compiler::compile(text, Mode::Exec, path, CompileOpts::default())` gives.
pub fn compile_source(source: &Source, options: Options) -> Result<Compiled, CompileError> {
    let parsed = crate::parse::parse(source).map_err(|e| CompileError::Rejected(vec![e]))?;
    let module = crate::scan::scan(parsed.syntax(), parsed.tokens(), options);
    let diagnostics = crate::check::check(&module, source);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(CompileError::Rejected(diagnostics));
    }
    refuse_unlowered(&module)?;
    let file = SourceFileBuilder::new(source.path(), source.text()).finish();
    let mut ast = parsed.into_syntax();
    let rewritten: Vec<ScopeId> = (0..module.scopes.len())
        .map(ScopeId)
        .filter(|&id| {
            let scope = &module.scopes[id.0];
            scope.rewritten && !scope.markers.is_empty()
        })
        .collect();
    let guards = if rewritten.is_empty() {
        Vec::new()
    } else {
        prepare(&mut ast, &module, &rewritten)
    };
    let mut code = compile_top(
        Mod::Module(ast),
        file.clone(),
        Mode::Exec,
        CompileOpts::default(),
    )
    .map_err(|e| CompileError::Codegen(e.to_string()))?;
    if !rewritten.is_empty() {
        let mut rewriter = Rewriter::new(&module, &rewritten, &guards, &file);
        for_each_code_mut(&mut code, &mut |code| rewriter.rewrite(code))
            .map_err(|e| CompileError::Rejected(vec![e]))?;
        rewriter.all_labels_placed()?;
    }
    Ok(Compiled {
        code,
        warnings: diagnostics,
    })
}

/// Switches and computed gotos are not lowered yet: refuse them rather than emit code in
/// which they would run as ordinary (and failing) Python.
fn refuse_unlowered(module: &Module) -> Result<(), CompileError> {
    let refused: Vec<Diagnostic> = module
        .scopes
        .iter()
        .filter(|scope| scope.rewritten)
        .flat_map(|scope| &scope.markers)
        .filter_map(|marker| {
            let what = match marker.kind {
                MarkerKind::ComputedGoto { .. } => "computed `goto *expr`",
                MarkerKind::Switch(_) => "`while switch`",
                _ => return None,
            };
            Some(
                Diagnostic::new(
                    Code::CannotRewrite,
                    marker.range,
                    format!("cannot rewrite: {what} is not supported yet"),
                )
                .help("`gotopy check` accepts it; compiling it comes with switch lowering"),
            )
        })
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(CompileError::Rejected(refused))
    }
}

// --- Preparing the AST ---------------------------------------------------------------------

/// Adds the guards that keep labels reachable; returns the source range of every guard.
fn prepare(ast: &mut ModModule, module: &Module, rewritten: &[ScopeId]) -> Vec<TextRange> {
    let mut labels_by_scope: HashMap<TextSize, Vec<TextSize>> = HashMap::new();
    for &id in rewritten {
        let scope = &module.scopes[id.0];
        let labels: Vec<TextSize> = scope
            .markers
            .iter()
            .filter(|m| matches!(m.kind, MarkerKind::Label { .. }))
            .map(|m| m.range.start())
            .collect();
        if !labels.is_empty() {
            labels_by_scope.insert(scope.name_range.start(), labels);
        }
    }
    let mut guards = Vec::new();
    let module_labels = labels_by_scope.get(&TextSize::default()).cloned();
    guard_body(
        &mut ast.body,
        module_labels.as_deref(),
        &labels_by_scope,
        &mut guards,
    );
    guards
}

/// Guards the statements of one scope's `body` (not of nested scopes, which get their own
/// label lists) after which a label of that scope follows.
fn guard_body(
    body: &mut [Stmt],
    labels: Option<&[TextSize]>,
    scopes: &HashMap<TextSize, Vec<TextSize>>,
    guards: &mut Vec<TextRange>,
) {
    let label_after =
        |range: TextRange| labels.is_some_and(|l| l.iter().any(|&at| at >= range.end()));
    for stmt in body.iter_mut() {
        match stmt {
            Stmt::FunctionDef(def) => {
                let inner = scopes.get(&def.name.range.start()).map(Vec::as_slice);
                guard_body(&mut def.body, inner, scopes, guards);
            }
            Stmt::ClassDef(class) => {
                let inner = scopes.get(&class.name.range.start()).map(Vec::as_slice);
                guard_body(&mut class.body, inner, scopes, guards);
            }
            Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_) => {
                let range = stmt.range();
                if label_after(range) {
                    let inner = std::mem::replace(
                        stmt,
                        Stmt::Pass(ast::StmtPass {
                            node_index: Default::default(),
                            range,
                        }),
                    );
                    *stmt = Stmt::If(ast::StmtIf {
                        node_index: Default::default(),
                        range,
                        test: Box::new(guard_test(range)),
                        body: vec![inner],
                        elif_else_clauses: Vec::new(),
                    });
                    guards.push(range);
                }
            }
            Stmt::While(stmt) => {
                if always_true(&stmt.test) && label_after(stmt.range) {
                    let range = stmt.test.range();
                    *stmt.test = guard_test(range);
                    guards.push(range);
                }
                guard_body(&mut stmt.body, labels, scopes, guards);
                guard_body(&mut stmt.orelse, labels, scopes, guards);
            }
            Stmt::If(stmt) => {
                guard_body(&mut stmt.body, labels, scopes, guards);
                for clause in &mut stmt.elif_else_clauses {
                    guard_body(&mut clause.body, labels, scopes, guards);
                }
            }
            Stmt::For(stmt) => {
                guard_body(&mut stmt.body, labels, scopes, guards);
                guard_body(&mut stmt.orelse, labels, scopes, guards);
            }
            Stmt::With(stmt) => guard_body(&mut stmt.body, labels, scopes, guards),
            Stmt::Try(stmt) => {
                guard_body(&mut stmt.body, labels, scopes, guards);
                for handler in &mut stmt.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    guard_body(&mut handler.body, labels, scopes, guards);
                }
                guard_body(&mut stmt.orelse, labels, scopes, guards);
                guard_body(&mut stmt.finalbody, labels, scopes, guards);
            }
            Stmt::Match(stmt) => {
                for case in &mut stmt.cases {
                    guard_body(&mut case.body, labels, scopes, guards);
                }
            }
            _ => {}
        }
    }
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

/// `True` or a non-zero integer: tests the code generator folds away.
fn always_true(test: &Expr) -> bool {
    match test {
        Expr::BooleanLiteral(literal) => literal.value,
        Expr::NumberLiteral(number) => match &number.value {
            ast::Number::Int(int) => int.as_u64() != Some(0),
            _ => false,
        },
        _ => false,
    }
}

// --- Rewriting code objects ------------------------------------------------------------------

/// A source range as the code generator records it.
type Span = (SourceLocation, SourceLocation);

struct Rewriter<'a> {
    module: &'a Module,
    file: &'a SourceFile,
    text: &'a str,
    /// Label and goto statements of rewritten scopes, by their span.
    markers: HashMap<Span, (ScopeId, MarkerId)>,
    guards: Vec<Span>,
    /// Labels found in some code object, to check that none was lost.
    placed: Vec<(ScopeId, MarkerId)>,
}

impl<'a> Rewriter<'a> {
    fn new(
        module: &'a Module,
        rewritten: &[ScopeId],
        guards: &[TextRange],
        file: &'a SourceFile,
    ) -> Self {
        let code = file.to_source_code();
        let span = |range: TextRange| {
            (
                code.source_location(range.start(), PositionEncoding::Utf8),
                code.source_location(range.end(), PositionEncoding::Utf8),
            )
        };
        let mut markers = HashMap::new();
        for &id in rewritten {
            for (index, marker) in module.scopes[id.0].markers.iter().enumerate() {
                // The code generator gives all three instructions of a marker the range of
                // its leading name.
                let keyword = match marker.kind {
                    MarkerKind::Label { .. } => "label",
                    MarkerKind::Goto { .. } => "goto",
                    _ => continue,
                };
                let name = TextRange::at(marker.range.start(), TextSize::of(keyword));
                markers.insert(span(name), (id, MarkerId(index)));
            }
        }
        Rewriter {
            module,
            file,
            text: file.source_text(),
            markers,
            guards: guards.iter().map(|&range| span(range)).collect(),
            placed: Vec::new(),
        }
    }

    fn rewrite(&mut self, code: &mut CodeObject) -> Result<(), Diagnostic> {
        let mut body = Body::decode(code).map_err(|e| self.internal(code, None, e))?;
        // Guards live only in scopes with labels, so removing them first changes nothing
        // in a code object without markers.
        remove_guards(&mut body, &self.guards);
        let found = self.find_markers(&body);
        let Some(&(_, (scope_id, first))) = found.first() else {
            return Ok(());
        };
        let scope = &self.module.scopes[scope_id.0];
        // Every label first, so that gotos can name labels on either side of them; a jump
        // takes the handler in force at its label.
        let mut labels: HashMap<&str, (Label, Option<Handler>)> = HashMap::new();
        for &(at, (_, marker)) in &found {
            if let MarkerKind::Label { name, .. } = &scope.marker(marker).kind {
                let Item::Instr(load) = &body.items[at] else {
                    unreachable!("markers are found on instructions")
                };
                let handler = load.handler;
                labels.insert(name.as_str(), (body.new_label(), handler));
                self.placed.push((scope_id, marker));
            }
        }
        // Back to front, so that each splice leaves the earlier positions valid.
        for &(at, (_, marker)) in found.iter().rev() {
            let replacement = match &scope.marker(marker).kind {
                MarkerKind::Label { name, .. } => vec![Item::Label(labels[name.as_str()].0)],
                MarkerKind::Goto { name, .. } => {
                    let Some(&target) = labels.get(name.as_str()) else {
                        return Err(self.refuse(
                            scope,
                            marker,
                            format!("the code generator removed label `.{name}` as unreachable"),
                        ));
                    };
                    self.lower_goto(code, &body, at, scope, marker, target)?
                }
                _ => unreachable!("only labels and gotos are looked for"),
            };
            body.items.splice(at..at + 3, replacement);
        }
        body.assemble(code)
            .map_err(|e| self.internal(code, Some((scope, first)), e))
    }

    /// Where each marker's three instructions start in `body.items`, in order.
    fn find_markers(&self, body: &Body) -> Vec<(usize, (ScopeId, MarkerId))> {
        let mut found = Vec::new();
        for (at, window) in body.items.windows(3).enumerate() {
            let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop)] = window else {
                continue;
            };
            if !matches!(attr.op, Instruction::LoadAttr { .. })
                || !matches!(pop.op, Instruction::PopTop)
                || pop.location != attr.location
                || load.location != attr.location
                || !is_name_load(load.op)
            {
                continue;
            }
            if let Some(&marker) = self.markers.get(&attr.location) {
                found.push((at, marker));
            }
        }
        found
    }

    /// The cleanup for each frame `goto` leaves on its way to `label`, then the jump.
    fn lower_goto(
        &self,
        code: &CodeObject,
        body: &Body,
        at: usize,
        scope: &Scope,
        goto: MarkerId,
        (label, handler): (Label, Option<Handler>),
    ) -> Result<Vec<Item>, Diagnostic> {
        let Item::Instr(site) = &body.items[at] else {
            unreachable!("markers are found on instructions")
        };
        let MarkerKind::Goto { name, .. } = &scope.marker(goto).kind else {
            unreachable!("only gotos are lowered")
        };
        let entry = scope.labels.get(name).expect("checked: the label exists");
        let from = scope.frame_path(scope.marker(goto).frame);
        let to = scope.frame_path(scope.marker(entry.definition).frame);
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        let mut items = Vec::new();
        for &frame in from[common..].iter().rev() {
            let frame = scope.frame(frame);
            match frame.kind {
                FrameKind::For { .. } => {
                    // Cannot raise, so it needs no handler.
                    items.push(Item::Instr(Instr::like(
                        site,
                        Instruction::PopIter,
                        0,
                        None,
                    )));
                }
                FrameKind::Except { is_star: false } => {
                    // In a handler body the stack holds the exception it replaced; POP_EXCEPT
                    // restores that one, then `as name` is unbound as the handler's own exit
                    // does it.
                    items.push(Item::Instr(Instr::like(
                        site,
                        Instruction::PopExcept,
                        0,
                        None,
                    )));
                    if let Some(name) = handler_name(&self.text[frame.header.to_std_range()]) {
                        let Some(unbind) = unbind_sequence(body, code, name) else {
                            return Err(self.refuse(
                                scope,
                                goto,
                                format!("cannot find how this function unbinds `{name}`"),
                            ));
                        };
                        items.extend(unbind.into_iter().map(|instr| {
                            Item::Instr(Instr::like(site, instr.op, instr.arg, None))
                        }));
                    }
                }
                FrameKind::With { is_async: false } => {
                    // `with a, b:` gives two frames one header; their exits cannot be told
                    // apart by location.
                    if from
                        .iter()
                        .filter(|&&id| scope.frame(id).header == frame.header)
                        .count()
                        > 1
                    {
                        return Err(self.refuse(
                            scope,
                            goto,
                            "leaving a `with` statement with several items is not supported yet"
                                .to_owned(),
                        ));
                    }
                    // Call `__exit__(None, None, None)` as the `with` statement's own normal
                    // exit does: the same instructions under the same (outer) handler.
                    let start = self.location(frame.header.start());
                    let Some(exit) = with_exit_sequence(body, code, start) else {
                        return Err(self.refuse(
                            scope,
                            goto,
                            "cannot find this `with` statement's exit in the compiled code"
                                .to_owned(),
                        ));
                    };
                    items.extend(exit.into_iter().map(|instr| {
                        let mut copy = Instr::like(site, instr.op, instr.arg, None);
                        copy.handler = instr.handler;
                        Item::Instr(copy)
                    }));
                }
                FrameKind::SwitchBody(_) => {}
                kind => {
                    return Err(self.refuse(
                        scope,
                        goto,
                        format!(
                            "leaving {} is not supported yet",
                            crate::check::a(kind.describe())
                        ),
                    ));
                }
            }
        }
        // The jump belongs to the label's side: if it is interrupted (a backward jump checks
        // for signals), the handlers around the label are the ones that apply.
        let mut jump = Instr::like(
            site,
            Instruction::JumpForward {
                delta: rustpython_compiler::core::bytecode::Arg::marker(),
            },
            0,
            Some(label),
        );
        jump.handler = handler;
        items.push(Item::Instr(jump));
        Ok(items)
    }

    fn location(&self, offset: TextSize) -> SourceLocation {
        self.file
            .to_source_code()
            .source_location(offset, PositionEncoding::Utf8)
    }

    fn all_labels_placed(&self) -> Result<(), CompileError> {
        let placed = &self.placed;
        let mut lost = Vec::new();
        for &(scope_id, marker) in self.markers.values() {
            let scope = &self.module.scopes[scope_id.0];
            if matches!(scope.marker(marker).kind, MarkerKind::Label { .. })
                && !placed.contains(&(scope_id, marker))
            {
                lost.push(self.refuse(
                    scope,
                    marker,
                    "the code generator removed this label as unreachable".to_owned(),
                ));
            }
        }
        if lost.is_empty() {
            Ok(())
        } else {
            lost.sort_by_key(|d| d.range.start());
            Err(CompileError::Rejected(lost))
        }
    }

    fn refuse(&self, scope: &Scope, marker: MarkerId, why: String) -> Diagnostic {
        Diagnostic::new(
            Code::CannotRewrite,
            scope.marker(marker).range,
            format!("cannot rewrite: {why}"),
        )
        .help("gotopy refuses rather than emit code it cannot prove correct")
    }

    fn internal(
        &self,
        code: &CodeObject,
        at: Option<(&Scope, MarkerId)>,
        error: BytecodeError,
    ) -> Diagnostic {
        let range = at.map_or(TextRange::default(), |(scope, marker)| {
            scope.marker(marker).range
        });
        Diagnostic::new(
            Code::CannotRewrite,
            range,
            format!(
                "cannot rewrite `{}`: the result fails verification: {error}",
                code.qualname
            ),
        )
        .help("this is a bug in gotopy; please report it with this file")
    }
}

/// The `as` name of an `except ... as name` header, if it has one.
fn handler_name(header: &str) -> Option<&str> {
    let is_identifier = |c: char| c.is_alphanumeric() || c == '_';
    let name_start = header
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_identifier(c))
        .last()?
        .0;
    let before = header[..name_start].trim_end().strip_suffix("as")?;
    (!before.ends_with(is_identifier)).then_some(&header[name_start..])
}

/// `LOAD_CONST None; STORE name; DELETE name`, as the code generator emits it when a handler
/// with `as name` exits (only for local and module or class names).
fn unbind_sequence<'b>(body: &'b Body, code: &CodeObject, name: &str) -> Option<[&'b Instr; 3]> {
    let named = |op: Instruction, arg: u32| -> bool {
        let names = match op {
            Instruction::StoreFast { .. } | Instruction::DeleteFast { .. } => &code.varnames,
            Instruction::StoreName { .. } | Instruction::DeleteName { .. } => &code.names,
            _ => return false,
        };
        names.get(arg as usize).is_some_and(|n| n.as_str() == name)
    };
    body.items.windows(3).find_map(|window| {
        let [Item::Instr(load), Item::Instr(store), Item::Instr(delete)] = window else {
            return None;
        };
        let is_none = matches!(load.op, Instruction::LoadConst { .. })
            && matches!(
                code.constants.get(load.arg as usize),
                Some(rustpython_compiler::core::bytecode::ConstantData::None)
            );
        let pair = matches!(
            (store.op, delete.op),
            (
                Instruction::StoreFast { .. },
                Instruction::DeleteFast { .. }
            ) | (
                Instruction::StoreName { .. },
                Instruction::DeleteName { .. }
            )
        );
        (is_none && pair && store.arg == delete.arg && named(store.op, store.arg))
            .then_some([load, store, delete])
    })
}

/// `LOAD_CONST None` three times, `CALL 3`, `POP_TOP`: the normal exit of the `with`
/// statement that starts at `start`.
fn with_exit_sequence<'b>(
    body: &'b Body,
    code: &CodeObject,
    start: SourceLocation,
) -> Option<[&'b Instr; 5]> {
    let is_none = |instr: &Instr| {
        matches!(instr.op, Instruction::LoadConst { .. })
            && matches!(
                code.constants.get(instr.arg as usize),
                Some(rustpython_compiler::core::bytecode::ConstantData::None)
            )
    };
    body.items.windows(5).find_map(|window| {
        let [
            Item::Instr(a),
            Item::Instr(b),
            Item::Instr(c),
            Item::Instr(call),
            Item::Instr(pop),
        ] = window
        else {
            return None;
        };
        let shape = is_none(a)
            && is_none(b)
            && is_none(c)
            && matches!(call.op, Instruction::Call { .. })
            && call.arg == 3
            && matches!(pop.op, Instruction::PopTop);
        let here = window
            .iter()
            .all(|item| matches!(item, Item::Instr(i) if i.location.0 == start));
        (shape && here).then_some([a, b, c, call, pop])
    })
}

fn is_name_load(op: Instruction) -> bool {
    matches!(
        op,
        Instruction::LoadGlobal { .. }
            | Instruction::LoadName { .. }
            | Instruction::LoadDeref { .. }
            | Instruction::LoadFast { .. }
            | Instruction::LoadFastBorrow { .. }
            | Instruction::LoadFastCheck { .. }
    )
}

/// Deletes each guard's test; a guard that jumps into its statement becomes a plain jump.
fn remove_guards(body: &mut Body, guards: &[Span]) {
    let mut at = 0;
    while at < body.items.len() {
        let is_guard_load = matches!(&body.items[at], Item::Instr(i)
            if is_name_load(i.op) && guards.contains(&i.location));
        if !is_guard_load {
            at += 1;
            continue;
        }
        let Item::Instr(load) = &body.items[at] else {
            unreachable!()
        };
        let span = load.location;
        let mut end = at + 1;
        let mut jump = None;
        while let Some(Item::Instr(next)) = body.items.get(end) {
            if next.location != span {
                break;
            }
            match next.op {
                Instruction::ToBool | Instruction::NotTaken => end += 1,
                Instruction::PopJumpIfFalse { .. } | Instruction::PopJumpIfTrue { .. }
                    if jump.is_none() =>
                {
                    jump = Some(end);
                    end += 1;
                }
                _ => break,
            }
        }
        let Some(jump) = jump else {
            at += 1;
            continue;
        };
        let Item::Instr(conditional) = &body.items[jump] else {
            unreachable!()
        };
        let replacement = match conditional.op {
            // `if label:` jumps past its statement when false: always fall into it.
            Instruction::PopJumpIfFalse { .. } => Vec::new(),
            // Jumps to its statement when true: always jump.
            _ => {
                let mut always = conditional.clone();
                always.op = Instruction::JumpForward {
                    delta: rustpython_compiler::core::bytecode::Arg::marker(),
                };
                always.inserted = true;
                always.handler = None;
                vec![Item::Instr(always)]
            }
        };
        let added = replacement.len();
        body.items.splice(at..end, replacement);
        at += added;
    }
}
