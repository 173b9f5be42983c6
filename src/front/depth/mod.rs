//! Depth: how deeply a module may nest, checked before anything recurses over it, and a stack
//! deep enough for what passes.
//!
//! The parser, the scanner, the checker, both code generators, `translate` and even the drop
//! of a syntax tree recurse once per level of nesting, so a file nested deeply enough would
//! overflow any stack. Two kinds of bound keep them within one:
//!
//! - [`reach`], one pass over the tokens with no recursion, before the parser runs:
//!   at most [`MAX_BRACKETS`] brackets open at once ("too many nested parentheses"), fewer
//!   than [`MAX_INDENT`] levels of indentation ("too many levels of indentation"), fewer than
//!   [`MAX_FSTRINGS`] f-strings inside one another ("too many nested f-strings"), all three
//!   CPython's tokenizer's, the same on every version, and taken as the language's; and an
//!   upper bound of how deep each statement's tree can be ([`MAX_ESTIMATE`]), which also
//!   bounds how deep the parser recurses.
//! - [`too_deep`], over the parsed tree (its depth is now bounded, so a recursive walk is
//!   safe): no path longer than [`MAX_DEPTH`] nodes, an `elif` counting as one level deeper
//!   than the clause before it, as in CPython's tree, and no more than [`MAX_SCOPES`] scopes
//!   inside one another ("too complex"). These are gotopy's own bounds, what its passes can
//!   process on the deep stack, well above what any CPython compiles: an interpreter's own
//!   limits are that interpreter's errors, on its route.
//! - [`on_deep_stack`] runs the front end and the backends on a thread whose stack holds
//!   everything those bounds let through.
//!
//! This module knows nothing of markers, and nothing of it depends on the target.

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::visitor::source_order::{self, SourceOrderVisitor, TraversalSignal};
use rustpython_compiler::ast::{AnyNodeRef, ModModule, Stmt};

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::source::Source;
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

/// The longest path from the module to a leaf of its tree that gotopy accepts.
///
/// gotopy's own bound, from the stack its passes take on [`STACK`]. Each recurses once per
/// level of an expression; in a debug build (which takes more than a release build), bytes
/// of stack a level, from 20,000 to 60,000 levels of each shape of `tests/deep/shapes.py`:
///
/// | shape                        | parse | walk | check | compile | translate | plan  |
/// |------------------------------|-------|------|-------|---------|-----------|-------|
/// | `-`, `not`                   | 879   | 879  | 1,328 | 1,328   | 1,328     | 1,328 |
/// | `**`, conditional            | 527   | 527  | 1,328 | 1,328   | 1,328     | 1,328 |
/// | `+`, attributes              | 47    | 463  | 1,328 | 1,328   | 1,328     | 1,328 |
/// | calls, subscripts            | 47    | 448  | 1,327 | 1,360   | 1,328     | 1,328 |
/// | `elif` (one list in ruff's)  | 0     | 0    | 0     | 0       | 0         | 0     |
///
/// (`walk` is [`too_deep`]'s, `check` the scanner's walk; nested `lambda`s take 2,527 in
/// RustPython's code generator, but [`MAX_SCOPES`] bounds them.) Measured by
///
/// ```text
/// GOTOPY_STACK_PER_LEVEL=20000,60000 cargo test --lib depth::measure -- --nocapture
/// ```
///
/// So 100,000 levels take 136 MB of the deep stack. The bound is above every CPython's own
/// limit on its 8 MB main thread (3.11 and 3.12 compile about 3,000 levels, 3.13 up to
/// 10,000 and 3.14 up to 52,000 subscripts, each raising its own `RecursionError` or
/// `MemoryError` past that), so that on CPython the interpreter's limit, not gotopy's, is
/// the one a program meets.
pub const MAX_DEPTH: usize = 100_000;

/// The most scopes (functions, `lambda`s, classes, comprehensions) inside one another that
/// gotopy accepts. Only `lambda`s nest this deep (functions and classes nest by indentation,
/// comprehensions in brackets), and RustPython's code generator takes memory and time
/// quadratic in their nesting (debug build: 1.5 GB and 8 s for 3,000 `lambda:`s, 3.8 GB and
/// 75 s for 3,000 with parameters and defaults; its stack, 2,527 bytes a level, is no
/// concern). Every CPython's parser stops at about 2,980 nested `lambda`s, so gotopy refuses
/// none that CPython compiles.
pub const MAX_SCOPES: usize = 3_000;

/// The bound [`reach`] puts on its estimate of one statement's depth. The estimate can
/// exceed the true depth several times over (it counts operators of a chain rather than
/// building the tree: twice a conditional expression's depth, three to four times a chain
/// of `lambda`s'), so this is twice [`MAX_DEPTH`]: a chain of conditional expressions at
/// the bound is still measured by [`too_deep`]. The parser recurses by at most 876 bytes a
/// level (`-` and `not`), 175 MB of [`STACK`] here.
pub const MAX_ESTIMATE: usize = 2 * MAX_DEPTH;

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
        "gotopy compiles code nested at most {} levels deep, far deeper than any CPython \
         compiles{advice}",
        thousands(MAX_DEPTH)
    )
}

/// Whether the `elif`s of the open `if` statements make most of `depth`, given the clauses
/// of each seen so far (the k-th adds k), as the estimate and [`too_deep`] count them.
fn mostly_elifs(clauses: &[usize], depth: usize) -> bool {
    clauses.iter().sum::<usize>() * 2 > depth
}

/// `n` with a comma between each three digits, as the messages write numbers.
pub(crate) fn thousands(n: usize) -> String {
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
    (source.depth)
        .get_or_init(|| measure(source.text(), MAX_ESTIMATE))
        .clone()
}

/// The token-level limits of `text` alone (brackets, indentation, f-strings, which are
/// CPython's on every version), with its largest estimate however large: for `translate`'s
/// output, which nests a few levels deeper than a source [`reach`] accepted.
pub(crate) fn tokens(text: &str) -> Result<usize, Diagnostic> {
    measure(text, usize::MAX)
}

/// The first node deeper than [`MAX_DEPTH`], or the first scope inside more than
/// [`MAX_SCOPES`] others, as a "too complex" syntax error.
///
/// `estimate` is what [`reach`] gave for the tree's text, which bounds its depth: the tree is
/// walked only when that is above a limit (scopes are nodes of it, so they nest no deeper),
/// and the walk stops descending at the first node past a limit anyway.
pub(crate) fn too_deep(module: &ModModule, estimate: usize) -> Result<(), Diagnostic> {
    if estimate <= MAX_SCOPES.min(MAX_DEPTH) {
        return Ok(());
    }
    let mut walk = Walk::new(MAX_DEPTH, MAX_SCOPES);
    walk.visit_body(&module.body);
    match walk.deepest {
        None => Ok(()),
        Some((at, Past::Depth { chain })) => Err(Diagnostic::new(
            Code::SyntaxError,
            TextRange::empty(at),
            format!(
                "syntax error: too complex: nested more than {} levels deep",
                thousands(MAX_DEPTH)
            ),
        )
        .label(format!("level {} starts here", thousands(MAX_DEPTH + 1)))
        .help(too_complex_help(chain))),
        Some((at, Past::Scopes)) => Err(Diagnostic::new(
            Code::SyntaxError,
            TextRange::empty(at),
            format!(
                "syntax error: too complex: scopes nested more than {} deep",
                thousands(MAX_SCOPES)
            ),
        )
        .label(format!("scope {} starts here", thousands(MAX_SCOPES + 1)))
        .help(format!(
            "each function, `lambda`, class and comprehension is a scope, and gotopy compiles at \
             most {} inside one another (no CPython parses more than about 2,980 nested \
             `lambda`s); define the inner functions outside the outer ones",
            thousands(MAX_SCOPES)
        ))),
    }
}

/// Where the tree first goes deeper than `depth` levels: the start of that node, or `None`
/// when it does not. For `translate`, which holds its output to CPython's depth where the
/// source keeps it.
pub(crate) fn deeper_than(module: &ModModule, depth: usize) -> Option<TextSize> {
    let mut walk = Walk::new(depth, usize::MAX);
    walk.visit_body(&module.body);
    walk.deepest.map(|(at, _)| at)
}

/// Which limit a node goes past.
#[derive(Clone, Copy)]
enum Past {
    /// The depth, `chain` when `elif`s make most of it.
    Depth { chain: bool },
    /// The scopes inside one another.
    Scopes,
}

/// The depth of every node and how many scopes are around it, stopping at the first past
/// a limit.
struct Walk {
    depth: usize,
    /// The clauses of each open `if` statement seen so far: the k-th adds k to the depth
    /// (an `elif` is one level deeper than the clause before it).
    clauses: Vec<usize>,
    scopes: usize,
    /// The limits.
    max_depth: usize,
    max_scopes: usize,
    /// The first node past a limit, and which.
    deepest: Option<(TextSize, Past)>,
    /// The largest depth reached.
    most: usize,
}

impl Walk {
    fn new(max_depth: usize, max_scopes: usize) -> Walk {
        Walk {
            depth: 0,
            clauses: Vec::new(),
            scopes: 0,
            max_depth,
            max_scopes,
            deepest: None,
            most: 0,
        }
    }

    /// What `node` adds to the depth: one, or k for the k-th clause of an `if` (its count is
    /// the innermost open `if`'s both when the clause is entered and when it is left).
    fn added(&self, node: AnyNodeRef<'_>) -> usize {
        match (node, self.clauses.last()) {
            (AnyNodeRef::ElifElseClause(_), Some(&clauses)) => clauses,
            _ => 1,
        }
    }
}

/// Whether `node` is a scope of its own: a code object, in RustPython as in CPython 3.11.
fn is_scope(node: AnyNodeRef<'_>) -> bool {
    matches!(
        node,
        AnyNodeRef::StmtFunctionDef(_)
            | AnyNodeRef::StmtClassDef(_)
            | AnyNodeRef::ExprLambda(_)
            | AnyNodeRef::ExprListComp(_)
            | AnyNodeRef::ExprSetComp(_)
            | AnyNodeRef::ExprDictComp(_)
            | AnyNodeRef::ExprGenerator(_)
    )
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
        self.scopes += usize::from(is_scope(node));
        self.most = self.most.max(self.depth);
        if self.deepest.is_some() {
            return TraversalSignal::Skip;
        }
        if self.depth > self.max_depth {
            let chain = mostly_elifs(&self.clauses, self.depth);
            self.deepest = Some((node.start(), Past::Depth { chain }));
            return TraversalSignal::Skip;
        }
        if self.scopes > self.max_scopes {
            self.deepest = Some((node.start(), Past::Scopes));
            return TraversalSignal::Skip;
        }
        TraversalSignal::Traverse
    }

    fn leave_node(&mut self, node: AnyNodeRef<'a>) {
        self.depth -= self.added(node);
        self.scopes -= usize::from(is_scope(node));
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

/// The stack [`on_deep_stack`] gives its work: in a debug build, 136 MB holds every pass at
/// [`MAX_DEPTH`] (1,359 bytes a level at most) and 175 MB the parser and the drop of a tree
/// at [`MAX_ESTIMATE`] (876), so this is over five times what the deepest module takes, for
/// what the measurement's shapes do not show (a level that mixes kinds of node). Only the
/// pages a deep file touches are ever mapped.
const STACK: usize = 1 << 30;

thread_local! {
    static DEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` on `source` on a thread with a stack for the deepest module [`reach`] and
/// [`too_deep`] accept, unless its estimate is at most [`SHALLOW`] (or [`reach`] refuses it,
/// and nothing will recurse) or this already is such a thread: then on this one. A panic of
/// `work` goes on in the caller's thread.
pub(crate) fn on_deep_stack<T: Send>(source: &Source, work: impl FnOnce() -> T + Send) -> T {
    match reach(source) {
        Ok(deepest) => on_stack_for(deepest, work),
        Err(_) => work(),
    }
}

/// Whether `source` nests deeply enough to run on the deep stack: its estimate is above
/// [`SHALLOW`] (or past [`MAX_ESTIMATE`]).
pub(crate) fn is_deep(source: &Source) -> bool {
    !matches!(reach(source), Ok(deepest) if deepest <= SHALLOW)
}

/// Runs `work` on a thread with the deep stack when `estimate` is above [`SHALLOW`] (and this
/// is not such a thread already), else on this one: for a text whose estimate is known.
pub(crate) fn on_stack_for<T: Send>(estimate: usize, work: impl FnOnce() -> T + Send) -> T {
    if estimate > SHALLOW {
        on_big_stack(work)
    } else {
        work()
    }
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
    // A text whose estimate went past its bound (`translate`'s output) may still have a deep
    // tree.
    if is_deep(source) {
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
    fn each_tokenizer_limit_is_cpythons_and_is_placed_where_cpython_places_it() {
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
    }

    /// The depth of the tree and the nesting of scopes are gotopy's own bounds, placed at the
    /// first node past them.
    #[test]
    fn the_trees_bounds_are_gotopys_own() {
        // `x = -...-1` is the assignment, n unary operations and the constant.
        let chain = |n: usize| format!("x = {}1\n", "-".repeat(n));
        assert_eq!(first(&chain(MAX_DEPTH - 2)), "");
        assert_eq!(
            first(&chain(MAX_DEPTH - 1)),
            "G000 1:100004 syntax error: too complex: nested more than 100,000 levels deep"
        );
        assert!(first(&chain(1_000_000)).contains("too complex"));
        let lambdas = |n: usize| format!("x = {}1\n", "lambda: ".repeat(n));
        assert_eq!(first(&lambdas(MAX_SCOPES)), "");
        // The 3,001st `lambda` starts at column 5 + 3,000 * 8.
        assert_eq!(
            first(&lambdas(MAX_SCOPES + 1)),
            "G000 1:24005 syntax error: too complex: scopes nested more than 3,000 deep"
        );
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
            format!("if a:\n    pass\n{}", "elif a:\n    pass\n".repeat(4_096)),
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
                && matches!(measure(&shape(n + 1), MAX_ESTIMATE), Ok(deepest) if deepest <= SHALLOW)
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

/// How much stack each level of nesting costs gotopy's deepest passes: the figures behind
/// [`MAX_DEPTH`] and [`STACK`]. Slow (it compiles every shape twice, tens of thousands deep)
/// and Linux's (it reads the stack's resident size from `/proc/self/smaps`), so it runs only
/// when asked, with the two depths to compare and, if not all, the shapes:
///
///     GOTOPY_STACK_PER_LEVEL=20000,60000 cargo test --lib depth::measure -- --nocapture
///     GOTOPY_STACK_PER_LEVEL=1000,2000,lambdas cargo test --lib depth::measure -- --nocapture
#[cfg(test)]
mod measure {
    use super::DEEP;
    use crate::{Options, Source};

    /// The resident size of the mapping that holds this thread's stack.
    fn stack_resident() -> usize {
        // A local of this frame (a constant's address would be promoted to a static).
        let local = 0u8;
        let here = std::hint::black_box(&local) as *const u8 as usize;
        let maps = std::fs::read_to_string("/proc/self/smaps").expect("Linux's /proc");
        let mut inside = false;
        for line in maps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((start, end)) = range.split_once('-')
                && let (Ok(start), Ok(end)) = (
                    usize::from_str_radix(start, 16),
                    usize::from_str_radix(end, 16),
                )
            {
                inside = start <= here && here < end;
            } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
                let kb = kb.trim().trim_end_matches("kB").trim();
                return kb.parse::<usize>().expect("a size in kB") * 1024;
            }
        }
        panic!("no mapping holds the stack");
    }

    /// The stack `pass` touches on `text`, on a fresh thread (a stack of its own, mapped as
    /// it is touched), as the deep stack runs it.
    fn stack_of(text: &str, pass: fn(&Source) -> bool) -> usize {
        let text = text.to_owned();
        std::thread::Builder::new()
            .stack_size(4 << 30)
            .spawn(move || {
                DEEP.set(true);
                let source = Source::new("deep.py", text);
                let before = stack_resident();
                let passed = pass(&source);
                let touched = stack_resident() - before;
                let start: String = source.text().chars().take(200).collect();
                assert!(passed, "the pass refused {start}");
                touched
            })
            .expect("a thread")
            .join()
            .expect("no panic")
    }

    /// What `tests/deep/shapes.py ARGS` prints.
    fn shapes(args: &[&str]) -> String {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/deep/shapes.py");
        let output = std::process::Command::new("python3")
            .arg(script)
            .args(args)
            .output()
            .expect("python3 runs tests/deep/shapes.py");
        String::from_utf8(output.stdout).expect("UTF-8")
    }

    /// A pass over a source, and whether it went through (no error).
    type Pass = fn(&Source) -> bool;

    #[test]
    fn stack_per_level() {
        let Ok(depths) = std::env::var("GOTOPY_STACK_PER_LEVEL") else {
            eprintln!("skipped: set GOTOPY_STACK_PER_LEVEL=LOW,HIGH[,SHAPE...] to measure");
            return;
        };
        // Two depths, then the shapes to measure (all by default).
        let mut fields = depths.split(',');
        let mut depth = || fields.next().and_then(|d| d.parse::<usize>().ok());
        let (Some(low), Some(high)) = (depth(), depth()) else {
            panic!("GOTOPY_STACK_PER_LEVEL=LOW,HIGH[,SHAPE...]");
        };
        let wanted: Vec<String> = depths.split(',').skip(2).map(str::to_owned).collect();
        // Each pass, and whether it went through (no error).
        let passes: [(&str, Pass); 6] = [
            ("parse", |s| {
                crate::front::parse::parse_unlimited(s.text())
                    .errors()
                    .is_empty()
            }),
            ("walk", |s| {
                let parsed = crate::front::parse::parse_unlimited(s.text());
                super::too_deep(parsed.syntax(), usize::MAX).is_ok()
            }),
            ("check", |s| {
                !(crate::check_source(s, Options::new()).iter()).any(|d| d.is_error())
            }),
            ("compile", |s| {
                crate::compile::compile_source(s, Options::new()).is_ok()
            }),
            ("translate", |s| {
                crate::translate::translate_source(s, Options::new()).is_ok()
            }),
            ("plan", |s| {
                crate::cpython::plan::plan_source(s, Options::new()).is_ok()
            }),
        ];
        let list = shapes(&["--list"]);
        println!("bytes of stack per level, from {low} to {high} levels (debug build)");
        for line in list.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            if !fields[1].starts_with("too complex")
                || !(wanted.is_empty() || wanted.iter().any(|w| w == fields[0]))
            {
                continue;
            }
            let (shallow, deep) = (
                shapes(&[fields[0], &low.to_string()]),
                shapes(&[fields[0], &high.to_string()]),
            );
            let estimate = |text: &str| super::tokens(text).unwrap_or_default();
            let mut row = format!(
                "{:<24} estimate {:.2}",
                fields[0],
                (estimate(&deep) - estimate(&shallow)) as f64 / (high - low) as f64
            );
            for (name, pass) in passes {
                let started = std::time::Instant::now();
                let grown = stack_of(&deep, pass).saturating_sub(stack_of(&shallow, pass));
                row.push_str(&format!(
                    " {name} {:>6} ({:.1} s)",
                    grown / (high - low),
                    started.elapsed().as_secs_f64()
                ));
            }
            println!("{row}");
        }
    }
}
