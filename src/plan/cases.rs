//! The cases of a switch, the targets of a computed goto and the words of its failure, and
//! an `except` header's name: what both backends and `translate` read alike.

use crate::front::diagnostic::Diagnostic;
use std::collections::HashMap;
use std::rc::Rc;

use crate::front::scan::{CaseKey, FrameId, FrameKind, Marker, MarkerId, Scope, SwitchId};

use super::lost_track;

/// The start of the `ValueError` message of a computed goto's unknown label.
pub(crate) const NO_SUCH_LABEL: &str = "goto *: no label named ";

/// The rest of that message, after the value's `repr`, for a computed goto in the scope
/// `qualname` that can reach the labels `names`.
pub(crate) fn no_such_label_text(qualname: &str, names: &[&str]) -> String {
    let reachable: Vec<String> = names.iter().map(|name| format!(".{name}")).collect();
    reach_text(
        qualname,
        &if reachable.is_empty() {
            "none".to_owned()
        } else {
            reachable.join(", ")
        },
    )
}

/// [`no_such_label_text`] with the list of reachable labels already written (`translate`
/// writes a `%s` there, for a list built when the error is raised).
pub(crate) fn reach_text(qualname: &str, reachable: &str) -> String {
    format!(" that this goto can jump to in `{qualname}` (it can reach {reachable})")
}

/// The values of the cases of `switch`, each with its case marker, in Python's order.
pub(crate) fn switch_cases(scope: &Scope, switch: SwitchId) -> Vec<(&CaseKey, MarkerId)> {
    let mut cases: Vec<(&CaseKey, MarkerId)> = (scope.case_values(switch))
        .map(|(value, case)| (&value.value, case))
        .collect();
    cases.sort_by(|a, b| python_order(a.0, b.0));
    cases
}

/// The labels the computed goto `marker` may jump to, sorted: those SPEC 4 lets it reach,
/// by the checker's own rule. Leaving a `try` statement with `finally` on the way to one is
/// refused: its `finally` body would have to go on to a label chosen at run time.
pub(crate) fn computed_targets(scope: &Scope, marker: MarkerId) -> Result<Rc<[&str]>, Diagnostic> {
    Reachable::new(scope).of(marker)
}

/// The labels the computed gotos of one scope may reach ([`computed_targets`]), decided
/// once for each frame a computed goto is in: the rule reads nothing else of the goto, and
/// a scope with G computed gotos over L labels would otherwise decide G times L jumps.
pub(crate) struct Reachable<'s> {
    scope: &'s Scope,
    /// The sorted names, or the first label on whose way a `try` with `finally` is left.
    by_frame: HashMap<Option<FrameId>, Result<Rc<[&'s str]>, &'s str>>,
}

impl<'s> Reachable<'s> {
    pub(crate) fn new(scope: &'s Scope) -> Self {
        Reachable {
            scope,
            by_frame: HashMap::new(),
        }
    }

    /// The scope whose computed gotos it decides.
    pub(crate) fn scope(&self) -> &'s Scope {
        self.scope
    }

    /// [`computed_targets`] of the computed goto `marker`.
    pub(crate) fn of(&mut self, marker: MarkerId) -> Result<Rc<[&'s str]>, Diagnostic> {
        let scope = self.scope;
        let goto = scope.marker(marker);
        let found = self
            .by_frame
            .entry(goto.frame)
            .or_insert_with(|| reachable_from(scope, goto));
        match found {
            Ok(names) => Ok(Rc::clone(names)),
            // The checker refuses it (G200, `check::finally_left`) before any backend plans.
            Err(name) => Err(lost_track(
                goto.range,
                &format!(
                    "a computed goto that may leave a `try` statement with `finally` (to \
                     label `.{name}`) got past the checker"
                ),
            )),
        }
    }
}

/// The sorted names of the labels a goto in `goto`'s frame may jump to, or the first on
/// whose way it would leave a `try` statement with `finally`.
fn reachable_from<'s>(scope: &'s Scope, goto: &Marker) -> Result<Rc<[&'s str]>, &'s str> {
    let mut names: Vec<&str> = Vec::new();
    for name in legal_labels(scope, goto) {
        let left = scope.frames_left(goto.frame, name).unwrap_or_default();
        if left
            .iter()
            .any(|&frame| scope.frame(frame).kind == FrameKind::TryFinally)
        {
            return Err(name);
        }
        names.push(name);
    }
    names.sort_unstable();
    Ok(names.into())
}

/// The names of the labels SPEC 4 lets a goto in `goto`'s frame jump to (the checker's own
/// rule), in the scope's order: what a computed goto there may reach, before the backends
/// refuse leaving a `try` statement with `finally`.
pub(crate) fn legal_labels<'s, 'g>(
    scope: &'s Scope,
    goto: &'g Marker,
) -> impl Iterator<Item = &'s str> + use<'s, 'g> {
    crate::splice::count(scope.labels.iter().count());
    scope.labels.iter().filter_map(move |entry| {
        let label = scope.marker(entry.definition);
        let legal = crate::front::check::jump(scope, goto, label, &entry.name).is_none();
        legal.then_some(entry.name.as_str())
    })
}

/// The number of the innermost frame (in the SPEC's sense) at or around `frame`: its index
/// plus one, or 0 for the scope's own level. A computed goto in a frame may reach exactly
/// the labels whose number is in its [`frame_chain`].
pub(crate) fn frame_code(scope: &Scope, frame: Option<FrameId>) -> i64 {
    std::iter::successors(frame, |&id| scope.frame(id).parent)
        .find(|&id| scope.frame(id).kind.is_frame())
        .map_or(0, |id| id.0 as i64 + 1)
}

/// The [`frame_code`]s of the frames whose labels a computed goto in `frame` may reach,
/// innermost first: those around it up to the innermost `finally` body or `except*`
/// handler, or up to the scope's own level (SPEC 4: a goto leaves frames, never enters one).
pub(crate) fn frame_chain(scope: &Scope, frame: Option<FrameId>) -> Vec<i64> {
    let mut chain = Vec::new();
    for id in std::iter::successors(frame, |&id| scope.frame(id).parent) {
        let kind = scope.frame(id).kind;
        if kind.is_frame() {
            chain.push(id.0 as i64 + 1);
        }
        if matches!(
            kind,
            FrameKind::Finally | FrameKind::Except { is_star: true }
        ) {
            return chain;
        }
    }
    chain.push(0);
    chain
}

/// The most labels a computed goto that may leave frames searches in line. A search in line
/// costs a few instructions per label at each place, and a few comparisons per jump; a call
/// of the search function ([`search_function_text`]) costs a constant per place, and per jump
/// what the interpreter takes to make and run a Python function (1.3 to 3.7 us more than
/// the comparisons in line on RustPython, docs/performance.md). So the function serves only
/// the places whose search in line would be long: below this bound the code of G places
/// over L labels grows as G, not G times L.
pub(crate) const IN_LINE_AT_MOST: usize = 64;

/// The labels of `scope` that `kept` keeps, by [`frame_code`]: each one's number (its index
/// among the scope's labels, plus one) and name, in source order (so by number).
pub(crate) fn labels_by_frame<'s>(
    scope: &'s Scope,
    kept: impl Fn(&str) -> bool,
) -> HashMap<i64, Vec<(i64, &'s str)>> {
    let mut by_frame: HashMap<i64, Vec<(i64, &'s str)>> = HashMap::new();
    for (index, entry) in scope.labels.iter().enumerate() {
        let name = entry.name.as_str();
        if kept(name) {
            let code = frame_code(scope, scope.marker(entry.definition).frame);
            (by_frame.entry(code).or_default()).push((index as i64 + 1, name));
        }
    }
    by_frame
}

/// The levels of a computed goto in `frame` when it goes through the search function: it
/// may reach more than [`IN_LINE_AT_MOST`] of the labels `by_frame` ([`labels_by_frame`]),
/// some outside its own frame, and every frame it may leave is a `for` loop (or the body
/// of a `while switch`, which keeps nothing). Each level that holds labels, innermost first:
/// its frame code and the `for` loops a jump there leaves, innermost first. `None` for a
/// goto that searches in line.
pub(crate) fn search_levels(
    scope: &Scope,
    frame: Option<FrameId>,
    by_frame: &HashMap<i64, Vec<(i64, &str)>>,
) -> Option<Vec<(i64, Vec<FrameId>)>> {
    let chain = frame_chain(scope, frame);
    let codes: Vec<i64> = (chain.iter().copied())
        .filter(|code| by_frame.contains_key(code))
        .collect();
    let reachable: usize = codes.iter().map(|code| by_frame[code].len()).sum();
    if reachable <= IN_LINE_AT_MOST || codes.iter().all(|&code| code == chain[0]) {
        return None;
    }
    let mut levels = Vec::with_capacity(codes.len());
    let mut fors = Vec::new();
    let mut at = frame;
    for code in codes {
        let anchor = (code > 0).then(|| FrameId(code as usize - 1));
        while at != anchor {
            let id = at?;
            match scope.frame(id).kind {
                FrameKind::For { .. } => fors.push(id),
                FrameKind::SwitchBody(_) => {}
                _ => return None,
            }
            at = scope.frame(id).parent;
        }
        levels.push((code, fors.clone()));
    }
    Some(levels)
}

/// The text of the search function over the labels `by_frame` ([`search_function_text`]), and
/// the frame code of each label by number (-1 for a number no label kept has).
pub(crate) fn search_table(
    scope: &Scope,
    by_frame: &HashMap<i64, Vec<(i64, &str)>>,
) -> (String, Vec<i64>) {
    let mut frames = vec![-1; scope.labels.iter().count() + 1];
    let mut labels = Vec::new();
    for (&code, numbered) in by_frame {
        for &(number, name) in numbered {
            frames[number as usize] = code;
            labels.push((name, code, number));
        }
    }
    labels.sort_unstable();
    (search_function_text(&scope.qualname, &labels), frames)
}

/// The name the search function of [`search_function_text`] has in its text.
pub(crate) const SEARCH_FUNCTION: &str = "search";

/// The file name of the search function's code, which no tracer or coverage tool confuses
/// with the program's.
pub(crate) const SEARCH_FILE: &str = "<gotopy>";

/// The text of a module defining `search(v, c, m)`, the search that computed gotos in many
/// frames of the scope `qualname` call in the bytecode, over its `labels`: each one's name,
/// [`frame_code`] and number (never 0), sorted by name. It gives the number of the label
/// `v` names among those whose frame is in the chain `c` ([`frame_chain`]), or 0 for none;
/// with `m` true, the `ValueError` message for `v` instead, listing those labels as
/// [`no_such_label_text`] does. A `str` is found among all the labels by one conditional
/// expression, a balanced search without a loop (its comparisons cannot be told apart),
/// then its frame tested; any other value by the search a computed goto over the labels of
/// `c` has in line, the same comparisons in the same order ([`crate::search::balanced`]),
/// so that a `str` subclass compares as it says, and what those comparisons raise (an
/// `Exception`) is no match, as it is in line. No other name outside the function is read:
/// the scope's own names may hide any builtin. An interrupt, or what a tracer raises, goes
/// on from the goto, as from any call.
pub(crate) fn search_function_text(qualname: &str, labels: &[(&str, i64, i64)]) -> String {
    let table: String = (labels.iter())
        .map(|&(name, frame, number)| {
            format!(
                "({}, {frame}, {number}), ",
                crate::literal::str_literal(name, '"')
            )
        })
        .collect();
    // The position of each label in `n`, plus one: 0 is no label.
    let keys: Vec<(String, i64)> = (labels.iter().enumerate())
        .map(|(at, &(name, _, _))| (crate::literal::str_literal(name, '"'), at as i64 + 1))
        .collect();
    let found = crate::search::expression("v", &keys);
    let message = format!(
        "{}%r{}",
        NO_SUCH_LABEL.replace('%', "%%"),
        reach_text(&qualname.replace('%', "%%"), "%s")
    );
    let message = crate::literal::str_literal(&message, '"');
    format!(
        "def {SEARCH_FUNCTION}(v, c, m):
    n = ({table})
    if m:
        return {message} % (v, ', '.join(['.' + x[0] for x in n if x[1] in c]) or 'none')
    s = ''.__class__
    if s.__class__(v) is s:
        i = {found}
        return n[i - 1][2] if i and n[i - 1][1] in c else 0
    k = [x for x in n if x[1] in c]
    lo = 0
    hi = k.__len__()
    try:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if v < k[mid][0]:
                hi = mid
            else:
                lo = mid
        if hi - lo == 1 and v == k[lo][0]:
            return k[lo][2]
    except Exception:
        pass
    return 0
"
    )
}

/// How Python orders two case values of one kind: integers by value, `str` by code point
/// (which UTF-8 byte order preserves), `bytes` bytewise.
pub(crate) fn python_order(a: &CaseKey, b: &CaseKey) -> std::cmp::Ordering {
    match (a, b) {
        (CaseKey::Int(a), CaseKey::Int(b)) => a.cmp(b),
        (CaseKey::Str(a), CaseKey::Str(b)) => a.cmp(b),
        (CaseKey::Bytes(a), CaseKey::Bytes(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// The `as` name of an `except ... as name` header's source text, if it has one.
pub(crate) fn handler_name(header: &str) -> Option<&str> {
    let is_identifier = |c: char| c.is_alphanumeric() || c == '_';
    let name_start = header
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_identifier(c))
        .last()?
        .0;
    let before = header.get(..name_start)?.trim_end().strip_suffix("as")?;
    if before.ends_with(is_identifier) {
        return None;
    }
    header.get(name_start..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_name_follows_as() {
        assert_eq!(handler_name("except ValueError as error"), Some("error"));
        assert_eq!(handler_name("except (A, B) as e"), Some("e"));
        assert_eq!(handler_name("except ValueError"), None);
        assert_eq!(handler_name("except alias"), None);
        assert_eq!(handler_name("except has"), None);
    }

    /// The checker's linear rule for computed gotos that may leave a `try` statement with
    /// `finally` (`check::finally_left`, G200) refuses exactly where the targets of the
    /// plan, decided label by label, would leave one, and the verdicts are those worked out
    /// by hand.
    #[test]
    fn the_checker_refuses_exactly_the_computed_gotos_whose_targets_leave_a_try() {
        let shapes: [(&str, bool); 9] = [
            // Labels outside the `try`, inside it, before it.
            ("try:\n goto *n\nfinally:\n pass\nlabel .out\n", true),
            ("try:\n goto *n\n label .inside\nfinally:\n pass\n", false),
            ("label .before\ntry:\n goto *n\nfinally:\n pass\n", true),
            // In a `for` in the `try`: its own labels and the `try`'s, or one outside too.
            (
                "try:\n for x in n:\n  goto *x\n  label .f\n label .t\nfinally:\n pass\n",
                false,
            ),
            (
                "try:\n for x in n:\n  goto *x\nfinally:\n pass\nlabel .out\n",
                true,
            ),
            // In the `finally` body, which no goto leaves; in a handler, whose `try` has one.
            (
                "try:\n pass\nfinally:\n goto *n\n label .f\nlabel .out\n",
                false,
            ),
            (
                "try:\n pass\nexcept E:\n goto *n\nfinally:\n pass\nlabel .out\n",
                true,
            ),
            // Nested: a label between the two `try` statements, reached by leaving the inner.
            (
                "try:\n try:\n  goto *n\n finally:\n  pass\n label .mid\nfinally:\n pass\n",
                true,
            ),
            // A label in a `for` outside is entered, so never a target.
            (
                "try:\n goto *n\nfinally:\n pass\nfor x in n:\n label .f\n",
                false,
            ),
        ];
        for (body, refused) in shapes {
            let indented: String = body.lines().map(|line| format!("    {line}\n")).collect();
            let text = format!("@goto\ndef f(n):\n{indented}");
            let source = crate::Source::new("t.py", text.as_str());
            let parsed =
                crate::front::parse::parse(&source).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let module = crate::front::scan::scan(
                parsed.syntax(),
                parsed.tokens(),
                &source,
                crate::Options::new(),
            );
            let scope = &module.scopes[1];
            let checked = crate::front::check::check(&module, &source)
                .iter()
                .any(|d| d.message.contains("may leave a `try` statement"));
            let goto = (scope.markers.iter())
                .find(|m| matches!(m.kind, crate::front::scan::MarkerKind::ComputedGoto { .. }))
                .expect("a computed goto");
            let planned = reachable_from(scope, goto).is_err();
            assert_eq!((checked, planned), (refused, refused), "{text}");
        }
    }
}
