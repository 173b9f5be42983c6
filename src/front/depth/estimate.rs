//! The estimate: one pass over a module's tokens, without recursion and before the parser
//! runs, that checks the tokenizer's limits and bounds how deep each statement's tree can be
//! ([`super::reach`]).

use ruff_text_size::{TextRange, TextSize};
use rustpython_compiler::ast::token::TokenKind;
use rustpython_compiler::parser::{Mode, lexer};

#[cfg(doc)]
use super::MAX_ESTIMATE;
use super::{Limit, MAX_BRACKETS, MAX_FSTRINGS, MAX_INDENT, mostly_elifs};
use crate::front::diagnostic::Diagnostic;

/// [`reach`](super::reach), for a text, with `bound` on the estimate ([`MAX_ESTIMATE`], or
/// `usize::MAX` for the token-level limits alone).
///
/// The lexer gives token kinds without their places, so a broken limit is placed by
/// bisecting: the shortest prefix of the text that breaks a limit ends with the token that
/// broke it. Each pass lexes up to that token, so the bisection starts from the line the
/// first pass counted (a generated `elif` chain past the estimate's bound is millions of
/// bytes long, but its clauses are short lines).
pub(super) fn measure(text: &str, bound: usize) -> Result<usize, Diagnostic> {
    let mut deepest = 0;
    let mut lines = 0;
    let Some(mut limit) = estimate(text, &mut deepest, bound, &mut lines) else {
        return Ok(deepest);
    };
    let (mut short, mut long) = (0, text.len());
    if let Some((start, end, broken)) = line_of(text, lines, bound) {
        (short, long, limit) = (start, end, broken);
    }
    // Invariant: `text[..long]` breaks `limit` first and `text[..short]` breaks none.
    while long - short > 1 {
        let mut middle = short + (long - short) / 2;
        while !text.is_char_boundary(middle) {
            middle += 1;
        }
        if middle >= long {
            break;
        }
        match first_limit(&text[..middle], bound) {
            Some(broken) => (long, limit) = (middle, broken),
            None => short = middle,
        }
    }
    let last = text[..long].chars().next_back().map_or(0, char::len_utf8);
    let end = TextSize::try_from(long).unwrap_or_default();
    let start = end - TextSize::try_from(last).unwrap_or_default();
    Err(limit.diagnostic(TextRange::new(start, end)))
}

/// Where the limit broke, to a line: from the start of line `line` (0-based, as the first
/// pass counted the lexer's ends of lines, which a string over several lines hides, so the
/// true line is no earlier) to the end of the first line from there whose prefix breaks a
/// limit, with that limit; `None` where the prefixes say otherwise (the whole text is then
/// bisected).
fn line_of(text: &str, line: usize, bound: usize) -> Option<(usize, usize, Limit)> {
    let start = match line {
        0 => 0,
        _ => text.match_indices('\n').nth(line - 1)?.0 + 1,
    };
    if start > 0 && first_limit(&text[..start], bound).is_some() {
        return None;
    }
    // The end of the line, then of ever more lines after it.
    let mut lines = 1;
    loop {
        let end = (text[start..].match_indices('\n').nth(lines - 1))
            .map_or(text.len(), |(at, _)| start + at + 1);
        if let Some(broken) = first_limit(&text[..end], bound) {
            return Some((start, end, broken));
        }
        if end == text.len() {
            return None;
        }
        lines *= 2;
    }
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

    /// Whether the statement, as far as this group has read it, goes past `bound`; keeps
    /// the largest estimate in `deepest`.
    fn too_deep(&self, blocks: &Blocks, deepest: &mut usize, bound: usize) -> bool {
        *deepest = (*deepest).max(self.base + self.depth() + blocks.depth);
        *deepest > bound
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
fn first_limit(text: &str, bound: usize) -> Option<Limit> {
    estimate(text, &mut 0, bound, &mut 0)
}

/// The first limit `text` breaks, read token by token without recursion, keeping in
/// `deepest` the largest estimate of a statement's depth it saw.
///
/// The estimate of a statement's depth: within one element of a bracket (between commas),
/// an expression without brackets is a tree whose every root-to-leaf path goes down through
/// operators of rising precedence, except where a prefix operator starts a new chain; so the
/// sum over precedence levels of the longest chain of each is at least its depth. A bracket
/// is a leaf whose own depth adds to its element's; a statement adds its blocks, an `elif`
/// chain one more level per clause. `bound` is the estimate's own limit; `lines` counts the
/// ends of lines the lexer saw before the token that broke a limit.
fn estimate(text: &str, deepest: &mut usize, bound: usize, lines: &mut usize) -> Option<Limit> {
    let mut lexer = lexer::lex(text, Mode::Module);
    let mut groups = vec![Group::default()];
    let mut brackets = 0;
    let mut fstrings = 0;
    let mut blocks = Blocks::new();
    let mut previous = TokenKind::Newline;
    loop {
        let kind = lexer.next_token();
        if matches!(kind, TokenKind::Newline | TokenKind::NonLogicalNewline) {
            *lines += 1;
        }
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
        if group.too_deep(&blocks, deepest, bound) {
            return Some(Limit::Estimate {
                chain: mostly_elifs(&blocks.clauses, *deepest),
            });
        }
        previous = kind;
    }
    // The end of the text closes what is still open, as the parser's recovery does.
    while let Some(group) = groups.pop() {
        if group.too_deep(&blocks, deepest, bound) {
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

#[cfg(test)]
mod tests {
    use rustpython_compiler::ast::visitor::source_order::SourceOrderVisitor;

    use super::super::Walk;

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
            let mut walk = Walk::new(usize::MAX, usize::MAX);
            walk.visit_body(&parsed.syntax().body);
            let mut estimate = 0;
            assert_eq!(
                super::estimate(&text, &mut estimate, usize::MAX, &mut 0),
                None
            );
            assert!(
                estimate >= walk.most,
                "{estimate} < {} for {text}",
                walk.most
            );
        }
        assert!(compared >= 300, "only {compared} generated modules parse");
    }
}
