//! The shape of the search both backends emit for a `while switch` or a computed goto: a
//! balanced binary search over the case values sorted as Python orders them, one `<` per
//! level and one `==` at each leaf, so at most ceil(log2(n)) + 1 comparisons, every
//! conditional jump forward. Each backend turns the steps into its own instructions.

/// One step of a search, in the order the code is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Compare the value with key `pivot`; below it, jump to the place `below` (a number
    /// the backend gives a label of its own); else go on with the keys from `pivot` up.
    Less {
        /// The key compared with.
        pivot: usize,
        /// The place the keys below `pivot` are searched from.
        below: usize,
    },
    /// Compare the value with key `key` for equality: the last comparison of a search.
    Equal(usize),
    /// No key is left: no match.
    Nothing,
    /// The place a [`Step::Less`] jumps to.
    Below(usize),
}

/// The steps of a balanced search over `count` sorted keys: the keys from the middle up are
/// searched right after the `<` test, those below it at the place it jumps to.
pub fn balanced(count: usize) -> Vec<Step> {
    fn emit(keys: std::ops::Range<usize>, places: &mut usize, out: &mut Vec<Step>) {
        match keys.len() {
            0 => out.push(Step::Nothing),
            1 => out.push(Step::Equal(keys.start)),
            length => {
                let pivot = keys.start + length / 2;
                let below = *places;
                *places += 1;
                out.push(Step::Less { pivot, below });
                emit(pivot..keys.end, places, out);
                out.push(Step::Below(below));
                emit(keys.start..pivot, places, out);
            }
        }
    }
    let mut out = Vec::new();
    emit(0..count, &mut 0, &mut out);
    out
}

/// A balanced search over `keys` (sorted, as Python orders them: literal text and the
/// number it yields) as one Python conditional expression on `value`: the comparisons of
/// [`balanced`] in its order, 0 where no key is equal (`translate`'s searches, and the
/// search function of computed gotos in the bytecode).
pub(crate) fn expression(value: &str, keys: &[(String, i64)]) -> String {
    fn build(steps: &[Step], at: &mut usize, value: &str, keys: &[(String, i64)]) -> String {
        let step = steps[*at];
        *at += 1;
        match step {
            Step::Nothing => "0".to_owned(),
            Step::Equal(key) => format!("({} if {value} == {} else 0)", keys[key].1, keys[key].0),
            Step::Less { pivot, .. } => {
                let high = build(steps, at, value, keys);
                // The `Below` step that starts the lower half.
                *at += 1;
                let low = build(steps, at, value, keys);
                format!("({low} if {value} < {} else {high})", keys[pivot].0)
            }
            Step::Below(_) => build(steps, at, value, keys),
        }
    }
    crate::splice::count(keys.len());
    build(&balanced(keys.len()), &mut 0, value, keys)
}

#[cfg(test)]
mod tests {
    use super::{Step, balanced};

    #[test]
    fn a_search_compares_at_most_one_more_than_the_height() {
        assert_eq!(balanced(0), [Step::Nothing]);
        assert_eq!(balanced(1), [Step::Equal(0)]);
        assert_eq!(
            balanced(3),
            [
                Step::Less { pivot: 1, below: 0 },
                Step::Less { pivot: 2, below: 1 },
                Step::Equal(2),
                Step::Below(1),
                Step::Equal(1),
                Step::Below(0),
                Step::Equal(0),
            ]
        );
        for count in 1..300usize {
            let steps = balanced(count);
            let equals = steps
                .iter()
                .filter(|step| matches!(step, Step::Equal(_)))
                .count();
            assert_eq!(equals, count, "every key has its leaf");
            // The deepest path: `<` tests on the way down, then one `==`.
            let mut depth = 0usize;
            let mut deepest = 0usize;
            let mut open = Vec::new();
            for step in &steps {
                match step {
                    Step::Less { below, .. } => {
                        depth += 1;
                        open.push((*below, depth));
                    }
                    Step::Equal(_) | Step::Nothing => deepest = deepest.max(depth + 1),
                    Step::Below(place) => {
                        let (_, at) = open.iter().find(|(p, _)| p == place).copied().unwrap();
                        depth = at;
                    }
                }
            }
            assert!(deepest <= count.next_power_of_two().trailing_zeros() as usize + 1);
        }
    }
}
