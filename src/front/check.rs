//! Checking: the rules of SPEC sections 2 to 5 over what `scan` found.
//!
//! Every rule is a function from a scanned scope to diagnostics; none of them stops at the
//! first problem. This module decides what is an error or a warning and says so in words;
//! how a diagnostic is shown belongs to `diagnostic`, and it never looks at the AST.
//!
//! Architecture Invariant: `check` sees only what `scan` recorded, never the syntax tree,
//! and only `check` makes diagnostics of rules (`tests/tidy.rs`).

use std::collections::HashMap;

use ruff_text_size::{Ranged, TextRange};

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::{
    CaseKey, CaseValue, Frame, FrameId, FrameKind, Marker, MarkerId, MarkerKind, Module, Scope,
    ScopeKind, SwitchId,
};
use crate::front::source::Source;

/// All diagnostics for a scanned module, in source order.
pub fn check(module: &Module, source: &Source) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for scope in &module.scopes {
        if scope.rewritten {
            rewritten_scope(module, scope, source, &mut diagnostics);
        } else if let Some(first) = scope.markers.first() {
            diagnostics.push(not_rewritten(scope, first, module.decorator));
        }
    }
    diagnostics.sort_by_key(|diagnostic| (diagnostic.range.start(), diagnostic.code.as_str()));
    diagnostics
}

/// Every rule for a scope gotopy rewrites.
fn rewritten_scope(module: &Module, scope: &Scope, source: &Source, out: &mut Vec<Diagnostic>) {
    misplaced_markers(scope, source, out);
    bound_marker_names(scope, out);
    marker_rules(module, scope, source, out);
    label_rules(scope, out);
    computed_goto_rules(scope, out);
    constant_test_rules(scope, out);
}

/// Markers used inside an expression rather than as statements.
fn misplaced_markers(scope: &Scope, source: &Source, out: &mut Vec<Diagnostic>) {
    for misplaced in &scope.misplaced {
        let diagnostic = Diagnostic::new(
            Code::MarkerInExpression,
            misplaced.range,
            format!("`{}` marker used inside an expression", misplaced.name),
        )
        .label("not a statement of its own");
        out.push(match misplaced.computed_target {
            Some(target) => diagnostic.help(format!(
                "`*` binds tighter than the operators after it; to jump to the label that \
                 the whole expression names, write `goto *({})`",
                &source.text()[target.to_std_range()]
            )),
            None => diagnostic.help(
                "markers are whole statements: `goto .name`, `goto *(expr)`, `label .name`, \
                 `case[value]`, and `switch` only as `while switch *expr:`",
            ),
        });
    }
}

/// Marker names the scope binds as variables.
fn bound_marker_names(scope: &Scope, out: &mut Vec<Diagnostic>) {
    for binding in &scope.bindings {
        out.push(
            Diagnostic::new(
                Code::MarkerNameBound,
                binding.range,
                format!(
                    "`{}` is bound as a local name in a rewritten scope",
                    binding.name
                ),
            )
            .label("bound here")
            .help(format!(
                "gotopy gives `{}` its meaning in {}; rename the variable",
                binding.name,
                scope.describe()
            )),
        );
    }
}

/// The rules of each marker: gotos, malformed markers, cases, switches.
fn marker_rules(module: &Module, scope: &Scope, source: &Source, out: &mut Vec<Diagnostic>) {
    for (index, marker) in scope.markers.iter().enumerate() {
        match &marker.kind {
            MarkerKind::Goto { name, name_range } => match scope.labels.get(name) {
                Some(entry) => {
                    let label = scope.marker(entry.definition);
                    out.extend(jump(scope, marker, label, name));
                }
                None => out.push(unknown_label(module, scope, name, *name_range)),
            },
            MarkerKind::Malformed { message, help } => out.push(
                Diagnostic::new(Code::MalformedMarker, marker.range, message.as_str()).help(*help),
            ),
            MarkerKind::Case { switch: None, .. } => out.push(
                Diagnostic::new(
                    Code::CaseOutsideSwitch,
                    marker.range,
                    "`case` outside a `while switch` body",
                )
                .help(
                    "`case[value]` marks an entry point of the enclosing `while switch *subject:`",
                ),
            ),
            MarkerKind::Case {
                switch: Some(switch),
                ..
            } => out.extend(case_entry(scope, MarkerId(index), *switch)),
            MarkerKind::Switch(switch) => switch_rules(scope, *switch, source, out),
            MarkerKind::Label { .. } | MarkerKind::ComputedGoto { .. } => {}
        }
    }
}

/// Labels defined twice, and labels no goto names (unless a computed goto may).
fn label_rules(scope: &Scope, out: &mut Vec<Diagnostic>) {
    let has_computed_goto = scope
        .markers
        .iter()
        .any(|marker| matches!(marker.kind, MarkerKind::ComputedGoto { .. }));
    for entry in scope.labels.iter() {
        let first = label_name_range(scope.marker(entry.definition));
        for &again in &entry.redefinitions {
            out.push(
                Diagnostic::new(
                    Code::DuplicateLabel,
                    label_name_range(scope.marker(again)),
                    format!("duplicate label `.{}`", entry.name),
                )
                .label("defined again here")
                .related(first, format!("`.{}` is first defined here", entry.name))
                .help("label names must be unique within a function"),
            );
        }
        if entry.gotos.is_empty() && !has_computed_goto {
            out.push(
                Diagnostic::new(
                    Code::UnusedLabel,
                    first,
                    format!("label `.{}` is never used", entry.name),
                )
                .label("no goto names this label"),
            );
        }
    }
}

/// Computed gotos that may leave a `try` statement with `finally` (G200): its `finally` body
/// would have to go on to a label chosen at run time.
fn computed_goto_rules(scope: &Scope, out: &mut Vec<Diagnostic>) {
    let computed = (scope.markers.iter())
        .filter(|marker| matches!(marker.kind, MarkerKind::ComputedGoto { .. }));
    let mut left: HashMap<Option<FrameId>, Option<FrameId>> = HashMap::new();
    let mut labels = None;
    for marker in computed {
        let labels = &*labels.get_or_insert_with(|| FreeLabels::of(scope));
        let Some(finally) = *left
            .entry(marker.frame)
            .or_insert_with(|| finally_left(scope, labels, marker.frame))
        else {
            continue;
        };
        out.push(
            Diagnostic::new(
                Code::CannotRewrite,
                marker.range,
                "cannot rewrite: a computed goto that may leave a `try` statement with \
                 `finally` is not supported",
            )
            .label("may jump to a label outside the `try` statement")
            .related(scope.frame(finally).header, "the `try` statement")
            .help(
                "its `finally` body would have to go on to a label chosen at run time; \
                 dispatch with `if`/`elif` and one `goto .name` per label, or move the \
                 computed goto out of the `try` statement",
            ),
        );
    }
}

/// How many labels each frame holds without a frame between (a computed goto may reach them
/// from there without entering one): its own and those of the `try` bodies and switch
/// bodies inside it, by frame, and the scope's own level's.
struct FreeLabels {
    in_frame: Vec<usize>,
    at_scope_level: usize,
}

impl FreeLabels {
    fn of(scope: &Scope) -> FreeLabels {
        let mut free = FreeLabels {
            in_frame: vec![0; scope.frames.len()],
            at_scope_level: 0,
        };
        for entry in scope.labels.iter() {
            let mut at = scope.marker(entry.definition).frame;
            loop {
                *free.at(at) += 1;
                match at.map(|id| scope.frame(id)) {
                    Some(frame) if !frame.kind.is_frame() => at = frame.parent,
                    _ => break,
                }
            }
        }
        free
    }

    fn at(&mut self, frame: Option<FrameId>) -> &mut usize {
        match frame {
            Some(id) => &mut self.in_frame[id.0],
            None => &mut self.at_scope_level,
        }
    }

    fn get(&self, frame: Option<FrameId>) -> usize {
        frame.map_or(self.at_scope_level, |id| self.in_frame[id.0])
    }
}

/// The `try` statement with `finally` that a computed goto in `frame` may leave on its way
/// to a label it may reach (SPEC 4), if any: going out from `frame` frame by frame (up to a
/// `finally` body or `except*` handler, which no goto leaves), once a `try` is left, any
/// label in the frames further out is one. Linear in the depth of `frame`, so a scope of G
/// computed gotos over L labels costs G plus L.
fn finally_left(scope: &Scope, free: &FreeLabels, frame: Option<FrameId>) -> Option<FrameId> {
    let mut left = None;
    let mut at = frame;
    while let Some(id) = at {
        let inner = scope.frame(id);
        match inner.kind {
            FrameKind::Finally | FrameKind::Except { is_star: true } => return None,
            FrameKind::TryFinally => {
                left.get_or_insert(id);
            }
            _ => {}
        }
        // The labels out there, but for those reached through the frame just left.
        let through = if inner.kind.is_frame() {
            0
        } else {
            free.get(Some(id))
        };
        if left.is_some() && free.get(inner.parent) > through {
            return left;
        }
        at = inner.parent;
    }
    None
}

/// Labels and cases in code a compiler may drop because of a test of constants it computes
/// and gotopy does not (G200; `scan::ConstantTest`). A test that is a literal is no
/// problem: `prepare` keeps what it guards.
fn constant_test_rules(scope: &Scope, out: &mut Vec<Diagnostic>) {
    for test in &scope.constant_tests {
        for marker in &scope.markers {
            let what = match &marker.kind {
                MarkerKind::Label { name, .. } => format!("label `.{name}`"),
                MarkerKind::Case { .. } => "this case".to_owned(),
                _ => continue,
            };
            if !test.region.contains_range(marker.range) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Code::CannotRewrite,
                    marker.range,
                    format!(
                        "cannot rewrite: the compiler may compute the test that guards \
                         {what} and remove it as unreachable"
                    ),
                )
                .label("may be removed with the code around it")
                .related(test.test, "a test of constants a compiler may compute")
                .help(
                    "compilers drop the code under a test they can compute, such as \
                     `1 - 1`, `x and False` or `__debug__`; gotopy keeps labels under a \
                     literal (`if False:`, `while 0:`) but cannot follow an expression: \
                     write the literal, or test a variable",
                ),
            );
        }
    }
}

fn label_name_range(marker: &Marker) -> TextRange {
    match &marker.kind {
        MarkerKind::Label { name_range, .. } | MarkerKind::Goto { name_range, .. } => *name_range,
        _ => marker.range,
    }
}

/// The frame rules of SPEC section 4 for a jump from `from` to `to`: the error, if the jump
/// breaks one. Computed gotos dispatch only to the labels this accepts.
pub(crate) fn jump(scope: &Scope, from: &Marker, to: &Marker, name: &str) -> Option<Diagnostic> {
    let source_path = scope.frame_path(from.frame);
    let target_path = scope.frame_path(to.frame);
    let common = source_path
        .iter()
        .zip(&target_path)
        .take_while(|(a, b)| a == b)
        .count();
    if let Some(frame) = target_path[common..]
        .iter()
        .map(|&id| scope.frame(id))
        .find(|frame| frame.kind.is_frame())
    {
        return Some(into_frame(from, to, name, frame));
    }
    let left = || {
        source_path[common..]
            .iter()
            .rev()
            .map(|&id| scope.frame(id))
    };
    // Leaving an `except*` handler is reported first, whichever of the two is innermost.
    if let Some(handler) = left().find(|frame| frame.kind == FrameKind::Except { is_star: true }) {
        return Some(out_of_except_star(from, to, name, handler));
    }
    let finally = left().find(|frame| frame.kind == FrameKind::Finally)?;
    Some(out_of_finally(from, to, name, finally))
}

/// `JumpIntoFrame`: the goto enters `frame` from outside it.
fn into_frame(from: &Marker, to: &Marker, name: &str, frame: &Frame) -> Diagnostic {
    Diagnostic::new(
        Code::JumpIntoFrame,
        from.range,
        format!(
            "`goto .{name}` jumps into {} from outside it",
            a(frame.kind.describe())
        ),
    )
    .label(format!("enters the {}", frame.kind.describe()))
    .related(
        frame.header,
        format!("the {} starts here", frame.kind.describe()),
    )
    .related(
        label_name_range(to),
        format!("`.{name}` is defined inside it"),
    )
    .help(entering_help(frame.kind))
}

/// `GotoOutOfExceptStar`: the goto leaves the `except*` handler `handler`.
fn out_of_except_star(from: &Marker, to: &Marker, name: &str, handler: &Frame) -> Diagnostic {
    Diagnostic::new(
        Code::GotoOutOfExceptStar,
        from.range,
        format!("`goto .{name}` leaves an `except*` handler"),
    )
    .label("leaves the `except*` handler")
    .related(handler.header, "the `except*` handler starts here")
    .related(
        label_name_range(to),
        format!("`.{name}` is defined outside it"),
    )
    .help(
        "Python forbids `break`, `continue` and `return` out of an `except*` handler, \
         and a goto is refused there for the same reason; set a flag in the handler and \
         jump after the whole `try` statement",
    )
}

/// `GotoOutOfFinally`: the goto leaves the `finally` body `finally`.
fn out_of_finally(from: &Marker, to: &Marker, name: &str, finally: &Frame) -> Diagnostic {
    Diagnostic::new(
        Code::GotoOutOfFinally,
        from.range,
        format!("`goto .{name}` leaves a `finally` body"),
    )
    .label("leaves the `finally` body")
    .related(finally.header, "the `finally` body starts here")
    .related(
        label_name_range(to),
        format!("`.{name}` is defined outside it"),
    )
    .help(
        "leaving a `finally` body would discard an exception in flight (see PEP 765); \
         jump to a label inside it, or after the whole `try` statement from its `try` body",
    )
}

fn entering_help(kind: FrameKind) -> String {
    match kind {
        FrameKind::For { is_async } => {
            let keyword = if is_async { "async for" } else { "for" };
            format!(
                "{} body needs its iterator, which only the `{keyword}` statement creates; \
                 jump to the `{keyword}` statement instead",
                a(&format!("`{keyword}`"))
            )
        }
        FrameKind::With { is_async } => {
            let keyword = if is_async { "async with" } else { "with" };
            format!(
                "{} body needs its context manager, which only the `{keyword}` statement \
                 enters; jump to the `{keyword}` statement instead",
                a(&format!("`{keyword}`"))
            )
        }
        FrameKind::Except { .. } => "an `except` handler runs only while its exception is \
                                     handled; jumping in would skip the `except` clause"
            .to_owned(),
        _ => "a `finally` body runs only as the `try` statement unwinds; jumping in would \
              skip that unwinding"
            .to_owned(),
    }
}

fn unknown_label(module: &Module, scope: &Scope, name: &str, range: TextRange) -> Diagnostic {
    let diagnostic = Diagnostic::new(
        Code::UnknownLabel,
        range,
        format!("unknown label `.{name}`"),
    );
    let elsewhere = module
        .scopes
        .iter()
        .filter(|other| !std::ptr::eq(*other, scope))
        .find_map(|other| Some((other, other.labels.get(name)?)));
    match elsewhere {
        Some((other, entry)) => diagnostic
            .label(format!("no label `.{name}` in {}", scope.describe()))
            .related(
                label_name_range(other.marker(entry.definition)),
                format!("`.{name}` is defined in {}", other.describe()),
            )
            .help(format!(
                "a goto reaches only labels of its own {}: it cannot leave or enter a {}",
                scope_noun(scope.kind),
                scope_noun(other.kind)
            )),
        None => {
            let diagnostic =
                diagnostic.label(format!("no label `.{name}` in {}", scope.describe()));
            let known: Vec<String> = scope
                .labels
                .iter()
                .map(|entry| format!("`.{}`", entry.name))
                .collect();
            if known.is_empty() {
                diagnostic.help(format!("{} defines no labels", scope.describe()))
            } else {
                diagnostic.help(format!(
                    "labels in {}: {}",
                    scope.describe(),
                    known.join(", ")
                ))
            }
        }
    }
}

fn scope_noun(kind: ScopeKind) -> &'static str {
    match kind {
        ScopeKind::Module => "module body",
        ScopeKind::Class => "class body",
        ScopeKind::Function => "function",
    }
}

/// A `case` marker is an entry point of its switch: reaching it must enter no frame.
fn case_entry(scope: &Scope, case: MarkerId, switch: SwitchId) -> Option<Diagnostic> {
    let case = scope.marker(case);
    let path = scope.frame_path(case.frame);
    let body = path
        .iter()
        .position(|&id| scope.frame(id).kind == FrameKind::SwitchBody(switch))?;
    let frame = path[body + 1..]
        .iter()
        .map(|&id| scope.frame(id))
        .find(|frame| frame.kind.is_frame())?;
    Some(
        Diagnostic::new(
            Code::JumpIntoFrame,
            case.range,
            format!(
                "`case` inside {} cannot be reached by its switch",
                a(frame.kind.describe())
            ),
        )
        .label(format!(
            "the switch would jump into the {}",
            frame.kind.describe()
        ))
        .related(
            frame.header,
            format!("the {} starts here", frame.kind.describe()),
        )
        .related(scope.switch(switch).header, "the switch")
        .help(format!(
            "a switch jumps only to cases it reaches without entering a frame: move this \
             `case` before the {} starts",
            frame.kind.describe()
        )),
    )
}

fn switch_rules(scope: &Scope, id: SwitchId, source: &Source, out: &mut Vec<Diagnostic>) {
    let switch = scope.switch(id);
    for &range in &switch.continues {
        out.push(
            Diagnostic::new(Code::ContinueInSwitch, range, "`continue` in a switch body")
                .label("a switch is not a loop")
                .related(switch.header, "the switch")
                .help("use `break` to leave the switch, or `goto` to jump back to a label"),
        );
    }
    if let Some(range) = switch.else_keyword {
        out.push(
            Diagnostic::new(Code::ElseOnSwitch, range, "`else:` clause on a switch")
                .related(switch.header, "the switch")
                .help("the code after the `while switch` statement is the default case; move the `else:` body there"),
        );
    }
    case_values(scope.case_values(id).map(|(value, _)| value), source, out);
}

fn case_values<'a>(
    values: impl Iterator<Item = &'a CaseValue>,
    source: &Source,
    out: &mut Vec<Diagnostic>,
) {
    let text = |value: &CaseValue| &source.text()[value.range.to_std_range()];
    let mut first_kind: Option<&CaseValue> = None;
    let mut seen: HashMap<&CaseKey, &CaseValue> = HashMap::new();
    for value in values {
        let Some(kind) = value.value.kind() else {
            out.push(
                Diagnostic::new(
                    Code::InvalidCaseValue,
                    value.range,
                    format!(
                        "case value `{}` is not an integer, `str` or `bytes` literal",
                        text(value)
                    ),
                )
                .help(
                    "case values must be known when the switch is compiled: write the value itself",
                ),
            );
            continue;
        };
        let first = *first_kind.get_or_insert(value);
        if let Some(first_kind) = first.value.kind()
            && first_kind != kind
        {
            out.push(
                Diagnostic::new(
                    Code::MixedCaseKinds,
                    value.range,
                    format!("`{kind}` case value in a switch over `{first_kind}` values"),
                )
                .label(format!("{} here", a(&format!("`{kind}`"))))
                .related(
                    first.range,
                    format!("the first case value is {}", a(&format!("`{first_kind}`"))),
                )
                .help(
                    "all case values of one switch must be of one kind: integers, `str` or `bytes`",
                ),
            );
            continue;
        }
        match seen.get(&value.value) {
            Some(earlier) => out.push(
                Diagnostic::new(
                    Code::DuplicateCaseValue,
                    value.range,
                    format!("duplicate case value `{}`", text(value)),
                )
                .label("repeated here")
                .related(
                    earlier.range(),
                    format!("`{}` is first used here", text(earlier)),
                )
                .help("each value may start only one case"),
            ),
            None => {
                seen.insert(&value.value, value);
            }
        }
    }
}

/// `text` with "a" or "an" before it: "an `int`", "a `for` body", "an `except` handler".
pub(crate) fn a(text: &str) -> String {
    let first = text.chars().find(char::is_ascii_alphabetic);
    let article = if first.is_some_and(|c| "aeiou".contains(c)) {
        "an"
    } else {
        "a"
    };
    format!("{article} {text}")
}

impl Ranged for CaseValue {
    fn range(&self) -> TextRange {
        self.range
    }
}

/// G102 for `scope`, whose first marker is `first`, in a module that imports `decorator`.
fn not_rewritten(scope: &Scope, first: &Marker, decorator: &str) -> Diagnostic {
    let help = match scope.kind {
        ScopeKind::Function => format!(
            "decorate `{}` with `@{decorator}` to rewrite it",
            scope.qualname.rsplit('.').next().unwrap_or(&scope.qualname)
        ),
        ScopeKind::Module | ScopeKind::Class => {
            "module and class bodies are rewritten only with the all-scopes option (`--all-scopes`)"
                .to_owned()
        }
    };
    Diagnostic::new(
        Code::MarkersNotRewritten,
        first.range,
        format!(
            "markers in {} are ignored because it is not rewritten",
            scope.describe()
        ),
    )
    .label("runs as ordinary Python")
    .help(help)
}
