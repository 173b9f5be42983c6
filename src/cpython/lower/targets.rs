//! Choosing every site's targets on the code as CPython laid it out, before any splice:
//! the analysis of that code (stack depths, the copies of `finally` bodies), which copy of
//! a label each goto goes to, and where a switch's cases and a computed goto's labels are.

use super::*;
use crate::copies::CopyKeys;
use crate::cpython::bytecode::Indices;

/// The code as CPython laid it out (after the first pass, before any splice), where every
/// target is chosen.
pub(super) struct Analysis {
    /// Each instruction's index in the body's list of items, which does not change while
    /// targets are chosen ([`Analysis::instr`]).
    item_of: Vec<usize>,
    pub(super) at_label: Indices<Label>,
    pub(super) index_of: Indices<InstrId>,
    pub(super) stack: Vec<Option<i64>>,
    /// The order of the copies of `finally` bodies ([`crate::copies`]).
    pub(super) keys: CopyKeys<Label>,
    /// For each site's instruction, its rank among the copies of the same site, and how many
    /// there are.
    pub(super) ranks: HashMap<usize, (usize, usize)>,
}

impl Analysis {
    pub(super) fn of(body: &Body) -> Result<Analysis, BytecodeError> {
        let flow = Flow::new(body)?;
        let mut item_of = Vec::with_capacity(flow.len());
        let mut index_of = Indices::new();
        for (at, item) in body.items.iter().enumerate() {
            if let Item::Instr(instr) = item {
                index_of.insert(instr.id, item_of.len());
                item_of.push(at);
            }
        }
        let at_label = flow.labels().clone();
        Ok(Analysis {
            item_of,
            at_label,
            index_of,
            stack: Vec::new(),
            keys: flow.copy_keys(),
            ranks: HashMap::new(),
        })
    }

    /// The instruction at `index` among the instructions of `body`, the list analysed.
    pub(super) fn instr<'b>(&self, body: &'b Body, index: usize) -> Option<&'b Instr> {
        let at = *self.item_of.get(index)?;
        body.items.get(at).and_then(Item::instr)
    }

    /// The depth before the instruction a label names (`None` where unreachable or after
    /// the last instruction).
    pub(super) fn depth_at(&self, label: Label) -> Option<i64> {
        self.at_label
            .get(label)
            .and_then(|at| self.stack.get(at).copied().flatten())
    }
}

impl Analysis {
    /// The index among the instructions of a site's instruction.
    pub(super) fn site_index(&self, body: &Body, site: Site<'_>) -> Result<usize, LowerError> {
        let found = match body.items.get(site.at()) {
            Some(Item::Instr(instr)) => self.index_of.get(instr.id),
            _ => None,
        };
        found.ok_or_else(|| {
            LowerError::Check(BytecodeError::new("a site is not among the instructions"))
        })
    }
}

impl<'p> Lowering<'p> {
    /// Every site with its targets, chosen on the code as CPython laid it out, before any
    /// splice. Code that only the new jumps reach (a case, a label after `return`, a
    /// trampoline) has no stack depth there yet: each target whose depth is known from its
    /// site is seeded with it, and the depths computed again, until nothing changes. A
    /// switch or computed goto that is still unreachable then is in code that never runs
    /// (`None`).
    pub(super) fn decide(
        &mut self,
        sites: &[Site<'p>],
    ) -> Result<Vec<Option<Targets<'p>>>, LowerError> {
        let mut analysis = Analysis::of(&self.body)?;
        // The copies of each site, in the order of the code as written.
        let mut copies: HashMap<(u8, usize), Vec<usize>> = HashMap::new();
        for &site in sites {
            let same = match site {
                Site::Goto(_, plan) => (0, std::ptr::from_ref(plan) as usize),
                Site::Switch(_, plan) => (1, std::ptr::from_ref(plan) as usize),
                Site::Computed(_, number) => (2, number),
            };
            copies
                .entry(same)
                .or_default()
                .push(analysis.site_index(&self.body, site)?);
        }
        for indices in copies.into_values() {
            if let [index] = indices[..] {
                analysis.ranks.insert(index, (0, 1)); // the one copy, as `in_order` gives it
                continue;
            }
            let groups = in_order(&analysis, &self.body, indices);
            let count = groups.len();
            for (rank, group) in groups.into_iter().enumerate() {
                for index in group {
                    analysis.ranks.insert(index, (rank, count));
                }
            }
        }
        let mut seeds: Vec<(usize, i64)> = Vec::new();
        let mut decided: Vec<Option<Targets<'p>>> = sites.iter().map(|_| None).collect();
        let mut known: Option<Vec<Option<i64>>> = None;
        loop {
            // What the first computed goto of each place chose, for the others there (this
            // round: a later one may see labels reached since).
            let mut chosen_at: HashMap<SharedPlace, Rc<Vec<(&'p GotoPlan, usize)>>> =
                HashMap::new();
            // Seeds only add code that is reached: the earlier depths stay.
            let depths = self.body.depths(&seeds, known.take())?;
            analysis.stack = depths.before;
            let mut more: BTreeMap<usize, i64> = BTreeMap::new();
            // Trampolines start at the depth of their guard.
            for &(entry, reference) in &self.entry_depth_of {
                let Some(at) = analysis.index_of.get(reference) else {
                    return Err(internal(
                        "a trampoline's guard is not in the code",
                        self.first_marker(),
                    ));
                };
                let depth = analysis.stack[at];
                if let (Some(at), Some(depth)) = (analysis.at_label.get(entry), depth)
                    && analysis.stack.get(at).is_some_and(Option::is_none)
                {
                    more.insert(at, depth);
                }
            }
            self.analysis = Some(analysis);
            for (number, site) in sites.iter().enumerate() {
                let analysis = self.analysis()?;
                let index = analysis.site_index(&self.body, *site)?;
                let Some(reached) = analysis.stack[index] else {
                    continue;
                };
                if decided[number].is_some() {
                    continue;
                }
                let place = match *site {
                    Site::Computed(_, plan) => self.shared_place(index, plan),
                    _ => None,
                };
                if let Some(chosen) = place.and_then(|place| chosen_at.get(&place)) {
                    // Its labels were entered from the first.
                    decided[number] = Some(Targets::Computed(Rc::clone(chosen)));
                    continue;
                }
                let Some(targets) = self.targets(index, *site)? else {
                    continue;
                };
                if let (Some(place), Targets::Computed(chosen)) = (place, &targets) {
                    chosen_at.insert(place, Rc::clone(chosen));
                }
                let entered = self.entered(*site, &targets, reached);
                let analysis = self.analysis()?;
                for (label, depth) in entered {
                    if let Some(at) = analysis.at_label.get(label)
                        && analysis.stack.get(at).is_some_and(Option::is_none)
                    {
                        more.insert(at, depth);
                    }
                }
                decided[number] = Some(targets);
            }
            analysis = self
                .analysis
                .take()
                .ok_or_else(|| internal("no analysis", self.first_marker()))?;
            if more.is_empty() {
                break;
            }
            known = Some(std::mem::take(&mut analysis.stack));
            seeds = more.into_iter().collect();
        }
        self.analysis = Some(analysis);
        let mut result = Vec::with_capacity(sites.len());
        for (site, targets) in sites.iter().zip(decided) {
            let targets = match (targets, site) {
                // A goto in code that never runs still becomes a jump: its marker must not run.
                (None, Site::Goto(..)) => {
                    let index = self.analysis()?.site_index(&self.body, *site)?;
                    self.targets(index, *site)?
                }
                (targets, _) => targets,
            };
            result.push(targets);
        }
        Ok(result)
    }

    pub(super) fn analysis(&self) -> Result<&Analysis, LowerError> {
        self.analysis.as_ref().ok_or_else(|| {
            internal(
                "the targets are chosen before the code is analysed",
                self.first_marker(),
            )
        })
    }

    /// Where a site's jumps go, on the code before any splice: a goto's copy of its target,
    /// a switch's case and end labels, or a computed goto's goto plans, each with the copy
    /// of its target; `None` for a dispatch in code that never runs.
    pub(super) fn targets(
        &self,
        site: usize,
        kind: Site<'p>,
    ) -> Result<Option<Targets<'p>>, LowerError> {
        let analysis = self.analysis()?;
        match kind {
            Site::Goto(_, plan) => {
                if self.missing.contains(plan.name.as_str()) {
                    return Err(removed(&plan.name, plan.keyword));
                }
                let what = || format!("label `.{}`", plan.name);
                let depth = self.left(analysis.stack[site].unwrap_or(0), plan);
                let copy = self.choose(
                    site,
                    depth,
                    self.candidates(plan),
                    &what,
                    plan.keyword,
                    false,
                )?;
                Ok(Some(Targets::Goto(copy)))
            }
            Site::Switch(_, plan) => {
                let Some(depth) = analysis.stack[site] else {
                    return Ok(None);
                };
                let base = depth - kind.above();
                let mut cases = Vec::with_capacity(plan.cases.len());
                for case in &plan.cases {
                    let what = || format!("case `{}`", case_repr(&case.value));
                    cases.push(self.choose_place(site, base, case.keyword, &what)?);
                }
                let what = || "the end of this switch".to_owned();
                let end = self.choose_place(site, base, plan.end, &what)?;
                Ok(Some(Targets::Switch { cases, end }))
            }
            Site::Computed(_, number) => {
                let Some(depth) = analysis.stack[site] else {
                    return Ok(None);
                };
                let base = depth - kind.above();
                let plan: &'p ComputedPlan = &self.scope.computed[number];
                let targets = match &plan.search {
                    ComputedSearch::InLine { targets, .. } => targets,
                    ComputedSearch::Function(levels) => {
                        return self
                            .level_targets(site, base, levels, plan.keyword)
                            .map(Some);
                    }
                };
                // From below them, as `goto .name` to each label it may reach.
                let mut chosen = Vec::with_capacity(targets.len());
                for target in targets.iter() {
                    if self.missing.contains(target.name.as_str()) {
                        return Err(removed(&target.name, plan.keyword));
                    }
                    let what = || format!("label `.{}`", target.name);
                    let depth = self.left(base, target);
                    let copy = self.choose(
                        site,
                        depth,
                        self.candidates(target),
                        &what,
                        plan.keyword,
                        false,
                    )?;
                    chosen.push((target, copy));
                }
                Ok(Some(Targets::Computed(Rc::new(chosen))))
            }
        }
    }

    pub(super) fn choose_place(
        &self,
        site: usize,
        depth: i64,
        span: Position,
        what: &dyn Fn() -> String,
    ) -> Result<Label, LowerError> {
        let copies = self
            .places
            .get(&span)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if copies.is_empty() {
            return Err(LowerError::Refused {
                message: format!("CPython's compiler removed {} as unreachable", what()),
                at: span,
                help: REMOVED,
            });
        }
        Ok(copies[self.choose(site, depth, copies, what, span, true)?])
    }

    /// Which copy of a target a jump from instruction `site` goes to.
    ///
    /// CPython compiles a `finally` body once per way out of its `try` (and 3.12+ copies
    /// small exit blocks), and each trampoline is one more copy, so a label can have several
    /// copies, and so can a goto. A goto goes to a copy in the same copy of every `finally`
    /// body around the label (`copies`), where the stack is `depth` deep, as the goto leaves
    /// it. When exactly one copy fits, or all that fit start equal blocks, that is the goto's
    /// own. When several still fit: a case or the end of a switch (`forward`) is the first
    /// that follows its search in the code, since CPython lays out a switch's body right
    /// after its search in each copy; a label is copy k of a goto's copy k, in the order of
    /// the code as written ([`crate::copies`]). Otherwise gotopy cannot tell, and refuses.
    pub(super) fn choose(
        &self,
        site: usize,
        depth: i64,
        candidates: &[Label],
        what: &dyn Fn() -> String,
        span: Position,
        forward: bool,
    ) -> Result<usize, LowerError> {
        let analysis = self.analysis()?;
        let empty = HashMap::new();
        // A trampoline's copy is unreachable until its gotos are lowered: no depth yet.
        let goto_copies = (analysis.instr(&self.body, site))
            .and_then(|instr| self.copies_of.get(&instr.id))
            .unwrap_or(&empty);
        let fitting: Vec<usize> = (candidates.iter().enumerate())
            .filter(|&(_, &label)| {
                let there = analysis.depth_at(label);
                (analysis.stack[site].is_none() || there.is_none() || there == Some(depth))
                    && self.same_copies(goto_copies, label)
            })
            .map(|(number, _)| number)
            .collect();
        let index_of = |number: usize| analysis.at_label.get(candidates[number]).unwrap_or(0);
        if let Some(&first) = fitting.first()
            && (fitting.len() == 1
                || fitting[1..].iter().all(|&n| {
                    same_block(
                        |index| analysis.instr(&self.body, index),
                        self.shapes(),
                        index_of(first),
                        index_of(n),
                        false,
                    )
                }))
        {
            return Ok(first);
        }
        if forward {
            let after = fitting.iter().copied().filter(|&n| index_of(n) > site);
            if let Some(nearest) = after.min_by_key(|&n| index_of(n)) {
                return Ok(nearest);
            }
        }
        // Several copies fit: copy k of the jump goes to copy k of its target, in the order
        // of the code as written, when both have as many copies.
        if let Some(&(rank, count)) = analysis.ranks.get(&site)
            && !forward
        {
            let at: Vec<usize> = (0..candidates.len()).map(index_of).collect();
            let groups = in_order(analysis, &self.body, at.clone());
            if groups.len() == count
                && let Some(number) = (0..candidates.len())
                    .find(|&number| fitting.contains(&number) && groups[rank].contains(&at[number]))
            {
                return Ok(number);
            }
        }
        Err(LowerError::Refused {
            message: format!(
                "cannot tell which of CPython's {} copies of {} belongs to this jump (CPython \
                 compiled the `finally` body around them more than once)",
                fitting.len(),
                what(),
            ),
            at: span,
            help: COPIES,
        })
    }

    /// The labels a site's jumps go to, each with the stack depth it has there (`depth`: the
    /// site's).
    pub(super) fn entered(
        &self,
        site: Site<'p>,
        targets: &Targets<'p>,
        depth: i64,
    ) -> Vec<(Label, i64)> {
        let depth = depth - site.above();
        match (site, targets) {
            (Site::Goto(_, plan), Targets::Goto(copy)) => self
                .candidates(plan)
                .get(*copy)
                .map(|&label| vec![(label, self.left(depth, plan))])
                .unwrap_or_default(),
            (_, Targets::Switch { cases, end }) => cases
                .iter()
                .chain([end])
                .map(|&label| (label, depth))
                .collect(),
            (_, Targets::Computed(chosen)) => chosen
                .iter()
                .filter_map(|&(target, copy)| {
                    let label = *self.candidates(target).get(copy)?;
                    Some((label, self.left(depth, target)))
                })
                .collect(),
            (_, Targets::Levels(levels)) => self.levels_entered(levels, depth),
            _ => Vec::new(),
        }
    }

    /// Whether a copy of a label (or trampoline entry) is in the same copy of every
    /// `finally` body around it as the goto: a goto never enters a `finally` body, so every
    /// one around its label is around it too.
    pub(super) fn same_copies(&self, goto_copies: &HashMap<usize, usize>, label: Label) -> bool {
        let Some(marker) = self.marker_of.get(&label) else {
            return true;
        };
        let Some(label_copies) = self.copies_of.get(marker) else {
            return true;
        };
        label_copies
            .iter()
            .all(|(body, run)| goto_copies.get(body) == Some(run))
    }

    /// The copies of where a goto goes: its trampoline's entry, or its label.
    pub(super) fn candidates(&self, plan: &GotoPlan) -> &[Label] {
        let found = match plan.via {
            Some(via) => self.entries.get(&via),
            None => self.labels.get(plan.name.as_str()),
        };
        found.map(Vec::as_slice).unwrap_or_default()
    }

    /// The stack depth a goto leaves from `depth` once it has left its frames.
    pub(super) fn left(&self, depth: i64, plan: &GotoPlan) -> i64 {
        depth
            - plan
                .leaves
                .iter()
                .map(|leave| i64::from(self.shapes().slots(leave.kind)))
                .sum::<i64>()
    }
}

/// The copies at the instructions `indices` in the order of the code as written
/// ([`CopyKeys`]), those next to each other in that order that start equal
/// blocks as one: from 3.12 CPython copies a small block that ends in a return or raise into
/// each block that jumps to it, so one copy of a `finally` body can hold two copies of it.
fn in_order(analysis: &Analysis, body: &Body, mut indices: Vec<usize>) -> Vec<Vec<usize>> {
    indices.sort_by_cached_key(|&index| analysis.keys.key(index));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for index in indices {
        match groups.last_mut() {
            Some(group)
                if same_block(
                    |at| analysis.instr(body, at),
                    body.shapes,
                    group[0],
                    index,
                    false,
                ) =>
            {
                group.push(index);
            }
            _ => groups.push(vec![index]),
        }
    }
    groups
}
