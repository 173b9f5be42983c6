//! The analysis of a scope's tree: each jump's home list and path, the dispatch loops, the
//! `with` statements that get loops of their own, and what each jump becomes.

use super::conditions::{branches, py_str};
use super::*;
use crate::front::scan::FrameId;
use crate::plan::cases::{frame_chain, frame_code, reach_text};
use crate::search::expression;

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
        // Jumps to labels: gotos and computed gotos (each label it may reach, decided once
        // for the computed gotos of one frame).
        let mut gotos: Vec<(NodeId, usize)> = Vec::new();
        let mut computed: Vec<(NodeId, usize)> = Vec::new();
        let mut group_of: HashMap<Option<FrameId>, usize> = HashMap::new();
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
                    let next = self.computed_groups.len();
                    let group = *group_of.entry(goto.frame).or_insert(next);
                    if group == next {
                        let group = self.computed_group(goto);
                        self.computed_groups.push(group);
                    }
                    self.computed_groups[group].gotos += 1;
                    computed.push((node, group));
                }
                _ => {}
            }
        }
        // Computed gotos in two or more frames share one search of the scope's labels; else
        // two or more computed gotos in one frame share one search and message.
        self.one_search = self.computed_groups.len() > 1;
        let mut shared = 0;
        for group in &mut self.computed_groups {
            if group.gotos > 1 && !self.one_search {
                group.shared = Some(shared);
                shared += 1;
            }
        }
        if !computed.is_empty() {
            self.find_under(&computed);
        }
        let homes: Vec<(ListId, usize, usize, usize)> = gotos
            .iter()
            .map(|&(node, target)| {
                let (home, a, b) = self.home(node, self.targets[target].node);
                (home, a, b, b)
            })
            .chain(
                computed
                    .iter()
                    .flat_map(|&(node, group)| self.computed_homes(node, group)),
            )
            .collect();
        for (home, a, first, last) in homes {
            if self.switch_bodies.contains_key(&home) {
                continue;
            }
            let (lo, hi) = (a.min(first), a.max(last));
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
        self.find_handoffs();
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
            let code = self.jump(tr, node, Goal::Target(target));
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
            let code = self.jump(tr, node, goal);
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
            let code = self.jump(tr, node, Goal::Return(with, stmt.value.is_some()));
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
        for (node, group) in computed {
            let code = self.computed(tr, node, group);
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
    pub(super) fn find_shells(&mut self, gotos: &[(NodeId, usize)], computed: &[(NodeId, usize)]) {
        let homes = gotos.iter().map(|&(node, target)| {
            let (home, _, _) = self.home(node, self.targets[target].node);
            (node, home)
        });
        // A computed goto's `with` statements up to its outermost home hold those up to
        // each of its homes.
        let outermost = computed.iter().filter_map(|&(node, group)| {
            let (home, ..) = *self.computed_homes(node, group).last()?;
            Some((node, home))
        });
        for (node, home) in homes.chain(outermost).collect::<Vec<_>>() {
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

    /// Finds `handoffs`: the shells around a `with` or a `try` with a `finally`. A jump
    /// sets the register before it leaves anything, and user code runs with the register
    /// at 0; so an exception that a shell's `__exit__` swallows leaves the register at 0,
    /// unless code ran after the jump set it and before the jump left the body: an inner
    /// statement's `__exit__`, or a `finally` body. Only such shells need the register
    /// handed past their `__exit__` at the body's end. Each statement's walk up ends at a
    /// shell found already, whose shells around were found with it.
    pub(super) fn find_handoffs(&mut self) {
        for node in 0..self.nodes.len() {
            let raises = match self.nodes[node].stmt {
                Stmt::With(_) => true,
                Stmt::Try(stmt) => !stmt.finalbody.is_empty(),
                _ => false,
            };
            let mut at = node;
            while raises && let Some(parent) = self.lists[self.nodes[at].list].parent {
                if self.shells.contains(&parent) && !self.handoffs.insert(parent) {
                    break;
                }
                at = parent;
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

    /// The statements of a jump from `node` (a computed goto's: [`Ctx::jump_home`]).
    pub(super) fn jump(&mut self, tr: &Translator<'a>, node: NodeId, goal: Goal) -> String {
        let k = &self.k.clone();
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
                Goal::Target(_) if starts => "continue".to_owned(),
                Goal::Target(_) => {
                    self.homed
                        .entry(home.expect("a home"))
                        .or_default()
                        .insert(number);
                    self.uses_k = true;
                    self.setters.push(self.nodes[node].range);
                    format!("{k} = {number}; continue")
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
        format!("{k} = {number}; break")
    }

    /// The statements of a computed goto's jump from `node` to a label homed at `home`, its
    /// number in the register `t` ([`Ctx::jump`] for a label, but for every label of that
    /// home at once: [`Ctx::find_under`] homes them, and the post-check after each loop
    /// left goes on for the range of numbers under the home, [`Ctx::post_homes`]).
    fn jump_home(&mut self, node: NodeId, home: ListId, t: &str) -> String {
        let k = &self.k.clone();
        let loops = self.loops(node);
        let last = self.dispatch_of(home);
        let depth =
            (loops.iter().position(|&key| key == last)).expect("the jump's loop is around it");
        self.uses_k = true;
        self.setters.push(self.nodes[node].range);
        if depth == 0 {
            return format!("{k} = {t}; continue");
        }
        for (index, &key) in loops[..depth].iter().enumerate() {
            let action = if index + 1 == depth {
                "continue"
            } else {
                "break"
            };
            (self.post_homes.entry(key).or_default()).insert(home, action.to_owned());
        }
        format!("{k} = {t}; break")
    }

    /// The computed gotos of `goto`'s frame: the frames whose labels they may reach
    /// ([`ComputedGroup::chain`]), which SPEC 4 gives. A debug build checks them against
    /// the checker's own rule, which costs a diagnostic for each label it may not reach.
    fn computed_group(&self, goto: &scan::Marker) -> ComputedGroup {
        let chain = frame_chain(self.scope, goto.frame);
        debug_assert!(
            (self.scope.labels.iter()).all(|entry| {
                let label = self.scope.marker(entry.definition);
                let legal =
                    crate::front::check::jump(self.scope, goto, label, &entry.name).is_none();
                legal == chain.contains(&frame_code(self.scope, label.frame))
            }),
            "the labels of a computed goto's frames are those it may reach"
        );
        ComputedGroup {
            gotos: 0,
            shared: None,
            chain,
        }
    }

    /// Finds [`Ctx::under`] and the labels the computed gotos `computed` are homed at
    /// ([`Ctx::homed`]): a label of frame F is homed at a list holding it when that list
    /// is the lowest holding both the label and a computed goto whose chain has F (the two
    /// are in different lists under it, or one is in it). Walks up from each label and
    /// each computed goto, not over their pairs.
    fn find_under(&mut self, computed: &[(NodeId, usize)]) {
        // Each list holding `node` with the index of the statement holding it there, and
        // the way down from it: the list under it on the way, or the node itself.
        let ancestors = |ctx: &Self, node: NodeId| {
            let mut way = Way::Node(node);
            let mut found = Vec::new();
            for at in std::iter::successors(Some(node), |&at| ctx.lists[ctx.nodes[at].list].parent)
            {
                let list = ctx.nodes[at].list;
                found.push((list, ctx.nodes[at].index, way));
                way = Way::List(list);
            }
            found
        };
        let mut labels = Vec::new();
        for entry in self.scope.labels.iter() {
            let target = self.label_target(&entry.name);
            let frame = frame_code(self.scope, self.scope.marker(entry.definition).frame);
            let (id, node) = (self.targets[target].id, self.targets[target].node);
            for (list, index, _) in ancestors(self, node) {
                crate::splice::count(1);
                let range = self.under.ranges.entry(list).or_insert((id, id));
                *range = (range.0.min(id), range.1.max(id));
                let held = (self.under.by_frame)
                    .entry((list, frame))
                    .or_insert((0, index, index));
                *held = (held.0 + 1, held.1.min(index), held.2.max(index));
            }
            labels.push((id, frame, node));
        }
        // For each list and frame: two ways down from the list to computed gotos that
        // reach that frame's labels (one, or the same twice).
        let mut holding: HashMap<(ListId, i64), (Way, Way)> = HashMap::new();
        for &(node, group) in computed {
            for (list, _, way) in ancestors(self, node) {
                for &frame in &self.computed_groups[group].chain {
                    crate::splice::count(1);
                    let held = holding.entry((list, frame)).or_insert((way, way));
                    if held.0 == held.1 && held.0 != way {
                        held.1 = way;
                    }
                }
            }
        }
        for (id, frame, node) in labels {
            for (list, _, way) in ancestors(self, node) {
                crate::splice::count(1);
                if let Some(&(a, b)) = holding.get(&(list, frame))
                    && (a != way || b != way)
                {
                    self.homed.entry(list).or_default().insert(id);
                }
            }
        }
    }

    /// The lists the computed goto `node` of `group` jumps home to, innermost first: each
    /// with the index of the statement holding the goto there and the first and last index
    /// of those holding its labels (a label's home is the lowest list holding both ends,
    /// [`Ctx::home`]). Walks up from the goto, not over the labels.
    pub(super) fn computed_homes(
        &self,
        node: NodeId,
        group: usize,
    ) -> Vec<(ListId, usize, usize, usize)> {
        let chain = &self.computed_groups[group].chain;
        let total: usize = (chain.iter())
            .map(|&frame| {
                self.under
                    .by_frame
                    .get(&(0, frame))
                    .map_or(0, |held| held.0)
            })
            .sum();
        let mut homes = Vec::new();
        let mut below = 0;
        let mut at = node;
        while below < total {
            let (list, index) = (self.nodes[at].list, self.nodes[at].index);
            let (mut count, mut first, mut last) = (0, usize::MAX, 0);
            for &frame in chain {
                if let Some(&(held, a, b)) = self.under.by_frame.get(&(list, frame)) {
                    (count, first, last) = (count + held, first.min(a), last.max(b));
                }
            }
            if count > below {
                homes.push((list, index, first, last));
                below = count;
            }
            let Some(parent) = self.lists[list].parent else {
                break;
            };
            at = parent;
        }
        homes
    }

    /// What the computed goto `node` of `group` becomes: its value into the register `v`,
    /// the number of its label into `t` (0 for none: `ValueError`), then a jump for each
    /// way out. The computed gotos of one frame reach the same labels: two or more share
    /// one search and message ([`Ctx::shared_searches`]). Its label's home is the innermost
    /// of its homes whose range of numbers holds it ([`Under::ranges`]): the innermost goes
    /// on in its loop, the others break out alike, so that one test picks the way.
    pub(super) fn computed(&mut self, tr: &Translator<'a>, node: NodeId, group: usize) -> Vec<Out> {
        let Names { v, t, s, m, .. } = &tr.names;
        let NodeKind::Computed(marker) = self.nodes[node].kind else {
            unreachable!()
        };
        let MarkerKind::ComputedGoto { target } = self.scope.marker(marker).kind else {
            unreachable!()
        };
        let line = tr.text.line(self.nodes[node].range.start());
        let mut outs = vec![Out::line(
            line,
            format!("{v} = ({})", tr.text.slice(target)),
        )];
        match self.computed_groups[group].shared {
            _ if self.one_search => {
                let b = &tr.names.b;
                let chain = &self.computed_groups[group].chain;
                let chain = match chain.as_slice() {
                    [one] => format!("({one},)"),
                    _ => format!(
                        "({})",
                        chain
                            .iter()
                            .map(i64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                outs.extend([
                    Out::compound(0, format!("try: {t} = {s}({v}, {chain})")),
                    Out::compound(0, format!("except BaseException: {t} = 0")),
                    Out::compound(
                        0,
                        format!("if not {t} or {b}[{t}] not in {chain}: raise {m}({v}, {chain})"),
                    ),
                ]);
            }
            Some(shared) => outs.extend([
                Out::compound(0, format!("try: {t} = {s}{shared}({v})")),
                Out::compound(0, format!("except BaseException: {t} = 0")),
                Out::compound(
                    0,
                    format!("if not {t}: raise ValueError({m}{shared} % ({v},))"),
                ),
            ]),
            None => {
                let (keys, message) = self.search_and_message(group);
                outs.extend([
                    Out::compound(0, format!("try: {t} = {}", expression(v, &keys))),
                    Out::compound(0, format!("except BaseException: {t} = 0")),
                    Out::compound(
                        0,
                        format!("if not {t}: raise ValueError({message} % ({v},))"),
                    ),
                ]);
            }
        }
        let homes = self.computed_homes(node, group);
        crate::splice::count(homes.len());
        let mut ways: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
        for (home, ..) in homes {
            let code = self.jump_home(node, home, t);
            let range = self.under.ranges[&home];
            // The same way as the home inside it: this home's range holds that one's.
            match ways.last_mut() {
                Some((last, runs)) if *last == code => *runs = vec![range],
                _ => ways.push((code, vec![range])),
            }
        }
        match ways.as_slice() {
            [(code, _)] => outs.push(Out::line(0, code.clone())),
            _ => outs.extend(branches(t, &ways)),
        }
        outs
    }

    /// The search over the register `v` for the labels of `group` (a label's name, its
    /// number) and the `ValueError` message's literal, `%r` for the value.
    pub(super) fn search_and_message(&self, group: usize) -> (Vec<(String, i64)>, String) {
        let chain = &self.computed_groups[group].chain;
        let mut names: Vec<(&str, i64)> = (self.scope.labels.iter())
            .filter(|entry| {
                let frame = self.scope.marker(entry.definition).frame;
                chain.contains(&frame_code(self.scope, frame))
            })
            .map(|entry| {
                let target = self.label_target(&entry.name);
                (entry.name.as_str(), self.targets[target].id)
            })
            .collect();
        names.sort_unstable();
        let keys: Vec<(String, i64)> = (names.iter())
            .map(|&(name, id)| (py_str(name), id))
            .collect();
        let plain: Vec<&str> = names.iter().map(|&(name, _)| name).collect();
        let message = format!(
            "{}%r{}",
            NO_SUCH_LABEL.replace('%', "%%"),
            no_such_label_text(&self.scope.qualname, &plain).replace('%', "%%")
        );
        (keys, py_str(&message))
    }

    /// The statements that define the shared searches and messages, for the start of the
    /// scope: `s{n} = lambda v: search`, `m{n} = message`.
    pub(super) fn shared_searches(&self, tr: &Translator<'a>) -> Vec<String> {
        let Names { v, s, m, .. } = &tr.names;
        if self.one_search {
            return self.one_search(tr);
        }
        let mut shared = Vec::new();
        for (group, found) in self.computed_groups.iter().enumerate() {
            if let Some(number) = found.shared {
                let (keys, message) = self.search_and_message(group);
                shared.push(format!(
                    "{s}{number} = lambda {v}: {}",
                    expression(v, &keys)
                ));
                shared.push(format!("{m}{number} = {message}"));
            }
        }
        shared
    }

    /// The statements of [`Ctx::one_search`] for the start of the scope: the table `n` of
    /// the scope's labels by name, each with its [`frame_code`] and number, and `b` of their
    /// frames by number; the search `s` giving the number of the label a value names (0 for
    /// none), whose frame each goto then tests against its chain `c`; and `m`, which makes
    /// the `ValueError` of a value that names none of `c`'s labels, listing them as
    /// [`no_such_label_text`] does. A `str` is searched among all the labels at once: which
    /// `<` and `==` run on a `str` cannot be seen. Any other value goes through the search a
    /// goto over `c`'s labels alone has in gotopy's own code, the same comparisons in the
    /// same order ([`crate::search::balanced`]: a `str` subclass may compare as it likes),
    /// after its keys are picked out of `n` (their count is the last one's index plus one:
    /// the names differ). Lambdas and literals only, so that all of it joins the scope's first
    /// line, and no builtin but `ValueError` is read from the scope (its own names may hide
    /// `sorted`, `len` or `type`; MicroPython's lists have no `__len__`).
    fn one_search(&self, tr: &Translator<'a>) -> Vec<String> {
        let Names { v, s, m, n, b, .. } = &tr.names;
        let mut names = Vec::new();
        let mut frames = vec!["-1".to_owned(); self.targets.len() + 1];
        for entry in self.scope.labels.iter() {
            let id = self.targets[self.label_target(&entry.name)].id;
            let frame = frame_code(self.scope, self.scope.marker(entry.definition).frame);
            names.push((entry.name.as_str(), frame, id));
            frames[id as usize] = frame.to_string();
        }
        names.sort_unstable();
        let keys: Vec<(String, i64)> = (names.iter())
            .map(|&(name, _, id)| (py_str(name), id))
            .collect();
        let table: Vec<String> = (names.iter())
            .map(|&(name, frame, id)| format!("({}, {frame}, {id})", py_str(name)))
            .collect();
        let message = format!(
            "{}%r{}",
            NO_SUCH_LABEL.replace('%', "%%"),
            reach_text(&self.scope.qualname.replace('%', "%%"), "%s")
        );
        // The balanced search over keys[lo:hi], by name (`f` passes itself on).
        let balanced = "lambda v, k, lo, hi, f: 0 if hi <= lo else (k[lo][2] if v == k[lo][0] \
                        else 0) if hi - lo == 1 else f(v, k, lo, (lo + hi) // 2, f) if v < k[(lo \
                        + hi) // 2][0] else f(v, k, (lo + hi) // 2, hi, f)";
        vec![
            format!("{n} = ({},)", table.join(", ")),
            format!("{b} = ({},)", frames.join(", ")),
            format!(
                "{s} = lambda {v}, c, n={n}, k='', f={balanced}: {} if \
                 k.__class__.__class__({v}) is k.__class__ else (lambda keys: f({v}, keys, 0, \
                 keys.index(keys[-1]) + 1 if keys else 0, f))([x for x in n if x[1] in c])",
                expression(v, &keys)
            ),
            format!(
                "{m} = lambda {v}, c, n={n}: ValueError({} % ({v}, ', '.join(['.' + x[0] for x \
                 in n if x[1] in c]) or 'none'))",
                py_str(&message)
            ),
        ]
    }
}

/// The way down from a list to a node under it ([`Ctx::find_under`]): the node itself, when
/// the list holds it, or the list under it on the way. Two nodes whose ways differ have that
/// list for their home.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Node(NodeId),
    List(ListId),
}
