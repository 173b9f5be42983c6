//! Depth: how deeply a module may nest, checked before anything recurses over it, and a stack
//! deep enough for what passes.
//!
//! The parser, the scanner, the checker, both code generators, `translate` and even the drop
//! of a syntax tree recurse once per level of nesting, so a file nested deeply enough would
//! overflow any stack. CPython bounds the same nesting, and gotopy takes its bounds as the
//! language's (a file CPython cannot compile is not Python gotopy should accept):
//!
//! - [`reach`], one pass over the tokens with no recursion, before the parser runs:
//!   at most [`MAX_BRACKETS`] brackets open at once ("too many nested parentheses"), fewer
//!   than [`MAX_INDENT`] levels of indentation ("too many levels of indentation"), fewer than
//!   [`MAX_FSTRINGS`] f-strings inside one another ("too many nested f-strings"), all three as
//!   CPython's tokenizer counts them; and an upper bound of how deep each statement's tree
//!   can be ([`MAX_ESTIMATE`]), which also bounds how deep the parser recurses.
//! - [`too_deep`], over the parsed tree (its depth is now bounded, so a recursive walk is
//!   safe): no path longer than [`MAX_DEPTH`] nodes, an `elif` counting as one level deeper
//!   than the clause before it, as in CPython's tree ("too complex").
//! - [`on_deep_stack`] runs the front end and the backends on a thread whose stack holds
//!   everything those two bounds let through.
//!
//! This module knows nothing of markers, and nothing of it depends on the target.

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::visitor::source_order::{self, SourceOrderVisitor, TraversalSignal};
use rustpython_compiler::ast::{AnyNodeRef, ModModule, Stmt};

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Source;
use estimate::measure;

mod estimate;

/// The most brackets CPython's tokenizer lets be open at once (`MAXLEVEL`); f-strings'
/// replacement fields count.
pub const MAX_BRACKETS: usize = 200;

/// CPython's tokenizer refuses the line that opens this level of indentation (`MAXINDENT`
/// counts the module's own level).
pub const MAX_INDENT: usize = 100;

/// CPython's tokenizer (3.12 and later) refuses the f-string (or t-string) that opens this
/// level of nesting (`MAXFSTRINGLEVEL`).
pub const MAX_FSTRINGS: usize = 150;

/// The longest path from the module to a leaf of its tree that gotopy accepts. CPython 3.11
/// and 3.12 stop compiling at about 3,000 (their compiler's recursion limit, less what the
/// caller's own frames use), and 3.13 to 3.15 parse at most about 2,980 levels of `lambda`,
/// `**` or conditional expressions (the parser's stack of 6,000), so every file within this
/// compiles on every supported CPython.
pub const MAX_DEPTH: usize = 2_900;

/// The bound [`reach`] puts on its estimate of one statement's depth. The estimate can
/// exceed the true depth several times over (it counts operators of a chain rather than
/// building the tree), so this is well above [`MAX_DEPTH`]: only statements far beyond what
/// CPython compiles reach it.
pub const MAX_ESTIMATE: usize = 20_000;

/// Why a module nests too deeply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    Brackets,
    Indent,
    FStrings,
    /// The estimate's bound; `chain` when most of it is an `if` statement's `elif`s.
    Estimate {
        chain: bool,
    },
}

impl Limit {
    fn diagnostic(self, at: TextRange) -> Diagnostic {
        let (message, help) = match self {
            Limit::Brackets => (
                "too many nested parentheses",
                format!("CPython allows at most {MAX_BRACKETS} brackets open at once"),
            ),
            Limit::Indent => (
                "too many levels of indentation",
                format!(
                    "CPython allows at most {} levels of indentation",
                    MAX_INDENT - 1
                ),
            ),
            Limit::FStrings => (
                "too many nested f-strings",
                format!(
                    "CPython allows at most {} f-strings inside one another",
                    MAX_FSTRINGS - 1
                ),
            ),
            Limit::Estimate { chain } => (
                "too complex: this statement nests far too deeply to parse",
                too_complex_help(chain),
            ),
        };
        Diagnostic::new(Code::SyntaxError, at, format!("syntax error: {message}")).help(help)
    }
}

/// What to do about code nested too deeply: `chain` when most of the nesting is the clauses
/// of one `if` statement, whose every `elif` is a level deeper than the clause before it.
fn too_complex_help(chain: bool) -> String {
    let advice = if chain {
        ", and each `elif` nests one level deeper than the clause before it; split the chain \
         into shorter ones, or dispatch with a dict or, in a function gotopy rewrites, with \
         `while switch`"
    } else {
        "; split the expression with intermediate variables"
    };
    format!(
        "CPython cannot compile code nested more than about {} levels deep (it raises \
         MemoryError or RecursionError){advice}",
        thousands(MAX_DEPTH)
    )
}

/// Whether the `elif`s of the open `if` statements make most of `depth`, given the clauses
/// of each seen so far (the k-th adds k), as the estimate and [`too_deep`] count them.
fn mostly_elifs(clauses: &[usize], depth: usize) -> bool {
    clauses.iter().sum::<usize>() * 2 > depth
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Checks the token-level limits of a whole module and gives the largest estimate of a
/// statement's depth, or says where the first limit is broken. Read once per source, and
/// kept with it.
pub(crate) fn reach(source: &Source) -> Result<usize, Diagnostic> {
    source.depth.get_or_init(|| measure(source.text())).clone()
}

/// The first node deeper than [`MAX_DEPTH`], as a "too complex" syntax error.
///
/// Called on a tree [`reach`] accepted, whose depth is bounded by [`MAX_ESTIMATE`], and only
/// when its estimate is above [`MAX_DEPTH`] (below, the tree cannot be deeper); the walk
/// stops descending at the first node past the limit anyway.
pub(crate) fn too_deep(module: &ModModule) -> Result<(), Diagnostic> {
    let mut walk = Walk::default();
    walk.visit_body(&module.body);
    match walk.deepest {
        None => Ok(()),
        Some((at, chain)) => Err(Diagnostic::new(
            Code::SyntaxError,
            TextRange::empty(at),
            format!(
                "syntax error: too complex: nested more than {} levels deep",
                thousands(MAX_DEPTH)
            ),
        )
        .label(format!("level {} starts here", thousands(MAX_DEPTH + 1)))
        .help(too_complex_help(chain))),
    }
}

/// The depth of every node, stopping at the first past the limit.
#[derive(Default)]
struct Walk {
    depth: usize,
    /// The clauses of each open `if` statement seen so far: the k-th adds k to the depth
    /// (an `elif` is one level deeper than the clause before it).
    clauses: Vec<usize>,
    /// The first node past the limit, and whether `elif`s made most of its depth.
    deepest: Option<(TextSize, bool)>,
    /// The largest depth reached.
    most: usize,
}

impl Walk {
    /// What `node` adds to the depth: one, or k for the k-th clause of an `if` (its count is
    /// the innermost open `if`'s both when the clause is entered and when it is left).
    fn added(&self, node: AnyNodeRef<'_>) -> usize {
        match (node, self.clauses.last()) {
            (AnyNodeRef::ElifElseClause(_), Some(&clauses)) => clauses,
            _ => 1,
        }
    }
}

impl<'a> SourceOrderVisitor<'a> for Walk {
    fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
        match node {
            AnyNodeRef::StmtIf(_) => self.clauses.push(0),
            AnyNodeRef::ElifElseClause(_) => {
                if let Some(clauses) = self.clauses.last_mut() {
                    *clauses += 1;
                }
            }
            _ => {}
        }
        self.depth += self.added(node);
        self.most = self.most.max(self.depth);
        if self.deepest.is_some() {
            return TraversalSignal::Skip;
        }
        if self.depth > MAX_DEPTH {
            self.deepest = Some((node.start(), mostly_elifs(&self.clauses, self.depth)));
            return TraversalSignal::Skip;
        }
        TraversalSignal::Traverse
    }

    fn leave_node(&mut self, node: AnyNodeRef<'a>) {
        self.depth -= self.added(node);
        if matches!(node, AnyNodeRef::StmtIf(_)) {
            self.clauses.pop();
        }
    }

    fn visit_body(&mut self, body: &'a [Stmt]) {
        source_order::walk_body(self, body);
    }
}

/// The largest estimate that runs on the caller's stack, as everything did before these
/// bounds: twice the deepest file of CPython's standard library and pip (97, `idna`'s
/// tables), and held by a unit test on a 2 MiB stack, Rust's default for a new thread, in a
/// debug build (where 800 still fits and 2,000 does not). A thread with a large stack costs
/// about 0.2 ms to start: more than parsing many files.
const SHALLOW: usize = 200;

/// The stack [`on_deep_stack`] gives its work: enough for RustPython's code generator (the
/// deepest recursion, in a debug build) at [`MAX_DEPTH`], and for the parser and the drop of
/// a tree at [`MAX_ESTIMATE`]. Only the pages a deep file touches are ever mapped.
const STACK: usize = 1 << 30;

thread_local! {
    static DEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` on `source` on a thread with a stack for the deepest module [`reach`] and
/// [`too_deep`] accept, unless its estimate is at most [`SHALLOW`] (or [`reach`] refuses it,
/// and nothing will recurse) or this already is such a thread: then on this one. A panic of
/// `work` goes on in the caller's thread.
pub(crate) fn on_deep_stack<T: Send>(source: &Source, work: impl FnOnce() -> T + Send) -> T {
    if DEEP.get() || !matches!(reach(source), Ok(deepest) if deepest > SHALLOW) {
        return work();
    }
    on_big_stack(work)
}

/// Runs `work` on a thread with the stack [`on_deep_stack`] gives, whatever it works on
/// (unless this already is such a thread): for a text [`reach`] refused that must be parsed
/// all the same.
pub(crate) fn on_big_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if DEEP.get() {
        return work();
    }
    let mut slot = Some(work);
    let spawned = std::thread::scope(|scope| {
        let slot = &mut slot;
        std::thread::Builder::new()
            .name("gotopy".to_owned())
            .stack_size(STACK)
            .spawn_scoped(scope, move || {
                DEEP.set(true);
                slot.take().map(|work| work())
            })
            .map(|thread| thread.join())
    });
    match spawned {
        Ok(Ok(Some(done))) => done,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // No thread could be had (an address-space limit): the caller's stack it is.
        Ok(Ok(None)) | Err(_) => (slot.take().expect("the work did not run"))(),
    }
}

/// The size of source from which [`drop_aside`] frees a tree on a thread of its own: below
/// it, freeing costs less than starting a thread.
const DROP_ASIDE: usize = 1 << 20;

/// Drops `value` (the syntax tree of `source`, and what was built from it) on a thread of
/// its own when the source is large, so that the caller goes on without waiting for its
/// millions of frees; with the deep stack when `source` asked for one, so that a deep
/// tree's drop fits as its parse did. Without a thread to be had, `value` is dropped here,
/// on the thread that built it.
pub(crate) fn drop_aside<T: Send + 'static>(value: T, source: &Source) {
    if source.text().len() < DROP_ASIDE {
        return;
    }
    let mut thread = std::thread::Builder::new().name("gotopy-drop".to_owned());
    if matches!(reach(source), Ok(deepest) if deepest > SHALLOW) {
        thread = thread.stack_size(STACK);
    }
    // A failed spawn drops the closure, and `value` with it, on this thread.
    let _ = thread.spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, check_source};

    /// The first diagnostic of `text`, as `code line:column message`.
    fn first(text: &str) -> String {
        let source = Source::new("t.py", text);
        let diagnostics = check_source(&source, Options::new().all_scopes(true));
        diagnostics.first().map_or_else(String::new, |d| {
            let at = source.location(d.range.start());
            format!(
                "{} {}:{} {}",
                d.code.as_str(),
                at.line,
                at.column,
                d.message
            )
        })
    }

    #[test]
    fn each_limit_is_cpythons_and_is_placed_where_cpython_places_it() {
        let nested = |n: usize| format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
        assert_eq!(first(&nested(200)), "");
        // CPython: line 1, column 206 (one-based) of `x = ` and 201 brackets.
        assert_eq!(
            first(&nested(201)),
            "G000 1:205 syntax error: too many nested parentheses"
        );
        let indented = |n: usize| {
            let mut text: String = (0..n)
                .map(|i| format!("{}if x:\n", " ".repeat(i)))
                .collect();
            text.push_str(&format!("{}pass\n", " ".repeat(n)));
            text
        };
        assert_eq!(first(&indented(99)), "");
        // CPython: "too many levels of indentation" on line 101.
        assert!(first(&indented(100)).starts_with("G000 101:"));
        assert!(first(&indented(100)).ends_with("too many levels of indentation"));
        let fstrings = |n: usize| format!("x = {}1{}\n", "f\"{".repeat(n), "}\"".repeat(n));
        assert_eq!(first(&fstrings(149)), "");
        // CPython 3.13: offset 453, the quote of the 150th.
        assert_eq!(
            first(&fstrings(150)),
            "G000 1:453 syntax error: too many nested f-strings"
        );
        // `x = -...-1` is the assignment, n unary operations and the constant.
        let chain = |n: usize| format!("x = {}1\n", "-".repeat(n));
        assert_eq!(first(&chain(MAX_DEPTH - 2)), "");
        assert_eq!(
            first(&chain(MAX_DEPTH - 1)),
            "G000 1:2904 syntax error: too complex: nested more than 2,900 levels deep"
        );
        assert!(first(&chain(1_000_000)).contains("too complex"));
    }

    #[test]
    fn wide_code_is_not_deep() {
        let accepted = [
            format!("x = [{}]\n", "-1, ".repeat(100_000)),
            format!("x = a{}\n", " and b or c".repeat(100_000)),
            format!("x = a{}\n", " not in b is not c < d".repeat(50_000)),
            format!("x = {}0\n", "a * b * c * d * e + ".repeat(2_000)),
            format!("x = f({})\n", "-b, ".repeat(50_000)),
            format!("x = {{{}}}\n", "1: -2, ".repeat(50_000)),
            "x = 1\n".repeat(100_000),
            format!("if a:\n    pass\n{}", "elif a:\n    pass\n".repeat(2_800)),
        ];
        for text in accepted {
            assert_eq!(first(&text), "", "{}", &text[..80.min(text.len())]);
        }
    }

    /// A module whose estimate is at most [`SHALLOW`] runs on the caller's stack: 2 MiB (a
    /// new thread's) holds the whole compile path on it, for every shape of nesting.
    #[test]
    fn shallow_modules_compile_on_a_small_stack() {
        type Shape = fn(usize) -> String;
        let shapes: [(&str, Shape); 9] = [
            ("unary", |n| format!("x = {}1\n", "-".repeat(n))),
            ("lambdas", |n| {
                format!("x = {}1\n", "lambda a=1: ".repeat(n))
            }),
            ("calls", |n| {
                format!("x = {}1{}\n", "f(".repeat(n), ")".repeat(n))
            }),
            ("conditional", |n| {
                format!("x = {}1\n", "0 if c else ".repeat(n))
            }),
            ("sum", |n| format!("x = {}1\n", "1 + ".repeat(n))),
            ("attributes", |n| format!("x = a{}\n", ".b".repeat(n))),
            ("f-strings", |n| {
                format!("x = {}1{}\n", "f'{".repeat(n), "}'".repeat(n))
            }),
            ("elif", |n| {
                let clauses = "elif False:\n    x = 1\n".repeat(n);
                format!("if False:\n    pass\n{clauses}")
            }),
            ("blocks", |n| {
                let mut text = String::new();
                for level in 0..n.min(MAX_INDENT - 1) {
                    text.push_str(&format!("{}def f():\n", " ".repeat(level)));
                }
                text + &format!("{}return -(-(-1))\n", " ".repeat(n.min(MAX_INDENT - 1)))
            }),
        ];
        for (name, shape) in shapes {
            let mut n = 1;
            while n < MAX_DEPTH
                && matches!(measure(&shape(n + 1)), Ok(deepest) if deepest <= SHALLOW)
            {
                n += 1;
            }
            let text = shape(n);
            let compiled = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || {
                    let source = Source::new("shallow.py", text);
                    crate::compile::compile_source(&source, Options::new().all_scopes(true)).is_ok()
                })
                .expect("a thread")
                .join()
                .expect("no panic");
            assert!(compiled, "{name} at {n}");
        }
    }
}
