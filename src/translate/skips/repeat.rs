//! A loop made of a label and a conditional goto back to it ([`Shape::Repeat`]): what a
//! BASIC or Fortran port's loop is when it tests at its end (`IF J < M THEN 20`).
//!
//! ```text
//! label .again             while True:
//! S                            S
//! if TEST:                     if not (TEST):
//!     goto .again                  break
//! ```
//!
//! The label's line becomes `while True:` (its comment kept), the goto `break`, and S and
//! the `if` go one level deeper (`if TEST: goto .out` then `goto .again` is that loop
//! too: `if TEST: break`, then `goto .out` after it); a goto to the label inside S, under `if`, `with` and `try`
//! statements only, is `continue`. Taken where no `break` or `continue` in S would be the new loop's, where
//! those gotos alone name the label, and where such loops of one list nest or follow each
//! other, never where they cross; a loop with such a `continue` is taken where no other
//! loop of the pass nests with it (the `continue` would be the innermost one's). Nor where
//! a goto from outside names a label in S: a loop entered in its middle, where a person
//! moves what that goto enters instead (the inline pass, after this one).

use super::*;

impl Finder<'_> {
    /// The repeats of one list ([`Shape::Repeat`]).
    pub(super) fn repeats(&mut self, list: &[Stmt]) {
        // The labels of the list so far by name, and what its statements hold (made for the
        // first loop that may be taken): each loop's body is then a range of them, and no
        // body is walked again for each goto back across it.
        let mut labels: HashMap<&str, usize> = HashMap::new();
        let mut held: Option<Held> = None;
        crate::splice::count(list.len());
        for (end, stmt) in list.iter().enumerate() {
            if let Some(name) = self.markers.labels.get(&stmt.start()) {
                labels.insert(name, end);
            }
            let Some((_, goto)) = lone(stmt) else {
                continue;
            };
            let Some(name) = self.markers.gotos.get(&goto.start()) else {
                continue;
            };
            // `if TEST: goto .out` then `goto .l`: the loop is left where TEST holds, for
            // `.out` (the goto back then goes there, after the loop).
            let alone = |range: TextRange| self.lines.alone(self.text, range);
            let out = (list.get(end + 1))
                .and_then(|next| Some((self.markers.gotos.get(&next.start())?, next)))
                .filter(|&(back, next)| back != name && alone(next.range()))
                .and_then(|(back, next)| Some((back, Some(self.renamed(next.range(), name)?))));
            let exit = labels.get(name.as_str()).copied();
            for (name, out) in std::iter::once((name, None)).chain(out) {
                let Some(&start) = labels.get(name.as_str()) else {
                    continue;
                };
                // Not where the loop holds `.out`: the goto after it would enter it.
                if out.is_some() && exit.is_some_and(|exit| exit > start) {
                    continue;
                }
                let held = held.get_or_insert_with(|| Held::of(self, list));
                if self.repeat(list, (start, end), held, out) {
                    break;
                }
            }
        }
    }

    /// Takes the loop from the label at `start` of `list` to the `if` at `end` whose goto
    /// goes back to it, or (`out`: the edit that makes the goto after it name the `if`'s
    /// label) that leaves it, if it fits: whether it did.
    fn repeat(
        &mut self,
        list: &[Stmt],
        (start, end): (usize, usize),
        held: &Held,
        out: Option<(TextRange, String)>,
    ) -> bool {
        let (label, body, stmt) = (&list[start], &list[start + 1..end], &list[end]);
        let Some((branch, goto)) = lone(stmt) else {
            return false;
        };
        let name = &self.markers.labels[&label.start()];
        let inner = held.gotos(name, start + 1, end);
        let alone = |range: TextRange| self.lines.alone(self.text, range);
        let first = body.first().map_or(stmt.start(), Ranged::start);
        // Loops taken in this pass nest or are apart, never cross; and a `continue` binds
        // to the innermost loop around it, so none nests with one whose body holds a goto
        // that becomes `continue`.
        let region = TextRange::new(label.start(), stmt.end());
        let meets = (self.repeated.iter()).any(|&(other, continues)| {
            let nests = other.contains_range(region) || region.contains_range(other);
            let apart = other.end() <= region.start() || region.end() <= other.start();
            !apart && !nests || nests && (continues || !inner.is_empty())
        });
        let fits = self.markers.named.get(&label.start()) == Some(&(inner.len() + 1))
            && inner.iter().all(|&goto| alone(goto))
            && alone(label.range())
            && alone(stmt.range())
            && self.lines.line(label.end()) < self.lines.line(first)
            && !held.exits(start + 1, end)
            && !self.lines.tabbed(label.start(), stmt.end())
            && !meets
            && !(self.entries.get_or_init(|| Entries::of(self.markers))).inside(region);
        if !fits {
            return false;
        }
        self.repeated.push((region, !inner.is_empty()));
        let mut edits = vec![(goto.range(), "break".to_owned())];
        match out {
            Some(renamed) => edits.push(renamed),
            None => edits.push(self.negated_test(stmt, &branch.test)),
        }
        edits.extend(inner.iter().map(|&goto| (goto, "continue".to_owned())));
        let after = self.lines.starts[self.lines.line(label.end()) + 1];
        let skipped = Some(TextRange::new(after, stmt.end()));
        self.take_each(label, inner.len() + 1, edits, skipped, Some("while True:"));
        true
    }
}

/// What the statements of one list hold, for ranges of them: the gotos a `continue` or
/// `break` may stand for ([`Finder::leaving`]) and the `break` and `continue` statements of
/// a loop around them, each statement walked once.
pub(super) struct Held {
    /// By label name, the gotos in order, each with the index of its statement.
    gotos: HashMap<String, Vec<(usize, TextRange)>>,
    /// How many of the statements before each hold a `break` or `continue`.
    exits: Vec<usize>,
}

impl Held {
    pub(super) fn of(finder: &Finder<'_>, list: &[Stmt]) -> Held {
        let mut gotos: HashMap<String, Vec<(usize, TextRange)>> = HashMap::new();
        let mut exits = vec![0];
        for (at, stmt) in list.iter().enumerate() {
            let one = std::slice::from_ref(stmt);
            finder.leaving(one, |to, goto| {
                gotos.entry(to.to_owned()).or_default().push((at, goto));
            });
            exits.push(exits[at] + usize::from(loop_exit(one)));
        }
        for found in gotos.values_mut() {
            found.sort_by_key(|&(_, goto)| goto.start());
        }
        Held { gotos, exits }
    }

    /// The gotos to `name` in the statements from `from` up to `to`.
    fn gotos(&self, name: &str, from: usize, to: usize) -> Vec<TextRange> {
        (self.found(name, from, to).iter())
            .map(|&(_, goto)| goto)
            .collect()
    }

    /// The gotos to `name` in the statements from `from` up to `to`, each with the index of
    /// its statement.
    pub(super) fn found(&self, name: &str, from: usize, to: usize) -> &[(usize, TextRange)] {
        let Some(found) = self.gotos.get(name) else {
            return &[];
        };
        let first = found.partition_point(|&(at, _)| at < from);
        let last = found.partition_point(|&(at, _)| at < to);
        &found[first..last]
    }

    /// Whether a statement from `from` up to `to` holds a `break` or `continue`.
    pub(super) fn exits(&self, from: usize, to: usize) -> bool {
        self.exits[to] > self.exits[from]
    }
}

/// Where the gotos that name each label lie, for ranges of labels: the first and the last of
/// them (a label reached by value: from everywhere), over the labels in order, in tables of
/// the minimum and maximum over each run of 2^k labels, so that a loop asks in constant time
/// whether a label inside it is named from outside.
pub(super) struct Entries {
    /// Where the labels start, in order.
    starts: Vec<TextSize>,
    /// For each k, the first goto over the labels from each index on, 2^k of them.
    first: Vec<Vec<TextSize>>,
    /// For each k, the last goto over the same labels.
    last: Vec<Vec<TextSize>>,
}

impl Entries {
    pub(super) fn of(markers: &Markers) -> Entries {
        let starts = markers.ordered.clone();
        let (mut first, mut last): (Vec<TextSize>, Vec<TextSize>) = (starts.iter())
            .map(|at| {
                if markers.by_value.contains(&markers.scope[at]) {
                    (TextSize::from(0), TextSize::from(u32::MAX))
                } else {
                    let none = (TextSize::from(u32::MAX), TextSize::from(0));
                    markers.spans.get(at).copied().unwrap_or(none)
                }
            })
            .unzip();
        crate::splice::count(starts.len());
        let (mut firsts, mut lasts) = (Vec::new(), Vec::new());
        let mut width = 1;
        while width <= starts.len() {
            let (next_first, next_last) = (0..(starts.len() + 1).saturating_sub(2 * width))
                .map(|at| {
                    (
                        first[at].min(first[at + width]),
                        last[at].max(last[at + width]),
                    )
                })
                .unzip();
            firsts.push(std::mem::replace(&mut first, next_first));
            lasts.push(std::mem::replace(&mut last, next_last));
            width *= 2;
        }
        Entries {
            starts,
            first: firsts,
            last: lasts,
        }
    }

    /// Whether a label inside `range` (after its start) is named by a goto outside it: a
    /// second way into a loop made of `range`.
    pub(super) fn inside(&self, range: TextRange) -> bool {
        let from = self.starts.partition_point(|&at| at <= range.start());
        let to = self.starts.partition_point(|&at| at < range.end());
        if from >= to {
            return false;
        }
        let k = (to - from).ilog2() as usize;
        let end = to - (1 << k);
        let first = self.first[k][from].min(self.first[k][end]);
        let last = self.last[k][from].max(self.last[k][end]);
        first < range.start() || last >= range.end()
    }
}
