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
use rustpython_compiler::ast::token::TokenKind;
use rustpython_compiler::ast::visitor::source_order::{self, SourceOrderVisitor, TraversalSignal};
use rustpython_compiler::ast::{AnyNodeRef, ModModule, Stmt};
use rustpython_compiler::parser::{Mode, lexer};

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Source;

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
/// of each seen so far (the k-th adds k), as [`estimate`] and [`too_deep`] both count them.
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

/// [`reach`], for a text.
///
/// The lexer gives token kinds without their places, so a broken limit is placed by
/// bisecting: the shortest prefix of the text that breaks a limit ends with the token that
/// broke it. That costs a logarithmic number of passes, on the error path only.
fn measure(text: &str) -> Result<usize, Diagnostic> {
    let mut deepest = 0;
    let Some(mut limit) = estimate(text, &mut deepest) else {
        return Ok(deepest);
    };
    let (mut short, mut long) = (0, text.len());
    // Invariant: `text[..long]` breaks `limit` first and `text[..short]` breaks none.
    while long - short > 1 {
        let mut middle = short + (long - short) / 2;
        while !text.is_char_boundary(middle) {
            middle += 1;
        }
        if middle >= long {
            break;
        }
        match first_limit(&text[..middle]) {
            Some(broken) => (long, limit) = (middle, broken),
            None => short = middle,
        }
    }
    let last = text[..long].chars().next_back().map_or(0, char::len_utf8);
    let end = TextSize::try_from(long).unwrap_or_default();
    let start = end - TextSize::try_from(last).unwrap_or_default();
    Err(limit.diagnostic(TextRange::new(start, end)))
}

/// Precedence levels of the operators the estimate counts, lowest first. An operator resets
/// the chains of the levels above its own (what follows it is its operand, no longer inside
/// theirs); a prefix operator resets nothing (what follows is inside it).
const LEVELS: usize = 16;
const LAMBDA: usize = 0;
const TERNARY: usize = 1;
const OR: usize = 2;
const AND: usize = 3;
const NOT: usize = 4;
const COMPARE: usize = 5;
const BIT_OR: usize = 6;
const BIT_XOR: usize = 7;
const BIT_AND: usize = 8;
const SHIFT: usize = 9;
const SUM: usize = 10;
const TERM: usize = 11;
const UNARY: usize = 12;
const POWER: usize = 13;
const AWAIT: usize = 14;
const TRAILER: usize = 15;

/// What a bracket (or an f-string) adds around its contents: the node it makes and one it
/// holds them in (a call's keyword, a comprehension).
const GROUP_SLACK: usize = 2;
/// The deepest leaf: a string constant and its literal part.
const LEAF: usize = 2;
/// The nodes around a statement's expression at one level of indentation (a `match` and its
/// `case`, a `try` and its handler).
const BLOCK_SLACK: usize = 3;

/// The blocks around the current statement: per level of indentation, the clauses of the
/// `if` statement there so far (the k-th clause is k levels deeper than the `if`).
struct Blocks {
    clauses: Vec<usize>,
    /// What they add to a statement's depth.
    depth: usize,
}

impl Blocks {
    fn new() -> Blocks {
        Blocks {
            clauses: vec![0],
            depth: 0,
        }
    }

    fn levels(&self) -> usize {
        self.clauses.len() - 1
    }

    fn indent(&mut self) {
        self.clauses.push(0);
        self.depth += BLOCK_SLACK;
    }

    fn dedent(&mut self) {
        if self.clauses.len() > 1 {
            let clauses = self.clauses.pop().unwrap_or_default();
            self.depth -= BLOCK_SLACK + clauses;
        }
    }

    /// A statement starts with `kind`: an `elif` is one clause more, an `else` keeps the
    /// chain, anything else ends it.
    fn statement(&mut self, kind: TokenKind) {
        let clauses = self
            .clauses
            .last_mut()
            .expect("the module's level is never left");
        match kind {
            TokenKind::Elif => {
                *clauses += 1;
                self.depth += 1;
            }
            TokenKind::Else => {}
            _ => {
                self.depth -= *clauses;
                *clauses = 0;
            }
        }
    }
}

/// One bracket's contents (or a statement's, outermost) as the estimate reads them.
#[derive(Default)]
struct Group {
    /// The estimate of the groups around this one, up to where it opened.
    base: usize,
    /// The current chain of each level, and the longest in the current element.
    runs: [usize; LEVELS],
    longest: [usize; LEVELS],
    /// The deepest group closed inside the current element.
    child: usize,
    /// The deepest element finished so far (elements are separated by commas).
    best: usize,
    /// `lambda`s whose parameters are still open (a comma there separates no elements).
    lambdas: usize,
}

impl Group {
    /// The current element: its chains, above a bracket or a leaf (a string literal is two
    /// nodes deep).
    fn element(&self) -> usize {
        self.longest.iter().sum::<usize>() + self.child.max(LEAF)
    }

    fn depth(&self) -> usize {
        self.best.max(self.element()) + GROUP_SLACK
    }

    /// A group opened inside this one, here.
    fn inner(&self) -> Group {
        Group {
            base: self.base + self.element() + GROUP_SLACK,
            ..Group::default()
        }
    }

    /// Whether the statement, as far as this group has read it, goes past the bound; keeps
    /// the largest estimate in `deepest`.
    fn too_deep(&self, blocks: &Blocks, deepest: &mut usize) -> bool {
        *deepest = (*deepest).max(self.base + self.depth() + blocks.depth);
        *deepest > MAX_ESTIMATE
    }

    fn end_element(&mut self) {
        self.best = self.best.max(self.element());
        self.runs = [0; LEVELS];
        self.longest = [0; LEVELS];
        self.child = 0;
    }

    /// An operator of `level`: `flat` ones (`and`, `or`, comparisons) make one node however
    /// long their chain; `prefix` ones nest what follows.
    fn operator(&mut self, level: usize, prefix: bool, flat: bool) {
        if !prefix {
            self.runs[level + 1..].fill(0);
        }
        // A `lambda` is three nodes above a default value: itself, its parameters, one
        // parameter.
        let weight = if level == LAMBDA { 3 } else { 1 };
        self.runs[level] = if flat {
            weight
        } else {
            self.runs[level] + weight
        };
        self.longest[level] = self.longest[level].max(self.runs[level]);
    }
}

/// The first limit `text` breaks.
fn first_limit(text: &str) -> Option<Limit> {
    estimate(text, &mut 0)
}

/// The first limit `text` breaks, read token by token without recursion, keeping in
/// `deepest` the largest estimate of a statement's depth it saw.
///
/// The estimate of a statement's depth: within one element of a bracket (between commas),
/// an expression without brackets is a tree whose every root-to-leaf path goes down through
/// operators of rising precedence, except where a prefix operator starts a new chain; so the
/// sum over precedence levels of the longest chain of each is at least its depth. A bracket
/// is a leaf whose own depth adds to its element's; a statement adds its blocks, an `elif`
/// chain one more level per clause.
fn estimate(text: &str, deepest: &mut usize) -> Option<Limit> {
    let mut lexer = lexer::lex(text, Mode::Module);
    let mut groups = vec![Group::default()];
    let mut brackets = 0;
    let mut fstrings = 0;
    let mut blocks = Blocks::new();
    let mut previous = TokenKind::Newline;
    loop {
        let kind = lexer.next_token();
        let after_operand = ends_operand(previous);
        let outermost = groups.len() == 1;
        let group = groups
            .last_mut()
            .expect("the statement's group is never closed");
        if outermost
            && matches!(
                previous,
                TokenKind::Newline | TokenKind::Indent | TokenKind::Dedent
            )
            && !matches!(
                kind,
                TokenKind::Indent
                    | TokenKind::Dedent
                    | TokenKind::Comment
                    | TokenKind::NonLogicalNewline
                    | TokenKind::EndOfFile
            )
        {
            blocks.statement(kind);
        }
        match kind {
            TokenKind::EndOfFile => break,
            TokenKind::Comment | TokenKind::NonLogicalNewline => continue,
            TokenKind::Indent => {
                blocks.indent();
                if blocks.levels() >= MAX_INDENT {
                    return Some(Limit::Indent);
                }
            }
            TokenKind::Dedent => blocks.dedent(),
            TokenKind::Newline | TokenKind::Semi if outermost => *group = Group::default(),
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                if after_operand {
                    group.operator(TRAILER, false, false);
                }
                brackets += 1;
                if brackets > MAX_BRACKETS {
                    return Some(Limit::Brackets);
                }
                let inner = group.inner();
                groups.push(inner);
            }
            TokenKind::FStringStart | TokenKind::TStringStart => {
                fstrings += 1;
                if fstrings >= MAX_FSTRINGS {
                    return Some(Limit::FStrings);
                }
                let inner = group.inner();
                groups.push(inner);
            }
            TokenKind::Rpar
            | TokenKind::Rsqb
            | TokenKind::Rbrace
            | TokenKind::FStringEnd
            | TokenKind::TStringEnd => {
                if matches!(kind, TokenKind::FStringEnd | TokenKind::TStringEnd) {
                    fstrings = fstrings.saturating_sub(1);
                } else {
                    brackets = brackets.saturating_sub(1);
                }
                if groups.len() > 1 {
                    let closed = groups.pop().expect("more than one group").depth();
                    let parent = groups.last_mut().expect("the statement's group");
                    parent.child = parent.child.max(closed);
                }
            }
            TokenKind::Comma if group.lambdas == 0 => group.end_element(),
            TokenKind::Colon if group.lambdas > 0 => group.lambdas -= 1,
            TokenKind::Lambda => {
                group.lambdas += 1;
                group.operator(LAMBDA, true, false);
            }
            TokenKind::Yield => group.operator(LAMBDA, true, false),
            TokenKind::ColonEqual => group.operator(LAMBDA, false, false),
            TokenKind::For => group.operator(LAMBDA, false, true),
            TokenKind::If | TokenKind::Else => group.operator(TERNARY, false, false),
            TokenKind::Or => group.operator(OR, false, true),
            TokenKind::And => group.operator(AND, false, true),
            // `not in` and `is not` are comparisons.
            TokenKind::Not if after_operand || previous == TokenKind::Is => {
                group.operator(COMPARE, false, true);
            }
            TokenKind::Not => group.operator(NOT, true, false),
            TokenKind::Less
            | TokenKind::Greater
            | TokenKind::EqEqual
            | TokenKind::NotEqual
            | TokenKind::LessEqual
            | TokenKind::GreaterEqual
            | TokenKind::In
            | TokenKind::Is => group.operator(COMPARE, false, true),
            TokenKind::Vbar => group.operator(BIT_OR, false, false),
            TokenKind::CircumFlex => group.operator(BIT_XOR, false, false),
            TokenKind::Amper => group.operator(BIT_AND, false, false),
            TokenKind::LeftShift | TokenKind::RightShift => group.operator(SHIFT, false, false),
            TokenKind::Plus | TokenKind::Minus if after_operand => {
                group.operator(SUM, false, false);
            }
            TokenKind::Star
            | TokenKind::Slash
            | TokenKind::DoubleSlash
            | TokenKind::Percent
            | TokenKind::At
                if after_operand =>
            {
                group.operator(TERM, false, false);
            }
            TokenKind::DoubleStar if after_operand => group.operator(POWER, false, false),
            // Unary operators, and `*`, `**` and `@` that start an element or a decorator.
            TokenKind::Plus
            | TokenKind::Minus
            | TokenKind::Tilde
            | TokenKind::Star
            | TokenKind::DoubleStar
            | TokenKind::At => group.operator(UNARY, true, false),
            TokenKind::Await => group.operator(AWAIT, true, false),
            TokenKind::Dot => group.operator(TRAILER, false, false),
            _ => {}
        }
        // The estimate only grows as the statement goes on, so it is checked as it grows:
        // the pass stops where a statement first goes past the bound.
        let group = groups
            .last()
            .expect("the statement's group is never closed");
        if group.too_deep(&blocks, deepest) {
            return Some(Limit::Estimate {
                chain: mostly_elifs(&blocks.clauses, *deepest),
            });
        }
        previous = kind;
    }
    // The end of the text closes what is still open, as the parser's recovery does.
    while let Some(group) = groups.pop() {
        if group.too_deep(&blocks, deepest) {
            return Some(Limit::Estimate {
                chain: mostly_elifs(&blocks.clauses, *deepest),
            });
        }
        if let Some(parent) = groups.last_mut() {
            parent.child = parent.child.max(group.depth());
        }
    }
    None
}

/// Whether a token can end an operand, so that a `-` or `(` after it is a binary operator
/// or a call rather than a unary operator or a parenthesis.
fn ends_operand(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Name
            | TokenKind::Int
            | TokenKind::Float
            | TokenKind::Complex
            | TokenKind::String
            | TokenKind::FStringEnd
            | TokenKind::TStringEnd
            | TokenKind::Rpar
            | TokenKind::Rsqb
            | TokenKind::Rbrace
            | TokenKind::None
            | TokenKind::True
            | TokenKind::False
            | TokenKind::Ellipsis
            | TokenKind::Match
            | TokenKind::Case
            | TokenKind::Type
            | TokenKind::Lazy
    )
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

    /// A small deterministic generator of random expressions of every kind of operator.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }

        /// `statement` in blocks: nested `if`s, `for`s and `def`s, each maybe the clause of
        /// an `elif` chain, with comments and other statements between the clauses.
        fn statement(&mut self, statement: &str) -> String {
            let mut text = String::new();
            let levels = self.below(4) as usize;
            for level in 0..=levels {
                let indent = "    ".repeat(level);
                let last = level == levels;
                let body = if last {
                    statement.to_owned()
                } else {
                    String::new()
                };
                match self.below(4) {
                    0 if !last => text.push_str(&format!("{indent}def f():\n")),
                    1 if !last => text.push_str(&format!("{indent}for v in w:\n")),
                    2 => {
                        text.push_str(&format!("{indent}if a:\n{indent}    pass\n"));
                        for _ in 0..self.below(5) {
                            text.push_str(&format!(
                                "{indent}# between\n{indent}elif b:\n{indent}    pass\n"
                            ));
                        }
                        text.push_str(&format!("{indent}elif c:\n"));
                        if last {
                            text.push_str(&format!("{indent}    {body}\n"));
                        }
                    }
                    _ if last => text.push_str(&format!("{indent}{body}\n")),
                    _ => text.push_str(&format!("{indent}if a:\n")),
                }
            }
            text
        }

        fn expression(&mut self, budget: u32) -> String {
            if budget == 0 {
                return ["a", "1", "'s'", "None", "x.y"][self.below(5) as usize].to_owned();
            }
            let mut inner = || {
                let inner = self.expression(budget - 1);
                if self.below(2) == 0 {
                    format!("({inner})")
                } else {
                    inner
                }
            };
            let a = inner();
            let b = inner();
            let c = inner();
            match self.below(24) {
                0 => format!("-{a}"),
                1 => format!("not {a}"),
                2 => format!("{a} + {b}"),
                3 => format!("{a} * {b} - {c}"),
                4 => format!("{a} ** {b}"),
                5 => format!("{a} and {b} or {c}"),
                6 => format!("{a} < {b} not in {c}"),
                7 => format!("{a} if {b} else {c}"),
                8 => format!("lambda p, q={a}: {b}"),
                9 => format!("({a})"),
                10 => format!("[{a}, {b}]"),
                11 => format!("{{{a}: {b}}}"),
                12 => format!("f({a}, k={b})"),
                13 => format!("({a})[{b}:{c}]"),
                14 => format!("({a}).attr"),
                15 => format!("[{a} for v in {b} if {c}]"),
                16 => format!("(w := {a})"),
                17 => format!("f'{{{a}}}'"),
                18 => format!("({a}, *{b})"),
                19 => format!("{a} | {b} & ~{c}"),
                20 => format!("({a})({b})"),
                21 => format!("{a} @ {b} // {c} % {a}"),
                22 => format!("{a} << {b} >> {c} ^ {a}"),
                _ => format!("{{**{b}, 'k': {a}}}"),
            }
        }
    }

    #[test]
    fn the_estimate_is_never_below_the_depth_of_the_tree() {
        let mut random = Random(20261126);
        let mut compared = 0;
        for _ in 0..1_000 {
            let budget = 1 + random.below(7) as u32;
            let assignment = format!("x = {}", random.expression(budget));
            let text = random.statement(&assignment);
            // Some combinations are no Python (a `lambda` as a comprehension's condition).
            let Ok(parsed) = rustpython_compiler::parser::parse_module(&text) else {
                continue;
            };
            compared += 1;
            let mut walk = Walk::default();
            walk.visit_body(&parsed.syntax().body);
            let mut estimate = 0;
            assert_eq!(super::estimate(&text, &mut estimate), None);
            assert!(
                estimate >= walk.most,
                "{estimate} < {} for {text}",
                walk.most
            );
        }
        assert!(compared >= 300, "only {compared} generated modules parse");
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
