//! What the server knows of one version of a document: the front end's diagnostics and scan,
//! and the answers drawn from them (what a position names, where a label is defined, every
//! place that names it, what a goto leaves). Positions here are byte offsets; `document`
//! converts them.

use ruff_text_size::{Ranged, TextRange, TextSize};
use rustpython_compiler::ast::token::{TokenKind, Tokens};

use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{
    FrameKind, MARKER_NAMES, MarkerId, MarkerKind, Module, Options, Scope, ScopeId, ScopeKind,
    SwitchId,
};
use crate::front::source::Source;
use crate::plan::cases::{computed_targets, handler_name};

/// One version of a document through the front end.
pub(crate) struct Analysis {
    pub(crate) source: Source,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// What `scan` found; `None` for a text that does not parse or names no marker.
    module: Option<Module>,
    /// String literals that name a label of a scope with a computed goto, in source order:
    /// the values such a goto may be given (`stack.append("R7")`).
    literals: Vec<Literal>,
}

struct Literal {
    scope: ScopeId,
    name: String,
    /// The name inside the quotes.
    range: TextRange,
}

/// What a position names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    /// A label, from its `label` or a `goto` or a literal that names it.
    Label {
        scope: ScopeId,
        name: String,
        /// The name at the position.
        range: TextRange,
    },
    /// A switch, from its header or one of its cases.
    Switch { scope: ScopeId, switch: SwitchId },
    /// A computed goto.
    ComputedGoto { scope: ScopeId, marker: MarkerId },
}

impl Analysis {
    /// Parses, scans and checks `text`. A text in which no marker's name appears is not
    /// parsed at all: it has no diagnostics (a syntax error in a file without markers is
    /// left to the editor's Python server).
    pub(crate) fn new(path: &str, text: &str, options: Options) -> Analysis {
        let source = Source::new(path, text);
        if !MARKER_NAMES.iter().any(|name| text.contains(name)) {
            return Analysis {
                source,
                diagnostics: Vec::new(),
                module: None,
                literals: Vec::new(),
            };
        }
        let options = options
            .all_scopes(options.all_scopes || crate::front::scan::asks_all_scopes(text.as_bytes()));
        let (diagnostics, module, literals) = crate::front::depth::on_deep_stack(&source, || {
            match crate::front::run(&source, options) {
                Err(syntax_error) => (vec![syntax_error], None, Vec::new()),
                Ok(front) => {
                    let literals = literals(&front.module, front.parsed.tokens(), &source);
                    (front.diagnostics, Some(front.module), literals)
                }
            }
        });
        Analysis {
            source,
            diagnostics,
            module,
            literals,
        }
    }

    /// The analysis of a text the front end failed on: one internal error, at its start.
    pub(crate) fn failed(path: &str, text: &str) -> Analysis {
        let failure = crate::plan::lost_track(
            TextRange::empty(TextSize::new(0)),
            "the language server's analysis of this file failed",
        );
        Analysis {
            source: Source::new(path, text),
            diagnostics: vec![failure],
            module: None,
            literals: Vec::new(),
        }
    }

    fn scopes(&self) -> impl Iterator<Item = (ScopeId, &Scope)> {
        self.module
            .iter()
            .flat_map(|module| module.scopes.iter().enumerate())
            .map(|(index, scope)| (ScopeId(index), scope))
    }

    pub(crate) fn scope(&self, id: ScopeId) -> &Scope {
        &self
            .module
            .as_ref()
            .expect("a scope of a scanned module")
            .scopes[id.0]
    }

    /// The decorator this module's messages name (`goto`, or `with_goto` where the file
    /// imports that).
    pub(crate) fn decorator(&self) -> &'static str {
        self.module
            .as_ref()
            .map_or("goto", |module| module.decorator)
    }

    /// What `offset` names, if anything: a position inside a marker or at the end of its
    /// name counts, as an editor's cursor right after a word does.
    pub(crate) fn named_at(&self, offset: TextSize) -> Option<Named> {
        let within = |range: TextRange| range.start() <= offset && offset <= range.end();
        if let Some(literal) = self.literals.iter().find(|literal| within(literal.range)) {
            return Some(Named::Label {
                scope: literal.scope,
                name: literal.name.clone(),
                range: literal.range,
            });
        }
        for (scope_id, scope) in self.scopes() {
            for (index, marker) in scope.markers.iter().enumerate() {
                if !within(marker.range) {
                    continue;
                }
                return match &marker.kind {
                    MarkerKind::Label { name, name_range }
                    | MarkerKind::Goto { name, name_range } => Some(Named::Label {
                        scope: scope_id,
                        name: name.to_string(),
                        range: *name_range,
                    }),
                    MarkerKind::Switch(switch)
                    | MarkerKind::Case {
                        switch: Some(switch),
                        ..
                    } => Some(Named::Switch {
                        scope: scope_id,
                        switch: *switch,
                    }),
                    MarkerKind::ComputedGoto { .. } => Some(Named::ComputedGoto {
                        scope: scope_id,
                        marker: MarkerId(index),
                    }),
                    MarkerKind::Case { switch: None, .. } | MarkerKind::Malformed { .. } => None,
                };
            }
        }
        None
    }

    /// Where what `named` names is defined: a label's first `label`, a switch's header.
    pub(crate) fn definition(&self, named: &Named) -> Option<TextRange> {
        match named {
            Named::Label { scope, name, .. } => {
                let scope = self.scope(*scope);
                let entry = scope.labels.get(name)?;
                label_name(scope, entry.definition)
            }
            Named::Switch { scope, switch } => Some(self.scope(*scope).switch(*switch).header),
            Named::ComputedGoto { .. } => None,
        }
    }

    /// Every place that names a label (its `label` statements, if `declarations`, every
    /// `goto`, and the literals of computed gotos), or a switch's cases; in source order.
    pub(crate) fn references(&self, named: &Named, declarations: bool) -> Vec<TextRange> {
        let mut places = Vec::new();
        match named {
            Named::Label {
                scope: id, name, ..
            } => {
                let scope = self.scope(*id);
                if let Some(entry) = scope.labels.get(name) {
                    if declarations {
                        let labels = std::iter::once(entry.definition)
                            .chain(entry.redefinitions.iter().copied());
                        places.extend(labels.filter_map(|marker| label_name(scope, marker)));
                    }
                    places.extend(
                        entry
                            .gotos
                            .iter()
                            .filter_map(|&marker| label_name(scope, marker)),
                    );
                } else {
                    // A goto to a label that does not exist (yet) still has its fellows.
                    places.extend(
                        scope
                            .markers
                            .iter()
                            .filter_map(|marker| match &marker.kind {
                                MarkerKind::Goto {
                                    name: named,
                                    name_range,
                                } if named.as_str() == name => Some(*name_range),
                                _ => None,
                            }),
                    );
                }
                places.extend(
                    self.literals
                        .iter()
                        .filter(|literal| literal.scope == *id && literal.name == *name)
                        .map(|literal| literal.range),
                );
            }
            Named::Switch { scope: id, switch } => {
                let scope = self.scope(*id);
                if declarations {
                    places.push(scope.switch(*switch).header);
                }
                places.extend(
                    scope
                        .markers
                        .iter()
                        .filter_map(|marker| match &marker.kind {
                            MarkerKind::Case {
                                switch: Some(of), ..
                            } if of == switch => Some(marker.range),
                            _ => None,
                        }),
                );
            }
            Named::ComputedGoto { .. } => {}
        }
        places.sort_by_key(|range| range.start());
        places
    }

    /// The edits that rename the label `named` to `new_name`, or why not.
    pub(crate) fn rename(&self, named: &Named, new_name: &str) -> Result<Vec<TextRange>, String> {
        let Named::Label {
            scope: id, name, ..
        } = named
        else {
            return Err("only labels can be renamed".to_owned());
        };
        let new_name = new_name.strip_prefix('.').unwrap_or(new_name);
        if !is_identifier(new_name) {
            return Err(format!("`{new_name}` is not a name a label can have"));
        }
        let scope = self.scope(*id);
        if new_name != name
            && let Some(taken) = scope.labels.get(new_name)
        {
            let line = self.line(scope.marker(taken.definition).range.start());
            return Err(format!(
                "{} already has a label `.{new_name}` (line {line})",
                scope.describe()
            ));
        }
        // A string a computed goto may be given names the label too, but only a reader can
        // tell it from another string of the same text: gotopy renames neither.
        let literals: Vec<String> = self
            .literals
            .iter()
            .filter(|literal| literal.scope == *id && literal.name == *name)
            .map(|literal| self.line(literal.range.start()).to_string())
            .collect();
        if !literals.is_empty() {
            return Err(format!(
                "`.{name}` is also named by the string literal{} on line{} {}, which a computed \
                 goto may jump with; rename the label and those strings by hand",
                if literals.len() == 1 { "" } else { "s" },
                if literals.len() == 1 { "" } else { "s" },
                literals.join(", ")
            ));
        }
        Ok(self.references(named, true))
    }

    /// Markdown that says what the marker at `named` does.
    pub(crate) fn hover(&self, named: &Named, offset: TextSize) -> Option<String> {
        let (id, scope) = match named {
            Named::Label { scope, .. }
            | Named::Switch { scope, .. }
            | Named::ComputedGoto { scope, .. } => (*scope, self.scope(*scope)),
        };
        let mut text = match named {
            Named::Label { name, .. } => match self.goto_at(id, offset) {
                Some(goto) => self.hover_goto(scope, goto, name),
                None => self.hover_label(named, scope, name),
            },
            Named::Switch { switch, .. } => {
                let cases = crate::plan::cases::switch_cases(scope, *switch).len();
                let line = self.line(scope.switch(*switch).header.start());
                format!(
                    "`while switch` at line {line}: {}",
                    count(cases, "case value")
                )
            }
            Named::ComputedGoto { marker, .. } => match computed_targets(scope, *marker) {
                Ok(names) if names.is_empty() => "`goto *`: no label it can jump to".to_owned(),
                Ok(names) => {
                    let names: Vec<String> =
                        names.iter().map(|name| format!("`.{name}`")).collect();
                    format!("`goto *`: can jump to {}", names.join(", "))
                }
                Err(refused) => format!("`goto *`: {}", refused.message),
            },
        };
        if !scope.rewritten {
            text.push_str(&format!(
                "\n\nNot rewritten: {} runs its markers as ordinary Python.",
                scope.describe()
            ));
        }
        Some(text)
    }

    /// The goto of scope `id` whose statement holds `offset`.
    fn goto_at(&self, id: ScopeId, offset: TextSize) -> Option<MarkerId> {
        let scope = self.scope(id);
        let index = scope.markers.iter().position(|marker| {
            matches!(marker.kind, MarkerKind::Goto { .. })
                && marker.range.start() <= offset
                && offset <= marker.range.end()
        })?;
        Some(MarkerId(index))
    }

    fn hover_goto(&self, scope: &Scope, goto: MarkerId, name: &str) -> String {
        let Some(entry) = scope.labels.get(name) else {
            return format!(
                "`goto .{name}`: {} has no label `.{name}`",
                scope.describe()
            );
        };
        let label = scope.marker(entry.definition);
        let mut text = format!(
            "`goto .{name}` jumps to `label .{name}` at line {}",
            self.line(label.range.start())
        );
        if let Some(refused) = crate::front::check::jump(scope, scope.marker(goto), label, name) {
            text.push_str(&format!(", which is refused: {}", refused.message));
            return text;
        }
        let left = scope
            .frames_left(scope.marker(goto).frame, name)
            .unwrap_or_default();
        let left: Vec<String> = left
            .iter()
            .filter_map(|&frame| self.leaving(scope.frame(frame)))
            .collect();
        if left.is_empty() {
            text.push_str(", leaving nothing to clean up.");
        } else {
            text.push_str(&format!(".\n\nIt leaves {}.", join(&left)));
        }
        text
    }

    fn hover_label(&self, named: &Named, scope: &Scope, name: &str) -> String {
        let gotos: Vec<String> = self
            .references(named, false)
            .iter()
            .map(|range| self.line(range.start()).to_string())
            .collect();
        let from = match gotos.len() {
            0 => "no goto jumps here".to_owned(),
            1 => format!("jumped to from line {}", gotos[0]),
            _ => format!("jumped to from lines {}", gotos.join(", ")),
        };
        format!("`label .{name}` in {}: {from}", scope.describe())
    }

    /// What leaving `frame` does, as a hover says it; `None` for what is not a frame to the
    /// reader (a switch's body).
    fn leaving(&self, frame: &crate::front::scan::Frame) -> Option<String> {
        let line = self.line(frame.header.start());
        Some(match frame.kind {
            FrameKind::For { is_async } => format!(
                "the `{}for` at line {line} (its iterator is dropped)",
                if is_async { "async " } else { "" }
            ),
            FrameKind::With { is_async: false } => {
                format!("the `with` at line {line} (`__exit__` runs)")
            }
            FrameKind::With { is_async: true } => {
                format!("the `async with` at line {line} (`__aexit__` is awaited)")
            }
            FrameKind::Except { .. } => {
                let header = &self.source.text()[frame.header];
                match handler_name(header) {
                    Some(name) => format!(
                        "the `except` handler at line {line} (the exception is cleared and `{name}` deleted)"
                    ),
                    None => {
                        format!("the `except` handler at line {line} (the exception is cleared)")
                    }
                }
            }
            FrameKind::TryFinally => {
                format!("the `try` at line {line} (its `finally` body runs first)")
            }
            FrameKind::Finally => format!("the `finally` body at line {line}"),
            FrameKind::SwitchBody(_) => return None,
        })
    }

    /// The labels and switches of every scope that has any, for the outline: each scope's
    /// own, with its range and name range (`None` for the module's).
    pub(crate) fn outline(&self) -> Vec<(&Scope, Vec<Symbol>)> {
        let mut outline = Vec::new();
        for (_, scope) in self.scopes() {
            let mut symbols = Vec::new();
            for marker in &scope.markers {
                match &marker.kind {
                    MarkerKind::Label { name, name_range } => symbols.push(Symbol {
                        name: format!(".{name}"),
                        kind: SymbolKind::Label,
                        range: marker.range,
                        selection: *name_range,
                    }),
                    MarkerKind::Switch(switch) => symbols.push(Symbol {
                        name: format!(
                            "switch *{}",
                            &self.source.text()[scope.switch(*switch).subject]
                        ),
                        kind: SymbolKind::Switch,
                        range: scope.switch(*switch).header,
                        selection: scope.switch(*switch).header,
                    }),
                    _ => {}
                }
            }
            if !symbols.is_empty() {
                outline.push((scope, symbols));
            }
        }
        outline
    }

    /// The one-based line of an offset.
    pub(crate) fn line(&self, offset: TextSize) -> usize {
        self.source.location(offset).line
    }

    /// The scope of the markers at `range` (the innermost around it), if it is a function
    /// gotopy does not rewrite.
    pub(crate) fn unrewritten_function_at(&self, range: TextRange) -> Option<&Scope> {
        let scope = self.module.as_ref()?.scope_around(range);
        (scope.kind == ScopeKind::Function && !scope.rewritten).then_some(scope)
    }

    /// Whether an import binds [`Analysis::decorator`].
    pub(crate) fn imports_decorator(&self) -> bool {
        self.module
            .as_ref()
            .is_some_and(|module| module.imports_decorator)
    }

    /// The `label` statement whose name is at `range`, and whether it is the only statement
    /// of its block.
    pub(crate) fn label_named_at(&self, range: TextRange) -> Option<(TextRange, bool)> {
        self.scopes()
            .flat_map(|(_, scope)| &scope.markers)
            .find_map(|marker| match &marker.kind {
                MarkerKind::Label { name_range, .. } if *name_range == range => {
                    Some((marker.range, marker.alone))
                }
                _ => None,
            })
    }
}

/// A label or switch in the outline.
pub(crate) struct Symbol {
    pub(crate) name: String,
    pub(crate) kind: SymbolKind,
    pub(crate) range: TextRange,
    pub(crate) selection: TextRange,
}

#[derive(Clone, Copy)]
pub(crate) enum SymbolKind {
    Label,
    Switch,
}

/// The name of a `label` or `goto` marker.
fn label_name(scope: &Scope, marker: MarkerId) -> Option<TextRange> {
    match &scope.marker(marker).kind {
        MarkerKind::Label { name_range, .. } | MarkerKind::Goto { name_range, .. } => {
            Some(*name_range)
        }
        _ => None,
    }
}

/// Whether `name` can follow `label .`: a Python identifier (Unicode's XID classes, as
/// the tokenizer reads them) and not a keyword.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || unicode_ident::is_xid_start(first))
        && chars.all(unicode_ident::is_xid_continue)
        && !KEYWORDS.contains(&name)
}

/// Python's keywords, which no attribute (and so no label) can be named; soft keywords
/// (`match`, `case`, `type`) can.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// "a", "a and b", "a, b and c".
fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The string literals of `tokens` that name a label of the innermost scope around them,
/// where that scope has a computed goto. Scopes are in source order and nest, so one pass
/// over both with a stack of the scopes open at each token finds it.
fn literals(module: &Module, tokens: &Tokens, source: &Source) -> Vec<Literal> {
    let computed: Vec<bool> = module
        .scopes
        .iter()
        .map(|scope| {
            scope
                .markers
                .iter()
                .any(|marker| matches!(marker.kind, MarkerKind::ComputedGoto { .. }))
        })
        .collect();
    if !computed.contains(&true) {
        return Vec::new();
    }
    let mut literals = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut next = 0;
    for token in tokens
        .iter()
        .filter(|token| token.kind() == TokenKind::String)
    {
        let at = token.start();
        while next < module.scopes.len() && module.scopes[next].range.start() <= at {
            open.push(next);
            next += 1;
        }
        while open
            .last()
            .is_some_and(|&scope| module.scopes[scope].range.end() <= at)
        {
            open.pop();
        }
        let Some(&innermost) = open.last().filter(|&&scope| computed[scope]) else {
            continue;
        };
        let scope = &module.scopes[innermost];
        let text = &source.text()[token.range()];
        let quoted = [b'"', b'\''].into_iter().find(|&quote| {
            text.len() >= 2
                && text.as_bytes()[0] == quote
                && text.as_bytes()[text.len() - 1] == quote
        });
        let Some(_) = quoted else { continue };
        let name = &text[1..text.len() - 1];
        if is_identifier(name) && scope.labels.get(name).is_some() {
            literals.push(Literal {
                scope: ScopeId(innermost),
                name: name.to_owned(),
                range: TextRange::at(token.start() + TextSize::new(1), TextSize::of(name)),
            });
        }
    }
    literals
}
