//! The self-check of a translation ([`self_check`]): what `translate` writes parses, nests
//! no deeper than CPython compiles where its source does not, and holds no marker.

use super::*;

/// The output parses, nests no deeper than CPython allows (where the source does not
/// already nest deeper: `blocks_allowed` blocks, and [`CPYTHON_DEPTH`] levels when
/// `source_within`), and no rewritten scope has a marker left (the output has no more
/// markers than the scopes of `module`, the source's, that are not rewritten). A
/// translation that nests too deeply is refused; the rest would be a bug of gotopy's.
pub(super) fn self_check(
    text: &str,
    source: &Source,
    module: &Module,
    blocks_allowed: usize,
    source_within: bool,
) -> Result<(), CompileError> {
    enum Failure {
        Bug(String),
        /// The qualname of the scope of the output that nests too deeply, and what.
        TooDeep(String, String),
    }
    let output = Source::new(source.path(), text);
    let scanned = |parsed: &Parsed<ast::ModModule>| {
        scan::scan(parsed.syntax(), parsed.tokens(), &output, Options::new())
    };
    // The qualname of the output's scope around `at`, read from its tree and scan.
    let scope_at = |parsed: &Parsed<ast::ModModule>, at: TextSize| {
        (scanned(parsed).scope_around(TextRange::empty(at)).qualname).clone()
    };
    // The token-level limits are CPython's on every version; the depth of the tree gotopy
    // bounds in the source only (the output is a few levels deeper than a source it
    // accepted, which its deep stack holds).
    let failure = match crate::front::depth::tokens(text) {
        // The source kept the tokenizer's limits; the dispatch loops and guards indent
        // further. Which scope that is, the tree tells: parsed without the limit, on a stack
        // for any depth.
        Err(broken) => {
            let at = broken.range.start();
            let qualname = crate::front::depth::on_big_stack(|| {
                scope_at(&crate::front::parse::parse_unlimited(text), at)
            });
            let what = broken.message.trim_start_matches("syntax error: ");
            let help = broken.help.unwrap_or_default();
            Some(Failure::TooDeep(
                qualname,
                format!("its translation has {what} ({help})"),
            ))
        }
        // The output nests deeper than the input, by its dispatch loops: its own stack.
        Ok(deepest) => crate::front::depth::on_stack_for(deepest, || {
            let parsed = crate::front::parse::parse_unlimited(text);
            if let Some(error) = parsed.errors().first() {
                return Some(Failure::Bug(format!(
                    "its output does not parse: {}",
                    error.error
                )));
            }
            let (blocks, deepest_block) = blocks::deepest(&parsed.syntax().body);
            let too_deep = (source_within && deepest > CPYTHON_DEPTH)
                .then(|| crate::front::depth::deeper_than(parsed.syntax(), CPYTHON_DEPTH))
                .flatten();
            let failure = if let Some(at) = too_deep {
                Some(Failure::TooDeep(
                    scope_at(&parsed, at),
                    format!(
                        "its translation nests more than {} levels deep, deeper than CPython \
                         3.11 and 3.12 compile (each statement, `elif` clause and operator \
                         inside another counts one), where the source does not",
                        crate::front::depth::thousands(CPYTHON_DEPTH)
                    ),
                ))
            } else if blocks > blocks_allowed {
                Some(Failure::TooDeep(
                    scope_at(&parsed, deepest_block),
                    format!(
                        "its translation nests {blocks} blocks, more than the {} that CPython \
                         3.8 to 3.12 compile (\"too many statically nested blocks\": each \
                         loop, `with` item, `try` and `finally` counts one, an `except` clause \
                         two)",
                        blocks::LIMIT
                    ),
                ))
            } else {
                // Scanning the output costs a fifth of parsing it: it is scanned only where
                // a marker may be left, which takes a name of one (spelled in ASCII, or in
                // letters the lexer folds to it: `ｇｏｔｏ` is `goto`).
                let names_a_marker = parsed.tokens().iter().any(|token| {
                    let name = &text[token.range()];
                    token.kind() == TokenKind::Name
                        && (!name.is_ascii() || scan::MARKER_NAMES.contains(&name))
                });
                // The markers of scopes that are not rewritten stay as written (`check`
                // warns); any more is one left. (The output's own scopes cannot say which
                // were rewritten: their decorators are gone.)
                let left = names_a_marker && {
                    let kept: usize = (module.scopes.iter())
                        .filter(|scope| !scope.rewritten)
                        .map(|scope| scope.markers.len())
                        .sum();
                    let found: usize = (scanned(&parsed).scopes.iter())
                        .map(|s| s.markers.len())
                        .sum();
                    found > kept
                };
                left.then(|| {
                    Failure::Bug("its output still has markers in a rewritten scope".to_owned())
                })
            };
            // The output's tree is bigger than the input's, and nothing waits for its
            // frees.
            crate::front::depth::drop_aside(parsed, &output);
            failure
        }),
    };
    match failure {
        None => Ok(()),
        Some(Failure::TooDeep(qualname, what)) => {
            Err(rejected(vec![too_deep(module, &qualname, what)], source))
        }
        Some(Failure::Bug(what)) => Err(rejected(
            vec![
                Diagnostic::new(
                    Code::Internal,
                    TextRange::default(),
                    format!("internal error: gotopy translate failed: {what}"),
                )
                .help(crate::front::diagnostic::REPORT),
            ],
            source,
        )),
    }
}

/// The refusal of a translation that nests more deeply than CPython allows where the source
/// does not, placed at the scope of `module` (the source's) named `qualname`, whose
/// translation nests too deeply.
fn too_deep(module: &Module, qualname: &str, what: String) -> Diagnostic {
    let scope = (module.scopes.iter())
        .find(|scope| scope.qualname == qualname)
        .unwrap_or(&module.scopes[0]);
    let range = match scope.kind {
        ScopeKind::Module => (scope.markers.first()).map_or_else(TextRange::default, |m| m.range),
        _ => scope.name_range,
    };
    Diagnostic::new(
        Code::CannotRewrite,
        range,
        format!("{} cannot be translated: {what}", scope.describe()),
    )
    .help(
        "a translation adds a `while` loop around the statements from a label to the gotos \
         that jump to it (and `if` statements that skip to the label): nest the label and \
         its gotos in fewer blocks, or run the code with gotopy itself (`gotopy run`, the \
         import hook), whose rewrite adds no nesting",
    )
}
