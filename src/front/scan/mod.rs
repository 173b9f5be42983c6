//! Scanning: the AST of one module to scopes, markers, frames and label tables.
//!
//! `scan` walks the AST once. It splits the module into scopes (module, class and function
//! bodies), finds every marker of SPEC section 1 together with the frame path around it
//! (SPEC section 4), records switches, marker shapes used as expressions and local
//! bindings of the marker names, decides which scopes are rewritten (SPEC section 2) and
//! builds one [`LabelTable`] per scope. It records facts only: whether a fact is an error is
//! decided by `check`, because some rules depend on whether a scope turns out to be
//! rewritten, which is known only once the whole scope has been seen.
//!
//! Architecture Invariant: `scan` makes no diagnostic (`tests/tidy.rs`); a malformed
//! marker's words are a fact it records (`MarkerKind::Malformed`), for `check` to report.

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::name::Name;
use rustpython_compiler::ast::token::{TokenKind, Tokens};
use rustpython_compiler::ast::visitor::{self, Visitor};
use rustpython_compiler::ast::{
    self as ast, ExceptHandler, Expr, ExprContext, ModModule, Operator, Pattern, Stmt,
};

use crate::front::source::Source;

mod constant;
mod facts;
mod labels;
mod pragma;
mod shape;

pub(crate) use constant::{Folding, folding, truth};
pub use facts::*;
pub use labels::LabelTable;
pub use pragma::{ALL_SCOPES, asks_all_scopes};
use shape::{case_values, chained_marker, marker_name, marker_shape, name_of, switch_subject};
pub(crate) use shape::{is_goto_decorator, is_install_call, marker_import_names};

/// Scans a parsed module; `source` gives the lines [`Options::scope_line`] names, and may
/// ask for every scope itself ([`ALL_SCOPES`]).
pub fn scan(module: &ModModule, tokens: &Tokens, source: &Source, options: Options) -> Module {
    let asked = asks_all_scopes(source.text().as_bytes());
    let options = options.all_scopes(options.all_scopes || asked);
    let mut scanner = Scanner {
        tokens,
        source,
        options,
        scopes: Vec::new(),
        state: ScopeState::default(),
        nested_expression_scopes: 0,
        imported_decorator: None,
        alone: false,
    };
    let id = scanner.open_scope(
        ScopeKind::Module,
        "<module>".to_owned(),
        TextRange::empty(TextSize::new(0)),
        TextRange::up_to(source.text_len()),
        false,
    );
    scanner.scope_body(id, &module.body);
    Module {
        scopes: scanner.scopes,
        decorator: scanner.imported_decorator.unwrap_or("goto"),
        imports_decorator: scanner.imported_decorator.is_some(),
    }
}

/// What a loop statement means to `continue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loop {
    Plain,
    Switch(SwitchId),
}

/// Walking state that belongs to the scope being scanned.
#[derive(Debug, Default)]
struct ScopeState {
    scope: usize,
    frame: Option<FrameId>,
    loops: Vec<Loop>,
    switch: Option<SwitchId>,
    /// Names declared `global` or `nonlocal`: binding them is not a local binding.
    declared: Vec<Name>,
}

struct Scanner<'a> {
    tokens: &'a Tokens,
    source: &'a Source,
    options: Options,
    scopes: Vec<Scope>,
    state: ScopeState,
    /// Depth inside lambdas and comprehensions, whose bindings are not the scope's own.
    nested_expression_scopes: u32,
    /// The first of `goto` and `with_goto` that an import binds.
    imported_decorator: Option<&'static str>,
    /// Whether the statement being scanned is the only one of its block.
    alone: bool,
}

impl<'a> Scanner<'a> {
    fn scope(&mut self) -> &mut Scope {
        &mut self.scopes[self.state.scope]
    }

    fn open_scope(
        &mut self,
        kind: ScopeKind,
        qualname: String,
        name_range: TextRange,
        range: TextRange,
        decorated: bool,
    ) -> ScopeId {
        self.scopes.push(Scope {
            kind,
            qualname,
            name_range,
            range,
            decorated,
            rewritten: false,
            frames: Vec::new(),
            markers: Vec::new(),
            switches: Vec::new(),
            labels: LabelTable::default(),
            misplaced: Vec::new(),
            bindings: Vec::new(),
            constant_tests: Vec::new(),
        });
        ScopeId(self.scopes.len() - 1)
    }

    /// Scans the body of a scope, with fresh walking state, then settles what the scope is.
    fn scope_body(&mut self, id: ScopeId, body: &'a [Stmt]) {
        let outer = std::mem::replace(
            &mut self.state,
            ScopeState {
                scope: id.0,
                ..ScopeState::default()
            },
        );
        let outer_nesting = std::mem::replace(&mut self.nested_expression_scopes, 0);
        self.body(body);
        let declared = std::mem::take(&mut self.state.declared);
        let all_scopes = self.options.all_scopes;
        let scope = self.scope();
        scope
            .bindings
            .retain(|binding| !declared.iter().any(|name| name == binding.name));
        scope.rewritten = scope.decorated || (all_scopes && !scope.markers.is_empty());
        scope.labels = LabelTable::build(&scope.markers);
        self.state = outer;
        self.nested_expression_scopes = outer_nesting;
    }

    fn child_qualname(&self, name: &str) -> String {
        let parent = &self.scopes[self.state.scope];
        match parent.kind {
            ScopeKind::Module => name.to_owned(),
            ScopeKind::Class => format!("{}.{name}", parent.qualname),
            ScopeKind::Function => format!("{}.<locals>.{name}", parent.qualname),
        }
    }

    fn push_frame(&mut self, kind: FrameKind, header: TextRange) -> Option<FrameId> {
        let parent = self.state.frame;
        let scope = self.scope();
        scope.frames.push(Frame {
            kind,
            header,
            parent,
        });
        let id = FrameId(scope.frames.len() - 1);
        self.state.frame.replace(id)
    }

    /// Scans `body` inside a new frame.
    fn framed(&mut self, kind: FrameKind, header: TextRange, body: &'a [Stmt]) {
        let outer = self.push_frame(kind, header);
        self.body(body);
        self.state.frame = outer;
    }

    fn push_marker(&mut self, kind: MarkerKind, range: TextRange) -> MarkerId {
        let frame = self.state.frame;
        let alone = self.alone;
        let scope = self.scope();
        let id = MarkerId(scope.markers.len());
        if let MarkerKind::Case {
            switch: Some(owner),
            ..
        } = kind
            && let Some(switch) = scope.switches.get_mut(owner.0)
        {
            switch.cases.push(id);
        }
        scope.markers.push(Marker {
            kind,
            range,
            frame,
            alone,
        });
        id
    }

    fn bind(&mut self, name: &str, range: TextRange) {
        if let Some(name) = marker_name(name) {
            self.scope().bindings.push(Binding { name, range });
        }
    }

    fn body(&mut self, body: &'a [Stmt]) {
        for stmt in body {
            self.alone = body.len() == 1;
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::ClassDef(class) => self.class(class),
            Stmt::Expr(expr) => self.expression_statement(expr),
            Stmt::While(stmt) => match switch_subject(&stmt.test) {
                Some(subject) => self.switch(stmt, subject),
                None => {
                    self.visit_expr(&stmt.test);
                    self.constant_test(&stmt.test, None);
                    self.looped(Loop::Plain, |this| this.body(&stmt.body));
                    self.body(&stmt.orelse);
                }
            },
            Stmt::For(stmt) => {
                self.visit_expr(&stmt.target);
                self.visit_expr(&stmt.iter);
                let header = TextRange::new(stmt.start(), stmt.iter.end());
                let kind = FrameKind::For {
                    is_async: stmt.is_async,
                };
                self.looped(Loop::Plain, |this| this.framed(kind, header, &stmt.body));
                self.body(&stmt.orelse);
            }
            Stmt::With(stmt) => self.with(stmt),
            Stmt::Try(stmt) => self.try_statement(stmt),
            Stmt::If(stmt) => {
                self.visit_expr(&stmt.test);
                self.constant_test(&stmt.test, Some(stmt.end()));
                self.body(&stmt.body);
                for clause in &stmt.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                        self.constant_test(test, Some(stmt.end()));
                    }
                    self.body(&clause.body);
                }
            }
            Stmt::Match(stmt) => {
                self.visit_expr(&stmt.subject);
                for case in &stmt.cases {
                    self.pattern(&case.pattern);
                    if let Some(guard) = &case.guard {
                        self.visit_expr(guard);
                    }
                    self.body(&case.body);
                }
            }
            Stmt::Continue(stmt) => {
                if let Some(&Loop::Switch(id)) = self.state.loops.last() {
                    self.scope().switches[id.0].continues.push(stmt.range);
                }
            }
            Stmt::Global(ast::StmtGlobal { names, .. })
            | Stmt::Nonlocal(ast::StmtNonlocal { names, .. }) => {
                let names = names.iter().map(|name| name.id.clone());
                self.state.declared.extend(names);
            }
            // Imports are how the decorator gets into a module (`from goto import goto`), so
            // they are not counted as local bindings of the marker names; the first that
            // binds a decorator names it in messages.
            Stmt::ImportFrom(ast::StmtImportFrom { names, .. }) => {
                for alias in names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
                    let decorator = ["goto", "with_goto"]
                        .into_iter()
                        .find(|&name| name == bound);
                    self.imported_decorator = self.imported_decorator.or(decorator);
                }
            }
            Stmt::Import(_) => {}
            Stmt::Assert(assert) => {
                self.constant_test(&assert.test, None);
                visitor::walk_stmt(self, stmt);
            }
            // The remaining statements hold expressions only, no bodies.
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    /// Records `test` if it is made of constants gotopy does not compute: the code from it to
    /// `end`, or to the end of the scope for `None`, may be dropped.
    fn constant_test(&mut self, test: &Expr, end: Option<TextSize>) {
        if folding(test) != Folding::Unknown {
            return;
        }
        let scope = self.scope();
        let end = end.unwrap_or(scope.range.end());
        let region = TextRange::new(test.start(), end);
        scope.constant_tests.push(ConstantTest {
            test: test.range(),
            region,
        });
    }

    fn looped(&mut self, kind: Loop, scan: impl FnOnce(&mut Self)) {
        self.state.loops.push(kind);
        scan(self);
        self.state.loops.pop();
    }

    fn function(&mut self, def: &'a ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        // Defaults and annotations are evaluated in the enclosing scope.
        for parameter in def.parameters.iter() {
            if let Some(default) = parameter.default() {
                self.visit_expr(default);
            }
            if let Some(annotation) = parameter.annotation() {
                self.visit_expr(annotation);
            }
        }
        if let Some(returns) = &def.returns {
            self.visit_expr(returns);
        }
        self.bind(&def.name.id, def.name.range);
        let decorated = def
            .decorator_list
            .iter()
            .any(|decorator| is_goto_decorator(&decorator.expression))
            || self.asked_for(def.range);
        let qualname = self.child_qualname(&def.name.id);
        let id = self.open_scope(
            ScopeKind::Function,
            qualname,
            def.name.range,
            def.range,
            decorated,
        );
        for parameter in def.parameters.iter() {
            if let Some(name) = marker_name(parameter.name()) {
                let range = parameter.name().range;
                self.scopes[id.0].bindings.push(Binding { name, range });
            }
        }
        self.scope_body(id, &def.body);
    }

    /// Whether the caller asked for the definition at `range` to be rewritten
    /// ([`Options::scope_line`]); a definition's range starts at its first decorator, where
    /// CPython's first line of its code is.
    fn asked_for(&self, range: TextRange) -> bool {
        self.options
            .scope_line
            .is_some_and(|line| self.source.location(range.start()).line == line)
    }

    fn class(&mut self, class: &'a ast::StmtClassDef) {
        for decorator in &class.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        if let Some(arguments) = &class.arguments {
            self.visit_arguments(arguments);
        }
        self.bind(&class.name.id, class.name.range);
        let qualname = self.child_qualname(&class.name.id);
        let asked = self.asked_for(class.range);
        let id = self.open_scope(
            ScopeKind::Class,
            qualname,
            class.name.range,
            class.range,
            asked,
        );
        self.scope_body(id, &class.body);
    }

    fn expression_statement(&mut self, stmt: &'a ast::StmtExpr) {
        let range = stmt.range;
        let kind = match &*stmt.value {
            Expr::Attribute(attribute) => match name_of(&attribute.value) {
                Some("goto") => MarkerKind::Goto {
                    name: attribute.attr.id.clone(),
                    name_range: attribute.attr.range,
                },
                Some("label") => MarkerKind::Label {
                    name: attribute.attr.id.clone(),
                    name_range: attribute.attr.range,
                },
                _ => match chained_marker(&attribute.value) {
                    Some(marker) => MarkerKind::Malformed {
                        message: format!("`{marker}` takes a single name"),
                        help: "write `goto .name` or `label .name` with one plain name",
                    },
                    None => return self.misplaced_statement(stmt),
                },
            },
            Expr::BinOp(binary) if binary.op == Operator::Mult => match name_of(&binary.left) {
                Some("goto") => {
                    self.visit_expr(&binary.right);
                    MarkerKind::ComputedGoto {
                        target: binary.right.range(),
                    }
                }
                Some("label") => MarkerKind::Malformed {
                    message: "a label name cannot be computed".to_owned(),
                    help: "write `label .name`",
                },
                Some("switch") => MarkerKind::Malformed {
                    message: "`switch *subject` is the test of a `while` statement".to_owned(),
                    help: "write `while switch *subject:` and put the cases in its body",
                },
                _ => return self.misplaced_statement(stmt),
            },
            Expr::Subscript(subscript) if name_of(&subscript.value) == Some("case") => {
                MarkerKind::Case {
                    switch: self.state.switch,
                    values: case_values(&subscript.slice),
                }
            }
            Expr::Name(name) if matches!(name.id.as_str(), "goto" | "label") => {
                MarkerKind::Malformed {
                    message: format!("`{}` needs a label name", name.id),
                    help: "write `goto .name` or `label .name`",
                }
            }
            _ => return self.misplaced_statement(stmt),
        };
        self.push_marker(kind, range);
    }

    /// An expression statement that is not a marker, though it may contain one.
    fn misplaced_statement(&mut self, stmt: &'a ast::StmtExpr) {
        let before = self.scope().misplaced.len();
        self.visit_expr(&stmt.value);
        // `goto *a + b` binds as `(goto * a) + b`: the computed goto is the leftmost operand.
        let mut leftmost = &*stmt.value;
        while let Expr::BinOp(binary) = leftmost {
            if binary.op == Operator::Mult && name_of(&binary.left) == Some("goto") {
                if let Some(first) = self.scope().misplaced.get_mut(before) {
                    first.computed_target =
                        Some(TextRange::new(binary.right.start(), stmt.range.end()));
                }
                break;
            }
            leftmost = &binary.left;
        }
    }

    fn switch(&mut self, stmt: &'a ast::StmtWhile, subject: &'a Expr) {
        self.visit_expr(subject);
        let id = SwitchId(self.scope().switches.len());
        let header = TextRange::new(stmt.start(), stmt.test.end());
        let else_keyword = stmt.orelse.first().and_then(|first| {
            let body_end = stmt.body.last().map_or(stmt.test.end(), Ranged::end);
            self.keyword_between(TokenKind::Else, body_end, first.start())
        });
        let frame = self.state.frame;
        let marker = self.push_marker(MarkerKind::Switch(id), header);
        self.scope().switches.push(Switch {
            header,
            subject: subject.range(),
            frame,
            continues: Vec::new(),
            else_keyword,
            marker,
            cases: Vec::new(),
        });
        let outer_switch = self.state.switch.replace(id);
        self.looped(Loop::Switch(id), |this| {
            this.framed(FrameKind::SwitchBody(id), header, &stmt.body);
        });
        self.state.switch = outer_switch;
        self.body(&stmt.orelse);
    }

    fn with(&mut self, stmt: &'a ast::StmtWith) {
        let header_end = stmt.items.last().map_or(stmt.start(), Ranged::end);
        let header = TextRange::new(stmt.start(), header_end);
        let outer = self.state.frame;
        for item in &stmt.items {
            self.visit_expr(&item.context_expr);
            if let Some(target) = &item.optional_vars {
                self.visit_expr(target);
            }
            let kind = FrameKind::With {
                is_async: stmt.is_async,
            };
            self.push_frame(kind, header);
        }
        self.body(&stmt.body);
        self.state.frame = outer;
    }

    fn try_statement(&mut self, stmt: &'a ast::StmtTry) {
        let has_finally = !stmt.finalbody.is_empty();
        let outer = self.state.frame;
        if has_finally {
            let try_keyword = TextRange::at(stmt.start(), TextSize::new(3));
            self.push_frame(FrameKind::TryFinally, try_keyword);
        }
        self.body(&stmt.body);
        for handler in &stmt.handlers {
            let ExceptHandler::ExceptHandler(handler) = handler;
            if let Some(type_) = &handler.type_ {
                self.visit_expr(type_);
            }
            let header_end = match (&handler.name, &handler.type_) {
                (Some(name), _) => name.end(),
                (None, Some(type_)) => type_.end(),
                (None, None) => handler.start() + TextSize::new(6),
            };
            if let Some(name) = &handler.name {
                self.bind(&name.id, name.range);
            }
            let kind = FrameKind::Except {
                is_star: stmt.is_star,
            };
            let header = TextRange::new(handler.start(), header_end);
            self.framed(kind, header, &handler.body);
        }
        self.body(&stmt.orelse);
        self.state.frame = outer;
        if let Some(first) = stmt.finalbody.first() {
            let before = [
                stmt.orelse.last().map(Ranged::end),
                stmt.handlers.last().map(Ranged::end),
                stmt.body.last().map(Ranged::end),
            ];
            let from = before.into_iter().flatten().next().unwrap_or(stmt.start());
            let keyword = self
                .keyword_between(TokenKind::Finally, from, first.start())
                .unwrap_or(TextRange::empty(first.start()));
            self.framed(FrameKind::Finally, keyword, &stmt.finalbody);
        }
    }

    /// The first token of `kind` in `from..to`, for keywords the AST does not keep.
    fn keyword_between(&self, kind: TokenKind, from: TextSize, to: TextSize) -> Option<TextRange> {
        let start = self.tokens.partition_point(|token| token.start() < from);
        self.tokens[start..]
            .iter()
            .take_while(|token| token.start() < to)
            .find(|token| token.kind() == kind)
            .map(Ranged::range)
    }

    fn pattern(&mut self, pattern: &'a Pattern) {
        match pattern {
            Pattern::MatchAs(ast::PatternMatchAs {
                name: Some(name), ..
            })
            | Pattern::MatchStar(ast::PatternMatchStar {
                name: Some(name), ..
            }) => self.bind(&name.id, name.range),
            Pattern::MatchMapping(ast::PatternMatchMapping {
                rest: Some(name), ..
            }) => self.bind(&name.id, name.range),
            _ => {}
        }
        visitor::walk_pattern(self, pattern);
    }
}

impl<'a> Visitor<'a> for Scanner<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.stmt(stmt);
    }

    /// Every block goes through `body`, which knows how many statements it has.
    fn visit_body(&mut self, body: &'a [Stmt]) {
        self.body(body);
    }

    fn visit_pattern(&mut self, pattern: &'a Pattern) {
        self.pattern(pattern);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Some(name) = marker_shape(expr) {
            self.scope().misplaced.push(Misplaced {
                range: expr.range(),
                name,
                computed_target: None,
            });
        }
        match expr {
            Expr::Name(name) if matches!(name.ctx, ExprContext::Store | ExprContext::Del) => {
                if self.nested_expression_scopes == 0 {
                    self.bind(&name.id, name.range);
                }
            }
            // An assignment expression binds in the enclosing function even from inside a
            // comprehension.
            Expr::Named(named) => {
                if let Expr::Name(name) = &*named.target {
                    self.bind(&name.id, name.range);
                }
                self.visit_expr(&named.value);
            }
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_) => {
                self.nested_expression_scopes += 1;
                visitor::walk_expr(self, expr);
                self.nested_expression_scopes -= 1;
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}
