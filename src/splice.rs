//! Replacing many ranges of an instruction list at once, for both backends' lowering: a
//! function of 64,000 blocks has tens of thousands of sites, and splicing each into the
//! list in turn moves the rest of the list each time (sites times length). Here the list is
//! built again once, front to back.
//!
//! The lowering also counts what it moves and visits here ([`work`]), so that a test can
//! hold its cost proportional to the size of the code without timing anything.

use std::cell::Cell;

/// What replaces one range of a list: `len` items from `at` become `items`.
pub(crate) struct Splice<T> {
    pub(crate) at: usize,
    pub(crate) len: usize,
    pub(crate) items: Vec<T>,
}

/// `items` with every splice applied, in one pass; `splices` in the order of their `at`,
/// not overlapping. Gives the list and where each splice's items start in it; `None` when
/// a splice overlaps the one before it or ends past the list.
pub(crate) fn splice_all<T>(
    items: Vec<T>,
    splices: Vec<Splice<T>>,
) -> Option<(Vec<T>, Vec<usize>)> {
    let total = items.len();
    let added: usize = splices.iter().map(|splice| splice.items.len()).sum();
    let mut out = Vec::with_capacity(total + added);
    let mut starts = Vec::with_capacity(splices.len());
    let mut rest = items.into_iter();
    // How many of the old items are copied or dropped so far.
    let mut done = 0;
    for splice in splices {
        let end = splice.at.checked_add(splice.len)?;
        if splice.at < done || end > total {
            return None;
        }
        out.extend(rest.by_ref().take(splice.at - done));
        rest.by_ref().take(splice.len).for_each(drop);
        done = end;
        starts.push(out.len());
        out.extend(splice.items);
    }
    out.extend(rest);
    count(total + added);
    Some((out, starts))
}

thread_local! {
    static WORK: Cell<u64> = const { Cell::new(0) };
}

/// Counts `units` of work of the lowering on this thread: items moved or visited.
pub(crate) fn count(units: usize) {
    WORK.with(|work| work.set(work.get() + units as u64));
}

/// The work the lowerings on this thread have counted so far (items of instruction lists
/// moved, searched or visited by the steps whose cost once grew faster than the code). A
/// test compares it between inputs of different sizes; it is a count, not a time.
///
/// Not API: public for the tests that guard the lowering's cost.
#[doc(hidden)]
pub fn work() -> u64 {
    WORK.with(Cell::get)
}

/// Pseudo-random numbers for tests, the same for the same `seed`: each call gives one below
/// its argument (0 for 0), from a linear congruential generator.
#[cfg(test)]
pub(crate) fn numbers(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |below: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % below.max(1)
    }
}

/// A function of `blocks` blocks under labels, each jumping back to an earlier one and on
/// to a later one when a condition holds, for the tests of the cost of each route: every
/// block is reachable without a goto, so CPython compiles it as written.
#[cfg(test)]
pub(crate) fn generated(blocks: usize) -> String {
    let mut text = String::from("@goto\ndef f(steps):\n    a = 1\n    n = 0\n");
    let mut next = numbers(7);
    for i in 0..blocks {
        let back = next(i + 1);
        let on = i + 1 + next(blocks - i);
        text += &format!(
            "    label .b{i}\n    a = (a * 3 + {i}) % 65521\n    n += 1\n    if n >= steps:\n        goto .done\n    if a % 7 == 0:\n        goto .b{back}\n"
        );
        if on < blocks {
            text += &format!("    if a % 5 == 1:\n        if n % 2:\n            goto .b{on}\n");
        }
    }
    text += "    label .done\n    return a\n";
    text
}

/// [`generated`] code with a local of its own per block, as three-address code numbers its
/// temporaries, read on both sides of a join: `t7 = (a * 3 + 7) % 65521` and `a = t7 if t7
/// % 2 else t7 // 2`.
#[cfg(test)]
pub(crate) fn generated_with_temporaries(blocks: usize) -> String {
    let mut text = String::new();
    for line in generated(blocks).lines() {
        match line.strip_prefix("    a = (a * 3 + ") {
            Some(rest) => {
                let block = rest.split(')').next().unwrap_or_default();
                text += &format!("    t{block} = (a * 3 + {rest}\n");
                text += &format!("    a = t{block} if t{block} % 2 else t{block} // 2\n");
            }
            None => text += &format!("{line}\n"),
        }
    }
    text
}

/// [`generated`] code with a computed goto over every label in every sixteenth block, as a
/// generator of three-address code writes the return at the end of each procedure: G
/// computed gotos over L labels must cost G plus L, not G times L.
#[cfg(test)]
pub(crate) fn generated_with_computed(blocks: usize) -> String {
    let mut text = String::new();
    for line in generated(blocks).lines() {
        text += line;
        text += "\n";
        if let Some(block) = line.strip_prefix("    label .b")
            && block.parse::<usize>().is_ok_and(|block| block % 16 == 15)
        {
            text += "    if steps < 0:\n        goto *('b' + str(-steps))\n";
        }
    }
    text
}

/// A function of `blocks` blocks, half of them under labels in a `for` loop and half after
/// it, with a computed goto in every sixteenth block of the loop over every label: inside
/// the loop, whose labels it goes on to, and after it, which it must leave for. Its labels
/// have two ways out, and each computed goto must cost what its ways cost, not its labels.
#[cfg(test)]
pub(crate) fn generated_with_computed_in_a_loop(blocks: usize) -> String {
    let mut text = String::from("@goto\ndef f(steps):\n    n = 0\n    for _ in range(1):\n");
    for i in 0..blocks / 2 {
        text += &format!(
            "        label .a{i}\n        n += 1\n        if n >= steps:\n            goto .done\n"
        );
        if i % 16 == 15 {
            text += "        if steps < 0:\n            goto *('b' + str(-steps))\n";
        }
    }
    for i in 0..blocks - blocks / 2 {
        text += &format!("    label .b{i}\n    n += 2\n    if n >= steps:\n        goto .done\n");
    }
    text += "    label .done\n    return n\n";
    text
}

/// A function of `blocks` blocks under labels in runs of sixteen: a `for` loop of four,
/// the last with a computed goto, then twelve after the loop. Each computed goto is in a
/// frame of its own and may reach the labels of its loop and those after every loop (more
/// than 64 at 100 blocks, so every size takes each lowering's search function): G
/// computed gotos in G frames over L labels must cost G plus L, not G times L.
#[cfg(test)]
pub(crate) fn generated_with_computed_in_loops(blocks: usize) -> String {
    let mut text = String::from("@goto\ndef f(steps):\n    n = 0\n");
    for i in 0..blocks {
        if i % 16 == 0 {
            text += "    for _ in range(1):\n";
        }
        let pad = if i % 16 < 4 { "        " } else { "    " };
        text += &format!("{pad}label .b{i}\n{pad}n += 1\n");
        if i % 16 == 3 {
            text += "        if steps < 0:\n            goto *('b' + str(-steps))\n";
        }
    }
    text += "    return n\n";
    text
}

/// Holds the cost of a route linear: `run` on [`generated`] code of sixteen times the blocks
/// may count at most about sixteen times the work (20 times), where a step that grows with
/// the square would count 256 times.
#[cfg(test)]
pub(crate) fn assert_linear(route: &str, run: impl Fn(&str)) {
    assert_linear_on(route, generated, run);
}

/// [`assert_linear`] on the code `generate` writes for a number of blocks.
#[cfg(test)]
pub(crate) fn assert_linear_on(
    route: &str,
    generate: impl Fn(usize) -> String,
    run: impl Fn(&str),
) {
    let work = |blocks: usize| {
        let text = generate(blocks);
        let before = work();
        run(&text);
        work() - before
    };
    // Small sizes: the tests run in a debug build, and the CPython route compiles each
    // module with two interpreters (sixteen times the size still shows a square as 256).
    let (small, large) = (work(100), work(1_600));
    assert!(small > 0, "{route}: no work counted");
    assert!(
        large <= small * 20,
        "{route}: 100 blocks cost {small}, 1,600 blocks {large}: more than 20 times"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `translate` of a generated module, which must succeed.
    fn translates(text: &str) {
        use crate::{Options, Source};
        crate::translate::translate_source(&Source::new("big.py", text), Options::default())
            .expect("the generated module translates");
    }

    fn splice(at: usize, len: usize, items: &[i32]) -> Splice<i32> {
        Splice {
            at,
            len,
            items: items.to_vec(),
        }
    }

    #[test]
    fn splices_apply_as_one_at_a_time_from_the_back_would() {
        let items: Vec<i32> = (0..10).collect();
        let splices = vec![
            splice(0, 1, &[100, 101]),
            splice(3, 0, &[300]),
            splice(5, 3, &[]),
            splice(9, 1, &[900]),
        ];
        let mut expected = items.clone();
        for s in splices.iter().rev() {
            expected.splice(s.at..s.at + s.len, s.items.iter().copied());
        }
        let (out, starts) = splice_all(items, splices).expect("in order");
        assert_eq!(out, expected);
        assert_eq!(out, [100, 101, 1, 2, 300, 3, 4, 8, 900]);
        assert_eq!(starts, [0, 4, 7, 8]);
    }

    #[test]
    fn overlapping_or_past_the_end_is_refused() {
        let items: Vec<i32> = (0..4).collect();
        assert!(splice_all(items.clone(), vec![splice(1, 2, &[]), splice(2, 1, &[])]).is_none());
        assert!(splice_all(items, vec![splice(3, 2, &[])]).is_none());
    }

    /// The analysis of where locals may be unbound once held a state of every local at
    /// every instruction: with a temporary per block, the square of the function's size.
    #[test]
    fn a_temporary_per_block_costs_what_the_code_costs() {
        use crate::{Options, Source};
        let expected = "    t2 = (a * 3 + 2) % 65521\n    a = t2 if t2 % 2 else t2 // 2\n";
        assert!(generated_with_temporaries(3).contains(expected));
        assert_linear_on("compile, temporaries", generated_with_temporaries, |text| {
            crate::compile::compile_source(&Source::new("big.py", text), Options::default())
                .expect("the generated module compiles");
        });
    }

    /// A `return` in every block, a label after each: `prepare` guards every one, and the
    /// rewrite once spliced each guard out of the list in turn (16,000 blocks: 20 s).
    #[test]
    fn a_return_per_block_costs_what_the_code_costs() {
        use crate::{Options, Source};
        let with_returns = |blocks: usize| {
            let early = "    n += 1\n    if a == 0:\n        return n\n";
            generated(blocks).replace("    n += 1\n", early)
        };
        assert_eq!(with_returns(2).matches("return n").count(), 2);
        assert_linear_on("compile, a return per block", with_returns, |text| {
            crate::compile::compile_source(&Source::new("big.py", text), Options::default())
                .expect("the generated module compiles");
        });
        assert_linear_on("translate, a return per block", with_returns, translates);
    }

    /// A computed goto in every sixteenth block, each over every label: the gotos of one
    /// place share one search.
    #[test]
    fn many_computed_gotos_cost_what_the_code_costs() {
        use crate::{Options, Source};
        assert_eq!(generated_with_computed(32).matches("goto *").count(), 2);
        assert_linear_on(
            "compile, many computed gotos",
            generated_with_computed,
            |text| {
                crate::compile::compile_source(&Source::new("big.py", text), Options::default())
                    .expect("the generated module compiles");
            },
        );
        assert_linear_on(
            "translate, many computed gotos",
            generated_with_computed,
            translates,
        );
    }

    /// Computed gotos in a loop whose labels are in it and after it: `translate` once wrote,
    /// for each, a test per label of which way out it takes (`_goto_t == 1 or _goto_t == 2
    /// ...`), so G of them over L labels cost G times L in text and at run time.
    #[test]
    fn computed_gotos_with_two_ways_out_cost_what_the_code_costs() {
        let text = generated_with_computed_in_a_loop(32);
        assert_eq!(text.matches("goto *").count(), 1);
        assert_eq!(text.matches("label .b").count(), 16);
        assert_linear_on(
            "translate, computed gotos with two ways out",
            generated_with_computed_in_a_loop,
            translates,
        );
    }

    /// Computed gotos each in a frame of its own (a loop): each route wrote a search over
    /// every label each may reach, and decided and wrote the way out to each of them, so G
    /// of them over L labels cost G times L. Now one search serves them all: in
    /// `translate` a lambda, in the RustPython lowering (and the CPython one, whose test
    /// is its own) a function compiled once per code object, each goto's ways out costing
    /// its levels.
    #[test]
    fn computed_gotos_in_many_frames_cost_what_the_code_costs() {
        use crate::{Options, Source};
        let text = generated_with_computed_in_loops(32);
        assert_eq!(text.matches("goto *").count(), 2);
        assert_eq!(text.matches("for _ in").count(), 2);
        assert_eq!(text.matches("label .b").count(), 32);
        assert_linear_on(
            "compile, computed gotos in many frames",
            generated_with_computed_in_loops,
            |text| {
                crate::compile::compile_source(&Source::new("big.py", text), Options::default())
                    .expect("the generated module compiles");
            },
        );
        assert_linear_on(
            "translate, computed gotos in many frames",
            generated_with_computed_in_loops,
            translates,
        );
    }

    /// Gotos back to earlier labels only, each the one statement of an `if`: the passes of
    /// `translate` that make loops walked the statements between each goto and its label,
    /// the square of the function's size where nothing nests the blocks.
    #[test]
    fn gotos_back_cost_what_the_code_costs() {
        let back_only = |blocks: usize| {
            let mut text = String::from("@goto\ndef f(steps):\n    a = 1\n    n = 0\n");
            let mut next = numbers(7);
            for i in 0..blocks {
                let back = next(i + 1);
                text += &format!(
                    "    label .b{i}\n    a = (a * 3 + {i}) % 65521\n    n += 1\n    if n >= steps:\n        return a\n    if a % 7 == 0:\n        goto .b{back}\n"
                );
            }
            text + "    return a\n"
        };
        assert_linear_on("translate, gotos back", back_only, translates);
    }

    /// A dispatcher of states, each entered by one test and going back to the top: the
    /// ladder pass compared each of its blocks' names with every one before it, and the
    /// inline pass moves each state under its test.
    #[test]
    fn states_entered_by_one_test_cost_what_the_code_costs() {
        let states = |count: usize| {
            let mut text = String::from("@goto\ndef f(x):\n    s = 0\n    label .top\n");
            for k in 0..count {
                text += &format!("    if x == {k}:\n        goto .s{k}\n");
            }
            text += "    return s\n";
            for k in 0..count {
                text +=
                    &format!("    label .s{k}\n    s += {k}\n    x = s % {count}\n    goto .top\n");
            }
            text
        };
        let translated = crate::translate::translate_source(
            &crate::Source::new("big.py", states(8)),
            crate::Options::default(),
        )
        .expect("the states translate");
        assert!(!translated.text.contains("_goto_"), "{}", translated.text);
        assert_linear_on("translate, states", states, translates);
    }

    /// Blocks that gotos under `try` statements start again and leave, and statements that
    /// nothing reaches after a goto: the block pass reads each list's gotos once, and the
    /// pass for dead code each scope's names once, however many blocks the scope holds.
    #[test]
    fn blocks_and_dead_code_cost_what_the_code_costs() {
        let blocks = |count: usize| {
            let mut text = String::from("@goto\ndef f(n):\n    k = 0\n");
            for i in 0..count {
                text += &format!(
                    "    label .r{i}\n    k += 1\n    try:\n        if k % 3 == {}:\n            \
                     goto .r{i}\n        if n == {i}:\n            goto .o{i}\n        n += k\n    \
                     except KeyError:\n        n = 0\n    n -= 1\n    label .o{i}\n    goto .d{i}\n    \
                     assert n > 0\n    label .d{i}\n",
                    i % 3
                );
            }
            text + "    return n\n"
        };
        let translated = crate::translate::translate_source(
            &crate::Source::new("big.py", blocks(4)),
            crate::Options::default(),
        )
        .expect("the blocks translate");
        let text = &translated.text;
        assert!(
            !text.contains("_goto_") && !text.contains("assert"),
            "{text}"
        );
        assert_linear_on("translate, blocks", blocks, translates);
    }

    #[test]
    fn the_rustpython_lowering_and_translate_cost_what_the_code_costs() {
        use crate::{Options, Source};
        assert_linear("compile", |text| {
            crate::compile::compile_source(&Source::new("big.py", text), Options::default())
                .expect("the generated module compiles");
        });
        assert_linear("translate", translates);
    }
}
