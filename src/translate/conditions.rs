//! The tests the output makes of the register and of a computed goto's or switch's value:
//! the guards of a statement list's parts (a chain, or a balanced tree), the branches by
//! number after a computed goto or a loop, ranges of numbers, and the Python literals of
//! names and case values (the balanced search over them is `crate::search::expression`).

use super::*;

/// One part of a statement list entered with the register set: its first line, the
/// highest target number in it (`None`: none, only its first part), and its statements.
pub(super) struct Part {
    pub(super) line: usize,
    pub(super) last: Option<i64>,
    pub(super) body: Vec<Out>,
}

/// Lists of up to this many parts are a chain of guards, one per part.
const CHAIN: usize = 16;

/// The parts of a statement list, each under a guard that skips it when the register
/// holds a later target (targets are numbered in source order, and the register is 0 once
/// its target is reached). Up to [`CHAIN`] parts, each part has its own guard, on its first
/// line (its label's, which the label leaves free): every statement keeps its line, and a
/// jump to the i-th part takes i tests. More parts nest as a balanced tree, where a jump
/// takes about log2(n) tests but the headers of the subtrees that start at one part need a
/// line each, so statements move down until the end of the subtree gives the lines back.
/// `strict`: the register may hold numbers past the last part, which then is guarded too.
pub(super) fn guarded(k: &str, mut parts: Vec<Part>, strict: bool) -> Vec<Out> {
    if parts.len() > CHAIN {
        return tree(k, parts, strict);
    }
    let last = parts.pop().expect("a part");
    let mut outs: Vec<Out> = parts
        .into_iter()
        .map(|part| Out::block(part.line, guard(k, &part), part.body))
        .collect();
    outs.extend(tree(k, vec![last], strict));
    outs
}

fn guard(k: &str, part: &Part) -> String {
    match part.last {
        Some(last) => format!("if {k} <= {last}"),
        None => format!("if not {k}"),
    }
}

/// The balanced tree of guards: the first half under `if k <= LAST` (its highest target),
/// then the second half, each half split again. Running through the parts in order takes
/// one test per part, as a chain would; up to three parts it is that chain exactly.
fn tree(k: &str, mut parts: Vec<Part>, strict: bool) -> Vec<Out> {
    if parts.len() == 1 {
        let part = parts.pop().expect("one part");
        return if strict {
            vec![Out::block(part.line, guard(k, &part), part.body)]
        } else {
            part.body
        };
    }
    let second = parts.split_off(parts.len() / 2);
    let header = guard(k, parts.last().expect("a first half"));
    let line = parts[0].line;
    let mut outs = vec![Out::block(line, header, tree(k, parts, false))];
    outs.extend(tree(k, second, strict));
    outs
}

/// The statements of `(number, code)` pairs grouped by code, in the order codes first come.
pub(super) fn grouped(pairs: Vec<(i64, String)>) -> Vec<(String, Vec<i64>)> {
    let mut groups: Vec<(String, Vec<i64>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (number, code) in pairs {
        match index.get(&code) {
            Some(&at) => groups[at].1.push(number),
            None => {
                index.insert(code.clone(), groups.len());
                groups.push((code, vec![number]));
            }
        }
    }
    groups
}

/// `if lo <= value <= hi or value == c: code` / `elif ...` for each group of [`runs`], the
/// last one as `else`.
pub(super) fn branches(value: &str, groups: &[(String, Vec<(i64, i64)>)]) -> Vec<Out> {
    let count = groups.len();
    groups
        .iter()
        .enumerate()
        .map(|(index, (code, runs))| {
            crate::splice::count(runs.len());
            let test = runs
                .iter()
                .map(|&(lo, hi)| {
                    if lo == hi {
                        format!("{value} == {lo}")
                    } else {
                        format!("{lo} <= {value} <= {hi}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" or ");
            let header = match index {
                _ if index + 1 == count => "else".to_owned(),
                0 => format!("if {test}"),
                _ => format!("elif {test}"),
            };
            Out::block(0, header, vec![Out::line(0, code.clone())])
        })
        .collect()
}

/// The numbers of each group of [`grouped`] as runs `(lo, hi)`: the longest stretches of all
/// the groups' numbers, sorted, that belong to that group alone (each number belongs to one
/// group). [`branches`] tests a value that is always one of those numbers, so a run may
/// hold numbers no group has. Labels are numbered in source order, so that the jumps of a
/// post-check make a run or two per action.
pub(super) fn runs(groups: Vec<(String, Vec<i64>)>) -> Vec<(String, Vec<(i64, i64)>)> {
    let mut owners: Vec<(i64, usize)> = (groups.iter().enumerate())
        .flat_map(|(group, (_, numbers))| numbers.iter().map(move |&number| (number, group)))
        .collect();
    crate::splice::count(owners.len());
    owners.sort_unstable();
    let mut runs = vec![Vec::new(); groups.len()];
    let mut last = None;
    for (number, group) in owners {
        match runs[group].last_mut() {
            Some((_, hi)) if last == Some(group) => *hi = number,
            _ => runs[group].push((number, number)),
        }
        last = Some(group);
    }
    (groups.into_iter().map(|(code, _)| code))
        .zip(runs)
        .collect()
}

/// `lo <= K <= hi` as Python, or `K == lo`.
pub(super) fn within(k: &str, ids: &BTreeSet<i64>) -> String {
    let (lo, hi) = (ids.first().copied(), ids.last().copied());
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => format!("{k} == {lo}"),
        (Some(lo), Some(hi)) => format!("{lo} <= {k} <= {hi}"),
        _ => "False".to_owned(),
    }
}

/// A Python string literal of `text`, in double quotes where it can be.
pub(super) fn py_str(text: &str) -> String {
    crate::literal::str_literal(text, '"')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the groups, the first test that holds for one of their numbers is its own
    /// group's, with no more runs than the changes of group along the sorted numbers.
    #[test]
    fn each_number_takes_its_own_groups_branch() {
        let mut next = crate::splice::numbers(3);
        for _ in 0..200 {
            let count = 1 + next(4);
            let mut groups: Vec<(String, Vec<i64>)> = (0..count)
                .map(|group| (group.to_string(), Vec::new()))
                .collect();
            for number in 0..next(40) {
                if next(3) > 0 {
                    let group = next(count);
                    groups[group].1.push(number as i64 * 2 + 1);
                }
            }
            let runs = runs(groups.clone());
            // As few runs as the numbers allow: one more at each change of group.
            let mut owners: Vec<(i64, usize)> = (groups.iter().enumerate())
                .flat_map(|(group, (_, numbers))| numbers.iter().map(move |&n| (n, group)))
                .collect();
            owners.sort_unstable();
            let changes = 1 + owners
                .windows(2)
                .filter(|pair| pair[0].1 != pair[1].1)
                .count();
            let written: usize = runs.iter().map(|(_, runs)| runs.len()).sum();
            assert_eq!(written, changes.min(owners.len()), "{groups:?}: {runs:?}");
            for (group, (_, numbers)) in groups.iter().enumerate() {
                for number in numbers {
                    let taken = runs.iter().position(|(_, runs)| {
                        runs.iter().any(|&(lo, hi)| (lo..=hi).contains(number))
                    });
                    assert_eq!(taken, Some(group), "{number} in {groups:?}: {runs:?}");
                }
            }
        }
        let groups = vec![
            ("inside".to_owned(), vec![1, 2, 3, 9, 10]),
            ("after".to_owned(), vec![7, 8, 4]),
        ];
        let runs: Vec<_> = runs(groups).into_iter().map(|(_, runs)| runs).collect();
        assert_eq!(runs, [vec![(1, 3), (9, 10)], vec![(4, 8)]]);
    }
}
