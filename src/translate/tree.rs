//! The tree of one scope's statement lists that `translate` works on, built from the
//! syntax tree: nodes (statements, markers, jumps), their lists, and the targets of jumps.

use super::*;

impl<'a> Ctx<'a> {
    pub(super) fn build(
        tr: &Translator<'a>,
        scope: &'a Scope,
        rewritten: bool,
        body: &'a [Stmt],
    ) -> Ctx<'a> {
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
            post_homes: HashMap::new(),
            under: Under::default(),
            codes: HashMap::new(),
            pseudo: HashMap::new(),
            shells: HashSet::new(),
            handoffs: HashSet::new(),
            late_resets: HashSet::new(),
            uses_k: false,
            k: tr.names.k.clone(),
            computed_groups: Vec::new(),
            one_search: false,
        };
        ctx.build_list(tr, body, None, false);
        ctx.special.sort_by_key(|range| range.start());
        ctx
    }

    pub(super) fn build_list(
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
    pub(super) fn try_lists(
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

    pub(super) fn build_node(
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
            (_, stmt)
                if scan::marker_import_names(stmt).is_some()
                    && !tr.used_imports.contains(&stmt.range()) =>
            {
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
}
