//! A block that only one goto enters, moved to that goto ([`Shape::Inline`]): what a person
//! writes for a state of a state machine that one test enters.
//!
//! ```text
//! label .other                   label .other
//! c = text[i]                    c = text[i]
//! if c.isalpha():                if c.isalpha():
//!     goto .name                     label .name
//! others += 1                        i += 1
//! goto .other                        if text[i].isalnum():
//! label .name                            goto .name
//! i += 1                             names += 1
//! if text[i].isalnum():              goto .other
//!     goto .name                 others += 1
//! names += 1                     goto .other
//! goto .other
//! ```
//!
//! The block runs where the goto went, and nothing else runs it: the statement before its
//! label never falls through (a goto, `return`, `raise`, `break` or `continue`), no goto
//! but this one enters it from outside (those inside it, a loop of its own, go with it), no
//! label is inside it, and its last statement never falls through either, so that what
//! follows the goto's `if` runs after neither. The goto is the last statement of a clause
//! of an `if` (at any depth of `if`s only) in the label's list, or a statement of that list:
//! the loops, `with` and `try` statements around the block are the same there, so each
//! `break`, `continue`, `return` and exception leaves the same statements. A block whose
//! last statement falls into the next label moves too, a goto to that label after it (a
//! loop entered by a jump to its test at the bottom: `goto .test` / `label .body` / S /
//! `label .test` / `if C: goto .body` is then `label .test` / `if C:` / S / `goto .test`). The block's lines take the goto's line and
//! push the lines between down; its old place keeps one blank line, so that nothing after
//! it moves. The passes after this one take the loops it brings together (a second
//! [`Shape::Repeat`]).

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// The moves a pass took, in all its lists: no site inside another's block (the blocks of
/// one list are apart, and so are its sites; a site of one list may lie in the block of a
/// list nested in it).
#[derive(Default)]
pub(super) struct Moves {
    /// The regions the blocks moved held, each start with its end.
    regions: BTreeMap<TextSize, TextSize>,
    /// Where the gotos they moved to start.
    sites: BTreeSet<TextSize>,
}

impl Finder<'_> {
    /// The blocks of one list that one goto enters, each moved to that goto
    /// ([`Shape::Inline`]).
    pub(super) fn inlines(&mut self, list: &[Stmt]) {
        // The labels after a statement that never falls through, with their blocks: up to
        // the next label, or the list's end.
        let labels: Vec<usize> = (0..list.len())
            .filter(|&at| self.markers.labels.contains_key(&list[at].start()))
            .collect();
        // Each with the label it falls into, if it does.
        let mut blocks: HashMap<&str, (usize, usize, Option<&str>)> = HashMap::new();
        for (nth, &at) in labels.iter().enumerate() {
            let next = labels.get(nth + 1).copied();
            let end = next.unwrap_or(list.len());
            let falls = (!self.never_falls(&list[end - 1]))
                .then(|| next.map(|next| self.markers.labels[&list[next].start()].as_str()));
            let fits =
                at > 0 && self.never_falls(&list[at - 1]) && end > at + 1 && falls != Some(None);
            if fits {
                let name = self.markers.labels[&list[at].start()].as_str();
                blocks.insert(name, (at, end, falls.flatten()));
            }
        }
        if blocks.is_empty() {
            return;
        }
        // The gotos that end a clause of an `if` in this list, at any depth of `if`s, and
        // those of the list itself.
        let mut sites: Vec<(&str, TextRange)> = Vec::new();
        let mut work: Vec<&[Stmt]> = Vec::new();
        for stmt in list {
            if let Stmt::If(_) = stmt {
                work.extend(child_lists(stmt));
            } else if let Some(name) = self.markers.gotos.get(&stmt.start())
                && blocks.contains_key(name.as_str())
            {
                sites.push((name.as_str(), stmt.range()));
            }
        }
        while let Some(clause) = work.pop() {
            crate::splice::count(clause.len());
            if let Some(last) = clause.last()
                && let Some(name) = self.markers.gotos.get(&last.start())
                && blocks.contains_key(name.as_str())
            {
                sites.push((name.as_str(), last.range()));
            }
            for stmt in clause {
                if let Stmt::If(_) = stmt {
                    work.extend(child_lists(stmt));
                }
            }
        }
        for (name, goto) in sites {
            let (at, end, falls) = blocks[name];
            let (label, block) = (&list[at], &list[at + 1..end]);
            let range = TextRange::new(block[0].start(), block[block.len() - 1].end());
            if range.contains(goto.start()) || self.markers.labelled(range) {
                continue;
            }
            // Every other goto to the label is inside the block.
            let inside = self.gotos_within(range, name);
            if self.markers.named.get(&label.start()) != Some(&(inside + 1)) {
                continue;
            }
            let Some(edits) = self.inline_edits(goto, label, range, (inside > 0, falls)) else {
                continue;
            };
            let region = edits[1].0;
            let Moves { regions, sites } = &mut self.moves;
            let meets = (regions.range(..=goto.start()).next_back())
                .is_some_and(|(_, &end)| end > goto.start())
                || sites.range(region.start()..region.end()).next().is_some();
            if meets {
                continue;
            }
            regions.insert(region.start(), region.end());
            sites.insert(goto.start());
            self.skips.push(Skip {
                edits,
                skipped: None,
                label: Some(label.range()),
                dead: None,
                becomes: None,
            });
        }
    }

    /// How many gotos inside `range` name `name`.
    pub(super) fn gotos_within(&self, range: TextRange, name: &str) -> usize {
        let gotos = &self.markers.ordered_gotos;
        let from = gotos.partition_point(|&start| start < range.start());
        let to = gotos.partition_point(|&start| start < range.end());
        crate::splice::count(to - from);
        (gotos[from..to].iter())
            .filter(|&start| self.markers.gotos[start] == name)
            .count()
    }

    /// The lines of `region` as deep as `new` where they were as deep as `old` (a comment
    /// less deep than that: as deep as `new`), its blank lines as they are.
    pub(super) fn reindented(&self, region: TextRange, old: &str, new: &str) -> String {
        let mut moved = String::new();
        for line in self.text[region].split_inclusive('\n') {
            if line.trim().is_empty() {
                moved.push_str(line);
            } else if let Some(rest) = line.strip_prefix(old) {
                moved.push_str(new);
                moved.push_str(rest);
            } else {
                moved.push_str(new);
                moved.push_str(line.trim_start());
            }
        }
        moved
    }

    /// The edits that move the statements of `block` (and its `label`, where gotos inside
    /// the block name it: `looped`) to the line of `goto`, as deep as it, then empty the
    /// region they held but for one line; `None` where the text does not allow it. A block
    /// that `falls` into the label after it takes a goto to that label at its end, on the
    /// line its region gives up: the region goes whole.
    fn inline_edits(
        &self,
        goto: TextRange,
        label: &Stmt,
        block: TextRange,
        (looped, falls): (bool, Option<&str>),
    ) -> Option<Vec<(TextRange, String)>> {
        let (lines, text) = (self.lines, self.text);
        // The goto's line, which holds the goto alone, with no comment.
        let site = TextRange::new(
            lines.start(goto.start()),
            *lines.starts.get(lines.line(goto.end()) + 1)?,
        );
        let (first, last) = (
            lines.line(if looped { label.start() } else { block.start() }),
            lines.line(block.end()),
        );
        let clear = text[site].trim() == &text[goto]
            && lines.alone(text, label.range())
            && lines.line(label.start()) < lines.line(block.start())
            && text[usize::from(block.end())..].starts_with('\n')
            && !lines.inside[first..=last + 1].contains(&true)
            && !lines.tabbed(label.start(), block.end())
            && !lines.tabbed(goto.start(), goto.end());
        if !clear {
            return None;
        }
        // The indentation of the block's lines, and the goto's.
        let indent = |at: TextSize| &text[usize::from(lines.start(at))..usize::from(at)];
        let (old, new) = (indent(label.start()), indent(goto.start()));
        let region = TextRange::new(lines.starts[first], lines.starts[last + 1]);
        let mut moved = self.reindented(region, old, new);
        let Some(next) = falls else {
            return Some(vec![(site, moved), (region, "\n".to_owned())]);
        };
        // The goto written as the source writes this one, to the label after.
        let (name, next) = self.renamed(goto, next)?;
        moved.push_str(new);
        moved.push_str(&text[usize::from(goto.start())..usize::from(name.start())]);
        moved.push_str(&next);
        moved.push('\n');
        Some(vec![(site, moved), (region, String::new())])
    }
}
