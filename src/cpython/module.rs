//! A module's code objects, for the compile path: finding the code object of each scope the
//! plan rewrites, lowering it, and saying why not in the front end's words. The shells hold
//! the real code objects; they describe the tree ([`Node`]) and load the ones asked for.

use std::collections::HashMap;

use ruff_text_size::TextRange;

use super::code::{Code, Lowered};
use super::lower::{LowerError, Lowering, first_marker};
use super::plan::{Plan, Positions, ScopePlan};
use super::shapes::Shapes;
use crate::front::diagnostic::{Code as DiagnosticCode, Diagnostic};
use crate::front::source::Source;
use crate::plan::lost_track;
use crate::tables::{Position, decode_locations};

/// One code object of a module, in pre-order (the module first, each code object before
/// those nested in its constants).
#[derive(Clone, Debug)]
pub struct Node {
    /// The code object whose constants hold it (`None` for the module).
    pub parent: Option<usize>,
    /// `co_qualname`.
    pub qualname: String,
}

/// An error found in the code CPython compiled from the plan, for the front end to render
/// as `check` renders its own ([`late_rejection`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LateError {
    /// A failure inside gotopy (`G900`), not a refusal by design (`G200`).
    pub internal: bool,
    /// What went wrong.
    pub message: String,
    /// What to write instead (refusals only).
    pub help: String,
    /// Where, as CPython gives positions; the module's start where unknown.
    pub at: Position,
}

impl LateError {
    /// The error of a rewrite that failed, about scope `qualname` whose first marker is at
    /// `whole`.
    pub fn of(error: LowerError, qualname: &str, whole: Position) -> LateError {
        match error {
            LowerError::Refused { message, at, help } => {
                LateError::new(false, message, help.to_owned(), Some(at))
            }
            LowerError::Internal { message, at } => {
                LateError::new(true, message, String::new(), at)
            }
            LowerError::Check(error) => LateError::new(
                true,
                format!("the rewritten `{qualname}` fails the check: {error}"),
                String::new(),
                Some(whole),
            ),
        }
    }

    /// An error at `at`, a CPython position whose parts may be missing: a missing line is
    /// the first, a missing end the start.
    pub fn new(internal: bool, message: String, help: String, at: Option<Position>) -> LateError {
        let [line, end_line, column, end_column] = at.unwrap_or([1, 1, 0, 0]);
        let line = if line > 0 { line } else { 1 };
        let end_line = if end_line > 0 { end_line } else { line };
        let column = column.max(0);
        let end_column = if end_column > 0 { end_column } else { column };
        LateError {
            internal,
            message,
            help,
            at: [line, end_line, column, end_column],
        }
    }
}

/// The code object of `scope` among `candidates`, the nodes with its qualified name: the one
/// that holds one of its labels or gotos (`positions` gives a node's positions), or the only
/// one.
pub fn find_scope(
    candidates: &[usize],
    scope: &ScopePlan,
    mut positions: impl FnMut(usize) -> Option<Vec<Position>>,
) -> Option<usize> {
    // The only one with its name is the one, whatever it holds: its positions (a table as
    // long as its code) are not read.
    if let [only] = candidates[..] {
        return Some(only);
    }
    let keywords: Vec<Position> = (scope.labels.iter().map(|label| label.keyword))
        .chain(scope.gotos.iter().map(|goto| goto.keyword))
        .collect();
    for &candidate in candidates {
        if let Some(found) = positions(candidate)
            && keywords.iter().any(|keyword| found.contains(keyword))
        {
            return Some(candidate);
        }
    }
    None
}

/// The positions of a code object's code units, as `co_positions()` gives them.
pub fn positions(code: &[u8], locations: &[u8], first_line: i32) -> Option<Vec<Position>> {
    decode_locations(locations, first_line, code.len() / 2).ok()
}

/// Lowers every scope `plan` rewrites in the module whose code objects are `nodes`: each
/// node's index with its new tables, in the plan's order. `load` gives a node's code
/// object. A scope no code object of the module is named after is left out: CPython's
/// compiler removed its definition as unreachable (a function defined after `while True:`
/// or `return`, or under `if False:`), so this module never creates it. A scope whose
/// code object is named but not found, or whose rewrite fails, is the error.
pub fn lower_module(
    shapes: &'static Shapes,
    plan: &Plan,
    nodes: &[Node],
    mut load: impl FnMut(usize) -> Code,
) -> Result<Vec<(usize, Lowered)>, LateError> {
    let mut loaded: Vec<Option<Code>> = vec![None; nodes.len()];
    let mut lowered = Vec::with_capacity(plan.scopes.len());
    // The nodes of each qualified name, looked up once per scope: a class of thousands of
    // methods has as many scopes as code objects.
    let mut named: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, node) in nodes.iter().enumerate() {
        named.entry(node.qualname.as_str()).or_default().push(index);
    }
    for scope in &plan.scopes {
        let Some(candidates) = named.get(scope.qualname.as_str()) else {
            continue;
        };
        let whole = first_marker(scope);
        let found = find_scope(candidates, scope, |index| {
            let code = loaded[index].get_or_insert_with(|| load(index));
            positions(&code.code, &code.locations, code.first_line)
        });
        let Some(found) = found else {
            let message = format!("cannot find the code object of `{}`", scope.qualname);
            return Err(LateError::new(true, message, String::new(), whole));
        };
        let code = loaded[found].get_or_insert_with(|| load(found));
        // A panic in the rewrite is a failure inside gotopy, reported as one.
        let result = crate::plan::caught(|| Lowering::lower(shapes, code, scope, plan))
            .unwrap_or_else(|panic| {
                Err(LowerError::Internal {
                    message: format!(
                        "rewriting `{}` failed: it panicked: {panic}",
                        scope.qualname
                    ),
                    at: whole,
                })
            });
        match result {
            Ok(new) => lowered.push((found, new)),
            Err(error) => {
                return Err(LateError::of(
                    error,
                    &scope.qualname,
                    whole.unwrap_or([1, 1, 0, 0]),
                ));
            }
        }
    }
    Ok(lowered)
}

/// An error found after planning, in the code CPython compiled from the plan, as a rejected
/// module's [`Rejection`](super::plan::Rejection): a construct gotopy refuses by design
/// (`G200`, with its help saying what to write instead) or a failure inside gotopy (`G900`,
/// whose help says so).
pub fn late_rejection(source: &Source, error: &LateError, color: bool) -> super::plan::Rejection {
    super::plan::Rejection::new(&[late_error(source, error)], source, color)
}

/// The diagnostic of an error found after planning, at its position in `source`.
pub fn late_error(source: &Source, error: &LateError) -> Diagnostic {
    let positions = Positions::new(source.text());
    let [line, end_line, column, end_column] = error.at;
    let start = positions.offset(line, column);
    let end = positions.offset(end_line, end_column).max(start);
    let range = TextRange::new(start, end);
    if error.internal {
        lost_track(range, &error.message)
    } else {
        Diagnostic::new(
            DiagnosticCode::CannotRewrite,
            range,
            format!("cannot rewrite: {}", error.message),
        )
        .help(error.help.clone())
    }
}
