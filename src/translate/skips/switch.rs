//! Each switch of a function written as what it means, before the passes ([`desugared`]):
//! the search of its subject into the number of its case, a ladder of gotos to a label at
//! each case, its `break`s gotos past it; the passes and the graph then write the
//! `if`/`elif` a person writes, and the function needs no dispatch loop.
//!
//! ```text
//! while switch *n:          try: n_case = ((1 if n == 0 else 0) if n < 5 else (2 if n == 5 else 0))
//!     case[0]               except BaseException: n_case = 0
//!     return "zero"         if n_case == 1: goto .case_0
//!     case[5]               if n_case == 2: goto .case_5
//!     kind = "five"         goto .switch_end
//!     break                 label .case_0
//! kind = "other"            return "zero"
//!                           label .case_5
//!                           kind = "five"
//!                           goto .switch_end
//!                           label .switch_end
//!                           kind = "other"
//! ```
//!
//! The search is the one the translation proper and the bytecode make (SPEC 5): the same
//! comparisons in the same order, and what raises in them goes to the default. The subject
//! is evaluated once, into the variable, unless it is a parameter that the function only
//! reads: each read then gives the same value, and none can fail. A `break` of the switch
//! (under `if`, `with` and `try` statements) leaves what it leaves as the goto does
//! (language reference, section 4); one in a `finally` body, a `try` with `except*` or a
//! `match` keeps the scope as it is. Taken in a function with no computed goto (which may
//! name any label of its scope, and whose error lists them) whose every switch has its
//! cases as statements of its body, alone on their lines, and its header on one line; the
//! body's lines lose one level. A switch with no case is its subject evaluated, then the
//! goto past it. Switches that nest are written in rounds ([`rounds`]),
//! the innermost first.

use rustpython_compiler::ast::Expr;
use rustpython_compiler::ast::visitor::{self, Visitor};

use super::*;
use crate::front::scan::{Scope, ScopeKind, SwitchId};
use crate::plan::cases::switch_cases;

/// `then` of the source with the switches of its functions written ([`desugared`]) and
/// where its lines stand in the source; `None` where no switch is written so, or that
/// source fails (its check, or `then`).
pub(in crate::translate) fn switches_written<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    then: impl Fn(&Source, Checked, &Shifts) -> Result<T, CompileError> + Sync,
) -> Option<T> {
    rounds(source, checked, options, &then, &Shifts::default())
}

/// [`switches_written`], a round for each level of nesting: the switches with no switch
/// inside are written first, then those around them, in the source they wrote, while
/// any is written (where a round fails, `then` of the one before). `before`: where the
/// lines of `source` stand in the user's.
fn rounds<T: Send>(
    source: &Source,
    checked: &Checked,
    options: Options,
    then: &(dyn Fn(&Source, Checked, &Shifts) -> Result<T, CompileError> + Sync),
    before: &Shifts,
) -> Option<T> {
    let (text, shifts) = desugared(source.text(), checked)?;
    let mut layers = before.0.clone();
    layers.push(shifts);
    let shifts = Shifts(layers);
    let written = Source::new(source.path(), text);
    let done = on_checked(&written, options, |written_checked| {
        match rounds(&written, &written_checked, options, then, &shifts) {
            Some(done) => Ok(done),
            None => then(&written, written_checked, &shifts),
        }
    });
    // A test build says where the text it wrote does not parse.
    debug_assert!(
        !done.as_ref().is_err_and(misparsed),
        "a switch written as gotos does not parse:\n{}",
        written.text()
    );
    done.ok()
}

/// The source with the switches of its functions written as searches, ladders and labels,
/// where any function's are (each function whole or not at all), and where its lines stand.
fn desugared(text: &str, checked: &Checked) -> Option<(String, Vec<Region>)> {
    let switched = (checked.module.scopes.iter()).any(|scope| !scope.switches.is_empty());
    if !switched || text.contains('\r') {
        return None;
    }
    let mut statements = HashMap::new();
    let mut work = vec![checked.parsed.syntax().body.as_slice()];
    while let Some(list) = work.pop() {
        for stmt in list {
            statements.insert(stmt.start(), stmt);
            work.extend(child_lists(stmt));
        }
    }
    let desugar = Desugar {
        text,
        lines: Lines::of(text, checked),
        checked,
        statements,
    };
    let mut written = Vec::new();
    for scope in &checked.module.scopes {
        let rewritten = scope.kind == ScopeKind::Function && super::super::is_written(scope);
        if rewritten && !scope.switches.is_empty() {
            let mut names = Names {
                text,
                taken: HashSet::new(),
                numbers: HashMap::new(),
            };
            written.extend(desugar.scope(scope, &mut names).unwrap_or_default());
        }
    }
    if written.is_empty() {
        return None;
    }
    // Each switch adds lines: its new lines stand for its header's, and from its body on,
    // and past the label after it, the lines of the source are that many lines further
    // down (the label stands for the switch's last line).
    written.sort_by_key(|switch| switch.last);
    let (mut edits, mut regions, mut shift) = (Vec::new(), Vec::new(), 0);
    for switch in written {
        let head = switch.added - 1;
        regions.push(Region::fixed(switch.header + shift, switch.header));
        regions.push(Region::after(
            switch.header + shift + head + 1,
            switch.header + 1,
        ));
        regions.push(Region::fixed(switch.last + shift + head + 1, switch.last));
        shift += switch.added;
        regions.push(Region::after(switch.last + shift + 1, switch.last + 1));
        edits.extend(switch.edits);
    }
    edits.sort_by_key(|(range, _): &(TextRange, String)| (range.start(), range.end()));
    Some((edited(text, edits), regions))
}

/// One switch written: its edits, its header's line and its last (zero-based), and how
/// many lines it adds.
struct Written {
    edits: Vec<(TextRange, String)>,
    header: usize,
    last: usize,
    added: usize,
}

/// Where the lines of a source with its switches written ([`desugared`]) stand in the
/// source: for each round of [`rounds`], by regions in order, where the lines of its source
/// stand in the one before; none: each on its own.
#[derive(Clone, Default)]
pub(in crate::translate) struct Shifts(Vec<Vec<Region>>);

/// From line `from` (zero-based, of the written source) on, the source's line `to` and the
/// lines after it, or (`fixed`) that line alone.
#[derive(Clone, Copy)]
struct Region {
    from: usize,
    to: usize,
    fixed: bool,
}

impl Region {
    fn fixed(from: usize, to: usize) -> Region {
        Region {
            from,
            to,
            fixed: true,
        }
    }

    fn after(from: usize, to: usize) -> Region {
        Region {
            from,
            to,
            fixed: false,
        }
    }
}

impl Shifts {
    /// Whether some line stands elsewhere.
    pub(in crate::translate) fn moves(&self) -> bool {
        self.0.iter().any(|regions| !regions.is_empty())
    }

    /// The line of the source (one-based) that `line` (one-based, of the written source; 0:
    /// none) stands for: never before the one the line before stands for.
    pub(in crate::translate) fn source_line(&self, line: usize) -> usize {
        (self.0.iter().rev()).fold(line, |line, regions| {
            let at = regions.partition_point(|region| region.from < line);
            match at.checked_sub(1).map(|before| regions[before]) {
                Some(region) if line > 0 && region.fixed => region.to + 1,
                Some(region) if line > 0 => line - region.from + region.to,
                _ => line,
            }
        })
    }
}

struct Desugar<'a> {
    text: &'a str,
    lines: Lines,
    checked: &'a Checked,
    /// Every statement of the module, by where it starts.
    statements: HashMap<TextSize, &'a Stmt>,
}

/// The names the pass gives in one scope: none that the source holds, none twice (`base`,
/// else `base_2`, `base_3`, ...), but for a case number ([`Names::number`]).
struct Names<'n> {
    text: &'n str,
    taken: HashSet<String>,
    /// The case numbers given, by their base.
    numbers: HashMap<String, String>,
}

impl Names<'_> {
    fn fresh(&mut self, base: &str) -> String {
        let name = (1..)
            .map(|n| match n {
                1 => base.to_owned(),
                _ => format!("{base}_{n}"),
            })
            .find(|name| !self.text.contains(name.as_str()) && !self.taken.contains(name))
            .expect("a free name");
        self.taken.insert(name.clone());
        name
    }

    /// The variable of a switch's case number, the same for every switch of the round on a
    /// subject of the same name: each is read only by its ladder, right after its search,
    /// before any case runs (another switch among them), so none is read after another is
    /// set.
    fn number(&mut self, base: &str) -> String {
        if let Some(name) = self.numbers.get(base) {
            return name.clone();
        }
        let name = self.fresh(base);
        self.numbers.insert(base.to_owned(), name.clone());
        name
    }
}

impl<'a> Desugar<'a> {
    /// The edits that write every switch of `scope` that holds no other (those around them
    /// are the next round's), or `None` where one cannot be.
    fn scope(&self, scope: &Scope, names: &mut Names) -> Option<Vec<Written>> {
        // A computed goto may name any label of its scope, and its error lists them.
        let by_value = (scope.markers.iter())
            .any(|marker| matches!(marker.kind, MarkerKind::ComputedGoto { .. }));
        if by_value {
            return None;
        }
        // A definition starts at its first decorator, as the scope does.
        let Some(Stmt::FunctionDef(def)) = self.statements.get(&scope.range.start()).copied()
        else {
            return None;
        };
        let innermost = (0..scope.switches.len()).filter(|&index| {
            let outer = &scope.switches[index];
            !(scope.switches.iter()).any(|inner| {
                inner.header != outer.header && self.range_of(outer).contains(inner.header.start())
            })
        });
        innermost
            .map(|index| self.switch(scope, SwitchId(index), def, names))
            .collect()
    }

    fn range_of(&self, switch: &crate::front::scan::Switch) -> TextRange {
        (self.statements.get(&switch.header.start())).map_or(switch.header, |stmt| stmt.range())
    }

    /// The edits that write one switch.
    fn switch(
        &self,
        scope: &Scope,
        id: SwitchId,
        def: &'a ast::StmtFunctionDef,
        names: &mut Names,
    ) -> Option<Written> {
        let (text, lines) = (self.text, &self.lines);
        let switch = scope.switch(id);
        let Some(Stmt::While(stmt)) = self.statements.get(&switch.header.start()).copied() else {
            return None;
        };
        let body = &stmt.body;
        let (header, first) = (lines.line(stmt.start()), lines.line(body.first()?.start()));
        let last = lines.line(stmt.end());
        // The header alone on its line, but for a comment after its colon.
        let colon = usize::from(switch.subject.end())
            + text[usize::from(switch.subject.end())..].find(':')?;
        let line_end = usize::from(*lines.starts.get(header + 1)?) - 1;
        let comment = text[colon + 1..line_end].trim();
        let indent = usize::from(stmt.start() - lines.starts[header]);
        let deep = usize::from(body[0].start() - lines.starts[first]);
        let clear = lines.line(TextSize::try_from(colon).ok()?) == header
            && (comment.is_empty() || comment.starts_with('#'))
            && first > header
            && deep > indent
            && !lines.tabbed(stmt.start(), stmt.end());
        if !clear {
            return None;
        }
        let mut edits = Vec::new();
        // The body one level up: each line at least as deep as its first (comments aside).
        let cut = TextSize::try_from(deep - indent).ok()?;
        for at in first..=last {
            let start = usize::from(lines.starts[at]);
            let end = (lines.starts.get(at + 1)).map_or(text.len(), |&next| usize::from(next) - 1);
            let content = &text[start..end];
            if lines.inside[at] || content.trim().is_empty() {
                continue;
            }
            if content.len() - content.trim_start().len() >= deep {
                edits.push((TextRange::at(lines.starts[at], cut), String::new()));
            } else if !content.trim_start().starts_with('#') {
                return None;
            }
        }
        // A label for each case, alone on its line in the body.
        let mut labels = Vec::new();
        for &case in &switch.cases {
            let marker = scope.marker(case).range;
            let MarkerKind::Case { values, .. } = &scope.marker(case).kind else {
                return None;
            };
            let own = (body.iter()).any(|stmt| stmt.range() == marker);
            if !own || !lines.alone(text, marker) {
                return None;
            }
            let name = names.fresh(&label_base(&text[values.first()?.range]));
            edits.push((marker, format!("label .{name}")));
            labels.push(name);
        }
        let end = names.fresh("switch_end");
        for leaving in breaks(body)? {
            edits.push((leaving, format!("goto .{end}")));
        }
        // The search, each value with its case's number (in source order, from 1).
        let mut keys = Vec::new();
        for (key, marker) in switch_cases(scope, id) {
            let MarkerKind::Case { values, .. } = &scope.marker(marker).kind else {
                return None;
            };
            let value = values.iter().find(|value| &value.value == key)?;
            let literal = &text[value.range];
            if literal.contains('\n') {
                return None;
            }
            let number = switch.cases.iter().position(|&case| case == marker)? + 1;
            // A literal (strings joined too) is an operand of `==` and `<` as it is.
            keys.push((literal.to_owned(), i64::try_from(number).ok()?));
        }
        let subject = &text[switch.subject];
        if subject.contains('\n') {
            return None;
        }
        let pad = " ".repeat(indent);
        // `switch * n` to the parser: what `*` takes, and its name when it is one.
        let operand = match &*stmt.test {
            Expr::BinOp(product) if product.right.range() == switch.subject => {
                Some(&*product.right)
            }
            _ => None,
        };
        let name = operand
            .and_then(Expr::as_name_expr)
            .map(|name| name.id.as_str());
        let read = name.filter(|&name| self.read_only(name, def));
        // An operand of `|` at most, never a tuple: as it is, but for what its parentheses,
        // which its range leaves out, keep from being a statement.
        let parenthesized = operand.is_none_or(|operand| {
            matches!(
                operand,
                Expr::Named(_) | Expr::Yield(_) | Expr::YieldFrom(_)
            )
        });
        let subject = match parenthesized {
            true => format!("({subject})"),
            false => subject.to_owned(),
        };
        let comment = match comment {
            "" => String::new(),
            comment => format!("  {comment}"),
        };
        let mut head = String::new();
        if keys.is_empty() {
            // No case: the subject evaluated, where that may fail or do something (a
            // parameter the function only reads is bound), and past the body.
            if read.is_none() {
                head.push_str(&format!("{pad}{subject}\n"));
            }
            head.push_str(&format!("{pad}goto .{end}{comment}"));
        } else {
            let case = names.number(&format!("{}_case", name.unwrap_or("switch")));
            let value = match read {
                Some(parameter) => parameter.to_owned(),
                None => {
                    head.push_str(&format!("{pad}{case} = {subject}\n"));
                    case.clone()
                }
            };
            let search = crate::search::expression(&value, &keys);
            head.push_str(&format!(
                "{pad}try: {case} = {search}{comment}\n{pad}except BaseException: {case} = 0\n"
            ));
            for (number, label) in labels.iter().enumerate() {
                head.push_str(&format!(
                    "{pad}if {case} == {}: goto .{label}\n",
                    number + 1
                ));
            }
            head.push_str(&format!("{pad}goto .{end}"));
        }
        let added = head.matches('\n').count() + 1;
        edits.push((
            TextRange::new(lines.starts[header], TextSize::try_from(line_end).ok()?),
            head,
        ));
        // The default's label, on a line of its own after the switch.
        match lines.starts.get(last + 1) {
            Some(&start) => edits.push((TextRange::empty(start), format!("{pad}label .{end}\n"))),
            None => edits.push((
                TextRange::empty(TextSize::try_from(text.len()).ok()?),
                format!("\n{pad}label .{end}"),
            )),
        }
        Some(Written {
            edits,
            header,
            last,
            added,
        })
    }

    /// Whether `subject` is a parameter of `def` that the function only reads (every name
    /// token of its body that spells it a load): it is bound from the start and never
    /// rebound, so each read of it gives the same value.
    fn read_only(&self, subject: &str, def: &ast::StmtFunctionDef) -> bool {
        let parameter =
            (def.parameters.iter()).any(|parameter| parameter.name().as_str() == subject);
        let (Some(first), Some(last)) = (def.body.first(), def.body.last()) else {
            return false;
        };
        if !parameter {
            return false;
        }
        let body = TextRange::new(first.start(), last.end());
        let tokens = (self.checked.parsed.tokens().in_range(body).iter())
            .filter(|token| token.kind() == TokenKind::Name && self.text[token.range()] == *subject)
            .count();
        let mut loads = Loads {
            name: subject,
            count: 0,
        };
        for stmt in &def.body {
            loads.visit_stmt(stmt);
        }
        tokens == loads.count
    }
}

/// How many times a name is loaded.
struct Loads<'n> {
    name: &'n str,
    count: usize,
}

impl<'a> Visitor<'a> for Loads<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && name.ctx == ast::ExprContext::Load
            && name.id.as_str() == self.name
        {
            self.count += 1;
        }
        visitor::walk_expr(self, expr);
    }
}

/// The name of a case's label, after its first value: `case_10`, `case_minus_5`, `case_add`,
/// else `case`.
fn label_base(literal: &str) -> String {
    let (sign, digits) = match literal.strip_prefix('-') {
        Some(rest) => ("minus_", rest.trim()),
        None => ("", literal),
    };
    // A bytes literal's prefix, then its quotes (a number has neither).
    let word = digits.strip_prefix('b').unwrap_or(digits);
    let word = word.trim_matches(['"', '\'']);
    let plain = !word.is_empty()
        && word.len() <= 24
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("case_{sign}{}", word.to_ascii_lowercase())
    } else {
        "case".to_owned()
    }
}

/// The `break`s of a switch's body that leave the switch: under `if`, `with` and `try`
/// statements (a `try`'s body, handlers and `else`), none in a loop, whose `break` is its
/// own; `None` where one lies in a `finally` body (which no goto leaves), in a `try` with
/// `except*` handlers (where `break` is refused) or in a `match`.
fn breaks(body: &[Stmt]) -> Option<Vec<TextRange>> {
    let mut found = Vec::new();
    let mut work = vec![(body, false)];
    while let Some((list, barred)) = work.pop() {
        for stmt in list {
            match stmt {
                Stmt::Break(_) if barred => return None,
                Stmt::Break(leave) => found.push(leave.range),
                Stmt::If(_) | Stmt::With(_) => {
                    work.extend(child_lists(stmt).into_iter().map(|list| (list, barred)));
                }
                Stmt::Try(attempt) => {
                    let inner = barred || attempt.is_star;
                    work.push((&attempt.body, inner));
                    work.push((&attempt.orelse, inner));
                    work.push((&attempt.finalbody, true));
                    work.extend(attempt.handlers.iter().map(|handler| {
                        let ast::ExceptHandler::ExceptHandler(handler) = handler;
                        (handler.body.as_slice(), inner)
                    }));
                }
                Stmt::Match(_) => {
                    work.extend(child_lists(stmt).into_iter().map(|list| (list, true)));
                }
                _ => {}
            }
        }
    }
    Some(found)
}
