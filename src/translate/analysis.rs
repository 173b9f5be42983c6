//! The analysis of a scope's tree: each jump's home list and path, the dispatch loops, the
//! `with` statements that get loops of their own, and what each jump becomes.

use super::emit::{branches, grouped, py_str, search};
use super::*;

impl<'a> Ctx<'a> {
    /// The lowest list holding both nodes, with the indexes of the statements holding each:
    /// the deeper node's ancestor at the other's depth, then both ancestors up to a list they
    /// share (without a path allocated per call: every jump asks this three times).
    pub(super) fn home(&self, a: NodeId, b: NodeId) -> (ListId, usize, usize) {
        let up = |node: NodeId| self.lists[self.nodes[node].list].parent;
        let depth = |node: NodeId| std::iter::successors(Some(node), |&at| up(at)).count();
        let (mut a, mut b) = (a, b);
        let (depth_a, depth_b) = (depth(a), depth(b));
        for _ in depth_b..depth_a {
            a = up(a).expect("a node deeper than another has a parent");
        }
        for _ in depth_a..depth_b {
            b = up(b).expect("a node deeper than another has a parent");
        }
        while self.nodes[a].list != self.nodes[b].list {
            match (up(a), up(b)) {
                (Some(parent_a), Some(parent_b)) => (a, b) = (parent_a, parent_b),
                _ => break,
            }
        }
        (self.nodes[a].list, self.nodes[a].index, self.nodes[b].index)
    }

    /// The loops of the output around a node, innermost first.
    pub(super) fn loops(&self, node: NodeId) -> Vec<LoopKey> {
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
    pub(super) fn dispatch_of(&self, list: ListId) -> LoopKey {
        match self.switch_bodies.get(&list) {
            Some(&switch) => LoopKey::Source(switch),
            None => LoopKey::Dispatch(list),
        }
    }

    /// The label a dispatch loop starts with, when its first statement is one.
    pub(super) fn region_start(&self, list: ListId) -> Option<usize> {
        let first = match self.switch_bodies.contains_key(&list) {
            true => 0,
            false => self.regions.get(&list)?.0,
        };
        match self.nodes[*self.lists[list].items.get(first)?].kind {
            NodeKind::Label(target) => Some(target),
            _ => None,
        }
    }

    pub(super) fn label_target(&self, name: &str) -> usize {
        let entry = self.scope.labels.get(name).expect("check found the label");
        let start = self.scope.marker(entry.definition).range.start();
        self.target_at(start).expect("every label is a target")
    }

    /// The target whose statement starts at `start`, by bisection (targets are in source
    /// order).
    pub(super) fn target_at(&self, start: TextSize) -> Option<usize> {
        self.targets
            .binary_search_by_key(&start, |target| target.range.start())
            .ok()
    }

    pub(super) fn analyse(&mut self, tr: &Translator<'a>) {
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
        // A simple statement right after a dispatch loop goes in, as its last statement:
        // then the loop needs no `break` at its end (a `return` or `raise`), or the `break`
        // joins that statement's line instead of taking the line of the statement after.
        let regions: Vec<(ListId, (usize, usize))> =
            self.regions.iter().map(|(&l, &r)| (l, r)).collect();
        for (list, (a, b)) in regions {
            if let Some(&next) = self.lists[list].items.get(b + 1)
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
    pub(super) fn withs_between(&self, node: NodeId, stop: ListId) -> Vec<NodeId> {
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
    pub(super) fn find_shells(
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
    pub(super) fn case_switch_body(&self, node: NodeId) -> Option<ListId> {
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
    pub(super) fn owner_loop(&self, node: NodeId) -> Option<NodeId> {
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
    pub(super) fn jump(
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

    pub(super) fn computed(
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
}
