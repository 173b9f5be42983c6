//! The compile path's decisions for a target whose own compiler builds the code: CPython.
//!
//! On RustPython gotopy prepares ruff's syntax tree and compiles it itself. CPython compiles
//! its own `ast` tree, so the front end hands over what it decided instead: every edit
//! `prepare` makes (guards, trampolines), and for every rewritten scope its markers and, for
//! each goto, the frames it leaves, all by source position in CPython's units (one-based
//! lines, columns in UTF-8 bytes from the start of the line, as `co_positions()` gives them).
//! The Python package applies the edits to `ast.parse`'s tree (or, when there are none,
//! takes the source as it is), compiles it with the running interpreter and lowers the
//! markers it finds at those positions (see ARCHITECTURE.md).

use std::collections::HashMap;
use std::sync::Arc;

use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::visitor::{self, Visitor};
use rustpython_compiler::ast::{Expr, ModModule, Stmt};
use serde::Serialize;

use crate::front::diagnostic::{Diagnostic, render_text};
use crate::front::scan::{
    CaseKey, FrameId, FrameKind, MarkerId, MarkerKind, Options, Scope, ScopeId, ScopeKind, SwitchId,
};
use crate::front::source::Source;
use crate::plan::cases::{
    Reachable, frame_chain, handler_name, labels_by_frame, no_such_label_text, search_levels,
    search_table, switch_cases,
};
use crate::plan::prepare::{Generator, prepare};
use crate::plan::{Checked, CompileError, lost_track, on_checked, rejected};
use crate::tables::Position;

use super::standalone::{Standalone, standalone};

/// What the front end decided about one module, for CPython's compiler and the rewrite of
/// its code objects. Serialized (JSON), it is what `gotopy._prepare` reads to edit CPython's
/// tree: what only the rewrite reads is left out, to keep a big module's plan short.
#[derive(Debug, Serialize)]
pub struct Plan {
    /// The warnings the checker found; never an error.
    #[serde(skip)]
    pub warnings: Vec<Diagnostic>,
    /// Whether the module nests deeply enough for CPython's own limits to be near (the
    /// front end moved to its deep stack for it): then the shell asks CPython to compile the
    /// source as it is before it compiles the edited tree, so that where CPython cannot, the
    /// error is CPython's own (`gotopy._prepare.compiled`).
    #[serde(skip)]
    pub deep: bool,
    /// The statements (`return`, `raise`, `break`, `continue`) to compile as
    /// `if label: <statement>`, the `with` statements whose body to compile as
    /// `if label: <body>` (those that may end abruptly), and the literal `if`, `elif` and
    /// `while` tests to compile as `label`, by the span of the statement or the test: the
    /// guard's load of `label` carries that span.
    pub guards: Vec<Position>,
    /// The literal tests among the guards to compile as `not label` instead: false ones
    /// whose code a goto enters.
    pub negated: Vec<Position>,
    /// The copies of `finally` bodies to insert after `try` statements.
    pub trampolines: Vec<TrampolinePlan>,
    /// Every rewritten scope that has markers.
    pub scopes: Vec<ScopePlan>,
    /// Every `with` statement of the module (when some scope is rewritten): from 3.13
    /// CPython gives the exit of each context manager its item's position.
    #[serde(skip)]
    pub withs: Vec<WithPlan>,
    /// The span of every `finally` body of the module (when some scope is rewritten), from
    /// its first statement's start to its last statement's end: every copy CPython or a
    /// trampoline makes of the body carries positions inside it.
    #[serde(skip)]
    pub finally_bodies: Vec<Position>,
    /// What a standalone `.pyc` file of the module leaves out.
    pub standalone: Standalone,
}

impl Plan {
    /// Whether the plan edits CPython's tree: a guard, a trampoline or a switch. Without,
    /// CPython compiles the source as it is (the same code objects, without the round trip
    /// through `ast` objects).
    pub fn edits_tree(&self) -> bool {
        !self.guards.is_empty()
            || !self.trampolines.is_empty()
            || (self.scopes.iter()).any(|scope| !scope.switches.is_empty())
    }
}

/// Whether the plan of the module `data` may edit CPython's tree ([`Plan::edits_tree`]), from
/// its bytes alone and erring towards yes (a word in a string or a comment counts): a `with`,
/// `while` or `finally` anywhere (a `with` body that may end abruptly, a switch, a
/// trampoline), or a `return`, `raise`, `break`, `continue` or `assert` before the last
/// `label` (a guard). The Python package asks it of a big module before planning it beside
/// CPython's compile of the source, which only a plan without edits uses: a wrong no costs
/// that compile, a wrong yes the time it would have saved, and neither changes the code.
pub fn may_edit_tree(data: &[u8]) -> bool {
    use memchr::memmem::{find, rfind};
    let has = |within: &[u8], word: &[u8]| find(within, word).is_some();
    if [&b"with "[..], b"with(", b"with\t", b"while", b"finally"]
        .iter()
        .any(|word| has(data, word))
    {
        return true;
    }
    let before = &data[..rfind(data, b"label").unwrap_or(0)];
    [&b"return"[..], b"raise", b"break", b"continue", b"assert"]
        .iter()
        .any(|word| has(before, word))
}

/// A `with` statement: where it starts (where the exit of a goto leaving it is found up to
/// 3.12) and the span of each context expression, in order.
#[derive(Debug)]
pub struct WithPlan {
    /// Line and column where the statement starts.
    pub at: (i32, i32),
    /// The span of each item's context expression.
    pub items: Vec<Position>,
}

/// `if label: <the finally body>; goto .name` inserted right after the `try` statement that
/// starts at `try_at`, every added node spanning `span` (from the goto to the end of the
/// `try` statement).
#[derive(Debug, Serialize)]
pub struct TrampolinePlan {
    /// Line and column where the `try` statement starts.
    pub try_at: (i32, i32),
    /// The span of every node the trampoline adds.
    pub span: Position,
    /// The label the goto at its end goes to.
    pub name: String,
}

/// One rewritten scope: a code object with the same qualified name that contains the first
/// marker's position.
#[derive(Debug, Serialize)]
pub struct ScopePlan {
    /// `__qualname__`, `<module>` for the module.
    pub qualname: String,
    /// `module`, `class` or `function`.
    pub kind: &'static str,
    /// Its labels.
    #[serde(skip)]
    pub labels: Vec<LabelPlan>,
    /// The gotos of the source and those that end the trampolines.
    #[serde(skip)]
    pub gotos: Vec<GotoPlan>,
    /// Its `while switch` statements.
    pub switches: Vec<SwitchPlan>,
    /// Its computed gotos, which CPython compiles as the source says.
    #[serde(skip)]
    pub computed: Vec<ComputedPlan>,
    /// The search function its computed gotos in many frames call, when one does.
    #[serde(skip)]
    pub search: Option<SearchPlan>,
}

/// The search function of a scope's computed gotos that may leave `for` loops to reach more
/// labels than a search in line serves (`plan::cases::search_levels`): each such goto calls
/// it for the label's number, then tests that number's frame against each of its levels,
/// leaves the loops below that level, and goes on to the level's one search by number
/// (docs/lowering.md).
#[derive(Debug)]
pub struct SearchPlan {
    /// The text of the module that defines the function
    /// (`plan::cases::search_function_text`):
    /// the interpreter that runs the code compiles it, and the code object goes into the
    /// scope's constants.
    pub text: String,
    /// The frame code of each label by number (-1 for none).
    pub frames: Vec<i64>,
    /// The labels of each frame code: each one's number and name, by number.
    pub labels: HashMap<i64, Vec<(i64, String)>>,
}

/// The levels of a computed goto that calls its scope's search function, innermost first:
/// each one's frame code and the kind (`for` or `async for`) of each loop a jump there
/// leaves, innermost first.
pub type Levels = Vec<(i64, Vec<&'static str>)>;

/// `while switch *subject: body`, compiled as `while label: subject; switch.switch; body;
/// break` followed by `switch.switch`: the guard (span `header`) keeps the loop, so `break`
/// leaves the switch, and is deleted; the value of the statement `subject` stays on the
/// stack for the search that replaces the first marker (span `dispatch`); the second marker
/// (span `end`, the whole statement) is where the default starts. Each case is compiled as
/// `case.case` with the span of its keyword.
#[derive(Debug, Serialize)]
pub struct SwitchPlan {
    /// Line and column where the `while` statement starts.
    pub at: (i32, i32),
    /// The span of the guard's load of `label`: from `while` to the end of the subject.
    pub header: Position,
    /// The subject's span, which the statement that computes it carries.
    pub subject: Position,
    /// The span of the marker where the search goes: from `while` to the subject.
    pub dispatch: Position,
    /// The span of the marker where the default starts: the whole statement.
    pub end: Position,
    /// Every case value, in Python's order, with where it goes.
    pub cases: Vec<CasePlan>,
}

/// One value of a `case[...]` marker.
#[derive(Debug, Serialize)]
pub struct CasePlan {
    /// The value.
    #[serde(skip)]
    pub value: CaseConstant,
    /// The span of the keyword `case`, which its marker carries.
    pub keyword: Position,
}

/// A case value: an integer in hexadecimal (it may be big: Python reads any size in base 16), a
/// `str`, or `bytes`.
#[derive(Debug)]
pub enum CaseConstant {
    /// An integer in hexadecimal, `-` before a negative one.
    Int(String),
    /// A `str`.
    Str(String),
    /// `bytes`.
    Bytes(Vec<u8>),
}

/// `goto *expr`, compiled by CPython as the source says, `goto * expr` as a statement: the
/// load of `goto` (span `keyword`) becomes one of `None`, and the `*` (span `statement`)
/// and the statement's `POP_TOP` a search for the value among the names of the labels it
/// may reach ([`ComputedSearch`]).
#[derive(Debug)]
pub struct ComputedPlan {
    /// The whole statement's span, the `*`'s.
    pub statement: Position,
    /// The span of the keyword `goto`.
    pub keyword: Position,
    /// Its frame's number among the frames of the scope's computed gotos: those of one
    /// frame reach the same labels the same way, so they may share one search.
    pub place: usize,
    /// How it finds the label its value names.
    pub search: ComputedSearch,
}

/// How a computed goto finds the label its value names (the same for every computed goto
/// of its frame).
#[derive(Clone, Debug)]
pub enum ComputedSearch {
    /// A search in line; no match raises `ValueError(f"{NO_SUCH_LABEL}{expr!r}{after}")`.
    InLine {
        /// A goto to each label it may reach, by name, shared by the computed gotos of its
        /// frame (whose spans are the first one's).
        targets: Arc<[GotoPlan]>,
        /// The rest of the message, after the value's `repr`.
        after: Arc<str>,
    },
    /// A call of the scope's search function, which builds its own message, and a jump by
    /// level: its levels.
    Function(Arc<Levels>),
}

/// `label .name`.
#[derive(Debug)]
pub struct LabelPlan {
    /// The label's name.
    pub name: String,
    /// The span of the keyword `label`, the span its load carries.
    pub keyword: Position,
}

/// `goto .name`: the cleanup of each frame it leaves, innermost first, then the jump to the
/// label, or to the trampoline of the first `try` statement with a `finally` that it leaves.
#[derive(Debug)]
pub struct GotoPlan {
    /// The label it goes to.
    pub name: String,
    /// The span its load of `goto` carries: the keyword's, or a trampoline's whole span.
    pub keyword: Position,
    /// The frames it leaves before the jump, innermost first.
    pub leaves: Vec<Leave>,
    /// The span of the trampoline it goes through instead of jumping to the label.
    pub via: Option<Position>,
}

/// One frame a goto leaves.
#[derive(Debug)]
pub struct Leave {
    /// `for`, `async for`, `with`, `async with` or `except`.
    pub kind: &'static str,
    /// Where the statement that opens the frame starts: its exit code carries that position.
    pub header: Position,
    /// The `as` name an `except` handler unbinds.
    pub name: Option<String>,
    /// For a `with`: how many context managers of the same statement this goto leaves first
    /// (`with a, b:` exits `b` before `a`).
    pub inner: usize,
}

/// A module gotopy rejects, as the shells hand it to Python: its errors, and all its
/// diagnostics rendered as `gotopy check` renders them. The native module raises it as
/// `GotoSyntaxError`; `gotopy __native` sends it as JSON to the stand-in.
#[derive(Debug, Serialize)]
pub struct Rejection {
    /// The errors, in the order `check` reports them.
    pub errors: Vec<RejectedError>,
    /// The rendered report of every diagnostic.
    pub report: String,
}

/// One error of a [`Rejection`], at one-based lines and character columns.
#[derive(Debug, Serialize)]
pub struct RejectedError {
    /// Its stable code, `G001`...
    pub code: &'static str,
    /// The message, as `check` prints it after the code.
    pub message: String,
    /// Where it starts.
    pub line: usize,
    /// Where it starts, in characters.
    pub column: usize,
    /// Where it ends.
    pub end_line: usize,
    /// Where it ends, in characters.
    pub end_column: usize,
    /// What to write instead, where the diagnostic says.
    pub help: Option<String>,
    /// The text of its first line, as `SyntaxError.text` holds it (its line end `\n`).
    pub text: Option<String>,
}

impl Rejection {
    /// What [`plan_source`] rejected in `source`: no error, only the report, for a
    /// failure that is not a diagnostic.
    pub fn of(error: &CompileError, source: &Source, color: bool) -> Rejection {
        match error {
            CompileError::Rejected { diagnostics, .. } => Self::new(diagnostics, source, color),
            other => Rejection {
                errors: Vec::new(),
                report: other.to_string(),
            },
        }
    }

    /// The errors among `diagnostics`, and all of them rendered.
    pub(crate) fn new(diagnostics: &[Diagnostic], source: &Source, color: bool) -> Rejection {
        let errors = diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| {
                let start = source.location(d.range.start());
                let end = source.location(d.range.end());
                RejectedError {
                    code: d.code.as_str(),
                    message: d.message.clone(),
                    line: start.line,
                    column: start.column,
                    end_line: end.line,
                    end_column: end.column,
                    help: d.help.clone(),
                    text: source.line_text(start.line).map(|line| format!("{line}\n")),
                }
            })
            .collect();
        let report = render_text(diagnostics, source, color);
        Rejection { errors, report }
    }
}

/// Checks a module and plans its compilation by CPython.
pub fn plan_source(source: &Source, options: Options) -> Result<Plan, CompileError> {
    on_checked(source, options, |checked| plan_checked(source, checked))
}

fn plan_checked(source: &Source, checked: Checked) -> Result<Plan, CompileError> {
    let Checked {
        parsed,
        module,
        diagnostics,
        rewritten,
    } = checked;
    let mut ast = parsed.into_syntax();
    let positions = Positions::new(source.text());
    let mut plan = Plan {
        warnings: diagnostics,
        deep: crate::front::depth::is_deep(source),
        guards: Vec::new(),
        negated: Vec::new(),
        trampolines: Vec::new(),
        scopes: Vec::new(),
        withs: Vec::new(),
        finally_bodies: Vec::new(),
        standalone: Standalone::default(),
    };
    // Found in the source's own tree, before `prepare` edits it, as the places below.
    let mut functions: Vec<TextSize> = (rewritten.iter())
        .map(|id| &module.scopes[id.0])
        .filter(|scope| scope.kind == ScopeKind::Function)
        .map(|scope| scope.name_range.start())
        .collect();
    functions.sort_unstable();
    plan.standalone = standalone(&ast.body, &|offset| positions.at(offset), &functions);
    if rewritten.is_empty() {
        crate::front::depth::drop_aside((ast, module), source);
        return Ok(plan);
    }
    // Found in the source's own tree, before `prepare` edits it: the copies a trampoline
    // adds have the positions of the body they copy, so they add nothing new.
    (plan.withs, plan.finally_bodies) = frame_places(&ast, &positions);
    // What `prepare` does to ruff's tree is what CPython's tree needs (but its computed
    // gotos, which CPython compiles as written): run it on ruff's tree, which is not used
    // again, and hand over its record of the edits.
    let prepared = prepare(&mut ast, &module, &rewritten, Generator::CPython);
    plan.guards = prepared.guards.iter().map(|&r| positions.span(r)).collect();
    plan.negated = prepared
        .negated
        .iter()
        .map(|&r| positions.span(r))
        .collect();
    let mut trampolines = Trampolines::default();
    for (range, trampoline) in &prepared.trampolines {
        let scope = &module.scopes[trampoline.scope.0];
        let MarkerKind::Goto { name, .. } = &scope.marker(trampoline.goto).kind else {
            continue;
        };
        let try_start = scope.frame(trampoline.frame).header.start();
        let at = positions.span(TextRange::empty(try_start));
        plan.trampolines.push(TrampolinePlan {
            try_at: (at[0], at[2]),
            span: positions.span(*range),
            name: name.to_string(),
        });
        let key = (trampoline.scope, trampoline.goto, trampoline.frame);
        trampolines.by_goto.insert(key, *range);
        (trampolines.of_scope.entry(trampoline.scope).or_default()).push((
            *range,
            trampoline.goto,
            trampoline.frame,
        ));
    }
    let switch_ends: HashMap<(ScopeId, SwitchId), TextRange> = (prepared.switch_ends.iter())
        .map(|&(end, scope, switch)| ((scope, switch), end))
        .collect();
    for &id in &rewritten {
        let scope = &module.scopes[id.0];
        let mut scope_plan = ScopePlan {
            qualname: scope.qualname.clone(),
            kind: match scope.kind {
                ScopeKind::Module => "module",
                ScopeKind::Class => "class",
                ScopeKind::Function => "function",
            },
            labels: Vec::new(),
            gotos: Vec::new(),
            switches: Vec::new(),
            computed: Vec::new(),
            search: None,
        };
        let mut places = Places::new(scope);
        for (index, marker) in scope.markers.iter().enumerate() {
            match &marker.kind {
                MarkerKind::Switch(switch) => {
                    let end = (switch_ends.get(&(id, *switch))).map_or(marker.range, |&end| end);
                    scope_plan
                        .switches
                        .push(switch_plan(&positions, scope, *switch, end));
                }
                MarkerKind::ComputedGoto { .. } => {
                    let plan = (places.plan(source, &positions, id, MarkerId(index)))
                        .map_err(|refusal| rejected(vec![refusal], source))?;
                    scope_plan.computed.push(plan);
                }
                MarkerKind::Label { name, .. } => scope_plan.labels.push(LabelPlan {
                    name: name.to_string(),
                    keyword: positions.span(keyword(marker.range, "label")),
                }),
                MarkerKind::Goto { name, .. } => {
                    let from = (marker.frame, keyword(marker.range, "goto"));
                    scope_plan.gotos.push(goto_plan(
                        source,
                        &positions,
                        scope,
                        (id, MarkerId(index)),
                        name,
                        from,
                        &trampolines,
                    ));
                }
                _ => {}
            }
        }
        // The gotos that end trampolines go on from their `try` statement's level.
        for &(range, goto, frame) in trampolines.of_scope.get(&id).into_iter().flatten() {
            let MarkerKind::Goto { name, .. } = &scope.marker(goto).kind else {
                continue;
            };
            let from = (scope.frame(frame).parent, range);
            scope_plan.gotos.push(goto_plan(
                source,
                &positions,
                scope,
                (id, goto),
                name,
                from,
                &trampolines,
            ));
        }
        scope_plan.search = places.search();
        plan.scopes.push(scope_plan);
    }
    // The trees are done with: freed beside CPython's compile of the module, which comes
    // next and costs several times more.
    crate::front::depth::drop_aside((ast, module), source);
    Ok(plan)
}

/// The trampolines `prepare` made: each one's span, goto and `try` frame by scope, and its
/// span by its scope, goto and frame (what each goto leaving that `try` looks up).
#[derive(Default)]
struct Trampolines {
    of_scope: HashMap<ScopeId, Vec<(TextRange, MarkerId, FrameId)>>,
    by_goto: HashMap<(ScopeId, MarkerId, FrameId), TextRange>,
}

/// The keyword (`goto`, `label`) a marker statement starts with.
fn keyword(statement: TextRange, word: &str) -> TextRange {
    TextRange::at(statement.start(), TextSize::of(word))
}

/// The plan of the goto `marker` (of scope `id`) to label `name`, leaving frames from
/// `from.0` on, its load carrying the span `from.1`.
fn goto_plan(
    source: &Source,
    positions: &Positions,
    scope: &Scope,
    (id, marker): (ScopeId, MarkerId),
    name: &str,
    (frame, load): (Option<FrameId>, TextRange),
    trampolines: &Trampolines,
) -> GotoPlan {
    // A goto outside every frame leaves none: no need to look its label up.
    let left = frame
        .and_then(|_| scope.frames_left(frame, name))
        .unwrap_or_default();
    let mut plan = GotoPlan {
        name: name.to_owned(),
        keyword: positions.span(load),
        leaves: Vec::new(),
        via: None,
    };
    for (depth, &frame_id) in left.iter().enumerate() {
        let frame = scope.frame(frame_id);
        let header = positions.span(TextRange::empty(frame.header.start()));
        let kind = match frame.kind {
            FrameKind::For { is_async } => ["for", "async for"][usize::from(is_async)],
            FrameKind::With { is_async } => ["with", "async with"][usize::from(is_async)],
            FrameKind::Except { .. } => "except",
            FrameKind::TryFinally => {
                plan.via = (trampolines.by_goto.get(&(id, marker, frame_id)))
                    .map(|&range| positions.span(range));
                break;
            }
            // The checker rejects the rest; switches are refused before planning.
            _ => continue,
        };
        let text = source.text().get(frame.header.to_std_range()).unwrap_or("");
        plan.leaves.push(Leave {
            kind,
            header,
            name: (kind == "except")
                .then(|| handler_name(text).map(str::to_owned))
                .flatten(),
            inner: left[..depth]
                .iter()
                .filter(|&&inner| scope.frame(inner).header == frame.header)
                .count(),
        });
    }
    plan
}

/// The plan of switch `id` of `scope`, whose statement spans `end`.
fn switch_plan(positions: &Positions, scope: &Scope, id: SwitchId, end: TextRange) -> SwitchPlan {
    let switch = scope.switch(id);
    let start = switch.header.start();
    let at = positions.span(TextRange::empty(start));
    let cases = switch_cases(scope, id)
        .into_iter()
        .filter_map(|(value, case)| {
            let value = match value {
                CaseKey::Int(value) => CaseConstant::Int(value.to_str_radix(16)),
                CaseKey::Str(value) => CaseConstant::Str(value.clone()),
                CaseKey::Bytes(value) => CaseConstant::Bytes(value.clone()),
                // The checker rejects invalid values.
                CaseKey::Invalid => return None,
            };
            let keyword = keyword(scope.marker(case).range, "case");
            Some(CasePlan {
                value,
                keyword: positions.span(keyword),
            })
        })
        .collect();
    SwitchPlan {
        at: (at[0], at[2]),
        header: positions.span(switch.header),
        subject: positions.span(switch.subject),
        dispatch: positions.span(TextRange::new(start, switch.subject.start())),
        end: positions.span(end),
        cases,
    }
}

/// The places of one scope's computed gotos: for each frame one is in, its number and how
/// its computed gotos search, planned once.
struct Places<'s> {
    reachable: Reachable<'s>,
    by_frame: HashMap<Option<FrameId>, (usize, ComputedSearch)>,
    /// The scope's labels by frame code, once a computed goto is planned.
    labels: Option<HashMap<i64, Vec<(i64, &'s str)>>>,
    /// Whether a computed goto calls the search function.
    searched: bool,
}

impl<'s> Places<'s> {
    fn new(scope: &'s Scope) -> Self {
        Places {
            reachable: Reachable::new(scope),
            by_frame: HashMap::new(),
            labels: None,
            searched: false,
        }
    }

    /// The levels of a computed goto in `frame` that calls the search function
    /// ([`search_levels`]), with the kind of each loop it leaves.
    fn levels(&mut self, frame: Option<FrameId>) -> Option<Arc<Levels>> {
        let scope = self.reachable.scope();
        let labels = (self.labels).get_or_insert_with(|| labels_by_frame(scope, |_| true));
        let levels = search_levels(scope, frame, labels)?;
        // Inside a `finally` body or an `except*` handler CPython may compile the goto
        // more than once: each copy goes to its own copies of the labels, in line.
        if frame_chain(scope, frame).last() != Some(&0) {
            return None;
        }
        let kind = |id: FrameId| match scope.frame(id).kind {
            FrameKind::For { is_async: true } => "async for",
            _ => "for",
        };
        self.searched = true;
        Some(Arc::new(
            (levels.into_iter())
                .map(|(code, fors)| (code, fors.into_iter().map(kind).collect()))
                .collect(),
        ))
    }

    /// The search function, when a computed goto calls it.
    fn search(&self) -> Option<SearchPlan> {
        let labels = self.labels.as_ref().filter(|_| self.searched)?;
        let (text, frames) = search_table(self.reachable.scope(), labels);
        let labels = (labels.iter())
            .map(|(&code, numbered)| {
                let numbered = numbered.iter().map(|&(n, name)| (n, name.to_owned()));
                (code, numbered.collect())
            })
            .collect();
        Some(SearchPlan {
            text,
            frames,
            labels,
        })
    }

    /// The plan of the computed goto `marker` of scope `id`, or its refusal.
    fn plan(
        &mut self,
        source: &Source,
        positions: &Positions,
        id: ScopeId,
        marker: MarkerId,
    ) -> Result<ComputedPlan, Diagnostic> {
        let scope = self.reachable.scope();
        let statement = scope.marker(marker);
        let MarkerKind::ComputedGoto { .. } = statement.kind else {
            return Err(lost_track(
                statement.range,
                "a computed goto without a target",
            ));
        };
        let load = keyword(statement.range, "goto");
        if !self.by_frame.contains_key(&statement.frame) {
            let search = match self.levels(statement.frame) {
                Some(levels) => ComputedSearch::Function(levels),
                None => {
                    let names = self.reachable.of(marker)?;
                    let targets = (names.iter())
                        .map(|name| {
                            goto_plan(
                                source,
                                positions,
                                scope,
                                (id, marker),
                                name,
                                (statement.frame, load),
                                // One that may leave a `try` with `finally` is refused: it
                                // has none.
                                &Trampolines::default(),
                            )
                        })
                        .collect();
                    let after = no_such_label_text(&scope.qualname, &names).into();
                    ComputedSearch::InLine { targets, after }
                }
            };
            let place = self.by_frame.len();
            self.by_frame.insert(statement.frame, (place, search));
        }
        let (place, search) = &self.by_frame[&statement.frame];
        Ok(ComputedPlan {
            statement: positions.span(statement.range),
            keyword: positions.span(load),
            place: *place,
            search: search.clone(),
        })
    }
}

/// Every `with` statement and every `finally` body of `module`, in source order.
fn frame_places(module: &ModModule, positions: &Positions) -> (Vec<WithPlan>, Vec<Position>) {
    struct Finder<'p, 't> {
        positions: &'p Positions<'t>,
        withs: Vec<WithPlan>,
        finally_bodies: Vec<Position>,
    }
    impl<'a> Visitor<'a> for Finder<'_, '_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::With(with) => {
                    let at = self.positions.span(TextRange::empty(with.start()));
                    self.withs.push(WithPlan {
                        at: (at[0], at[2]),
                        items: (with.items.iter())
                            .map(|item| self.positions.span(item.context_expr.range()))
                            .collect(),
                    });
                }
                Stmt::Try(try_) => {
                    if let (Some(first), Some(last)) =
                        (try_.finalbody.first(), try_.finalbody.last())
                    {
                        let range = TextRange::new(first.start(), last.end());
                        self.finally_bodies.push(self.positions.span(range));
                    }
                }
                _ => {}
            }
            visitor::walk_stmt(self, stmt);
        }

        /// No statement is inside an expression: the walk does not go into them (most of
        /// the tree).
        fn visit_expr(&mut self, _: &'a Expr) {}
    }
    let mut finder = Finder {
        positions,
        withs: Vec::new(),
        finally_bodies: Vec::new(),
    };
    finder.visit_body(&module.body);
    (finder.withs, finder.finally_bodies)
}

/// Offsets to CPython's line and byte-column positions.
pub(crate) struct Positions<'t> {
    text: &'t str,
    index: LineIndex,
}

impl<'t> Positions<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Positions {
            text,
            index: LineIndex::from_source_text(text),
        }
    }

    fn at(&self, offset: TextSize) -> (i32, i32) {
        let line = self.index.line_index(offset);
        let start = self.index.line_start(line, self.text);
        let narrow = |value: usize| i32::try_from(value).unwrap_or(i32::MAX);
        (narrow(line.get()), narrow((offset - start).to_usize()))
    }

    /// The offset of a one-based line and a byte column in it, clamped to the line (without
    /// its line end) and to a character boundary: positions CPython gives are inside the
    /// text, but they are read from code objects, not trusted.
    pub(crate) fn offset(&self, line: i32, column: i32) -> TextSize {
        let (line, column) = (line.max(0) as usize, column.max(0) as usize);
        let count = self.index.line_count();
        let line = OneIndexed::new(line.clamp(1, count.max(1))).unwrap_or(OneIndexed::MIN);
        let start = self.index.line_start(line, self.text).to_usize();
        let end = self.index.line_end_exclusive(line, self.text).to_usize();
        let mut at = (start + column).min(end);
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        TextSize::try_from(at).unwrap_or_default()
    }

    fn span(&self, range: TextRange) -> Position {
        let (line, column) = self.at(range.start());
        let (end_line, end_column) = self.at(range.end());
        [line, end_line, column, end_column]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `may_edit_tree` errs towards yes: every `ok` fixture whose plan edits the tree is
    /// told by its bytes, and a module without those words is not.
    #[test]
    fn the_bytes_of_a_module_whose_plan_edits_the_tree_say_so() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok");
        let mut edits = 0;
        for entry in std::fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let all_scopes = crate::front::scan::asks_all_scopes(&data);
            let source = Source::from_bytes(path.to_string_lossy(), &data).unwrap();
            let plan = plan_source(&source, Options::new().all_scopes(all_scopes)).unwrap();
            if plan.edits_tree() {
                assert!(may_edit_tree(&data), "{}", path.display());
                edits += 1;
            }
        }
        assert!(edits > 20, "{edits}");
        let plain = b"@goto\ndef f(n):\n    label .top\n    n -= 1\n    if n:\n        goto .top\n    return n\n";
        assert!(!may_edit_tree(plain));
        assert!(may_edit_tree(b"def f():\n    return 1\n    label .x\n"));
    }
}
