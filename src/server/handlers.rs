//! The answers to requests, and the diagnostics of a document, in LSP's types.

use std::collections::HashMap;

use lsp_server::{ErrorCode, Request};
use lsp_types::request::{
    CodeActionRequest, DocumentSymbolRequest, GotoDefinition, HoverRequest, PrepareRenameRequest,
    References, Rename, Request as _,
};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeDescription,
    DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, DocumentSymbol,
    DocumentSymbolParams, GotoDefinitionParams, Hover, HoverContents, HoverParams, Location,
    MarkupContent, MarkupKind, NumberOrString, PrepareRenameResponse, ReferenceParams,
    RenameParams, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};
use ruff_text_size::{TextRange, TextSize};
use serde_json::Value;

use super::analysis::{Named, SymbolKind};
use super::document::Encoding;
use super::{Open, Server};
use crate::front::diagnostic::{Code, Diagnostic, Severity};
use crate::front::scan::ScopeKind;

type Answer = Result<Value, (ErrorCode, String)>;

/// The answer to `request`.
pub(super) fn answer(server: &Server<'_>, request: Request) -> Answer {
    let method = request.method.clone();
    match method.as_str() {
        GotoDefinition::METHOD => {
            let params: GotoDefinitionParams = extract(request)?;
            at(
                server,
                &params.text_document_position_params,
                |open, named| {
                    let range = open.analysis.definition(&named)?;
                    Some(location(
                        server,
                        &params.text_document_position_params.text_document.uri,
                        open,
                        range,
                    ))
                },
            )
        }
        References::METHOD => {
            let params: ReferenceParams = extract(request)?;
            let position = &params.text_document_position;
            at(server, position, |open, named| {
                let places = open
                    .analysis
                    .references(&named, params.context.include_declaration);
                let uri = &position.text_document.uri;
                Some(
                    places
                        .into_iter()
                        .map(|range| location(server, uri, open, range))
                        .collect::<Vec<_>>(),
                )
            })
        }
        PrepareRenameRequest::METHOD => {
            let params: TextDocumentPositionParams = extract(request)?;
            at(server, &params, |open, named| match named {
                Named::Label { range, name, .. } => {
                    Some(PrepareRenameResponse::RangeWithPlaceholder {
                        range: open.document.lsp_range(range, server.encoding),
                        placeholder: name,
                    })
                }
                _ => None,
            })
        }
        Rename::METHOD => {
            let params: RenameParams = extract(request)?;
            let position = &params.text_document_position;
            let (open, _, named) = named_at(server, position)?;
            let Some(named) = named else {
                return Err((
                    ErrorCode::RequestFailed,
                    "no label here to rename".to_owned(),
                ));
            };
            let new_name = params
                .new_name
                .strip_prefix('.')
                .unwrap_or(&params.new_name);
            let places = open
                .analysis
                .rename(&named, new_name)
                .map_err(|why| (ErrorCode::RequestFailed, why))?;
            let edits = places
                .into_iter()
                .map(|range| {
                    TextEdit::new(
                        open.document.lsp_range(range, server.encoding),
                        new_name.to_owned(),
                    )
                })
                .collect();
            let changes = HashMap::from([(position.text_document.uri.clone(), edits)]);
            to_value(WorkspaceEdit::new(changes))
        }
        HoverRequest::METHOD => {
            let params: HoverParams = extract(request)?;
            let position = &params.text_document_position_params;
            let (open, offset, named) = named_at(server, position)?;
            let hover = named.and_then(|named| {
                let text = open.analysis.hover(&named, offset)?;
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: text,
                    }),
                    range: match named {
                        Named::Label { range, .. } => {
                            Some(open.document.lsp_range(range, server.encoding))
                        }
                        _ => None,
                    },
                })
            });
            to_value(hover)
        }
        DocumentSymbolRequest::METHOD => {
            let params: DocumentSymbolParams = extract(request)?;
            let open = document(server, &params.text_document.uri)?;
            to_value(symbols(server, open))
        }
        CodeActionRequest::METHOD => {
            let params: CodeActionParams = extract(request)?;
            let open = document(server, &params.text_document.uri)?;
            let range = open.document.range(params.range, server.encoding);
            to_value(code_actions(server, &params.text_document.uri, open, range))
        }
        _ => Err((
            ErrorCode::MethodNotFound,
            format!("gotopy server does not answer `{method}`"),
        )),
    }
}

fn extract<P: serde::de::DeserializeOwned>(request: Request) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(request.params).map_err(|error| {
        (
            ErrorCode::InvalidParams,
            format!("invalid parameters: {error}"),
        )
    })
}

fn to_value(value: impl serde::Serialize) -> Answer {
    serde_json::to_value(value).map_err(|error| (ErrorCode::InternalError, error.to_string()))
}

/// The open document `uri`, or the error of a request about a document the client never
/// opened.
fn document<'a>(server: &'a Server<'_>, uri: &Uri) -> Result<&'a Open, (ErrorCode, String)> {
    server.open.get(uri).ok_or_else(|| {
        (
            ErrorCode::InvalidParams,
            format!(
                "`{}` is not open: gotopy server answers about open documents only",
                uri.as_str()
            ),
        )
    })
}

/// `answer` of what the position names; `null` where it names nothing.
fn at<T: serde::Serialize>(
    server: &Server<'_>,
    position: &TextDocumentPositionParams,
    answer: impl FnOnce(&Open, Named) -> Option<T>,
) -> Answer {
    let (open, _, named) = named_at(server, position)?;
    to_value(named.and_then(|named| answer(open, named)))
}

/// The open document a position is in, the position as a byte offset, and what it names.
fn named_at<'a>(
    server: &'a Server<'_>,
    position: &TextDocumentPositionParams,
) -> Result<(&'a Open, TextSize, Option<Named>), (ErrorCode, String)> {
    let open = document(server, &position.text_document.uri)?;
    let offset = open.document.offset(position.position, server.encoding);
    Ok((open, offset, open.analysis.named_at(offset)))
}

fn location(server: &Server<'_>, uri: &Uri, open: &Open, range: TextRange) -> Location {
    Location::new(uri.clone(), open.document.lsp_range(range, server.encoding))
}

/// The diagnostics of an open document, as the front end reports them.
pub(super) fn diagnostics(
    uri: &Uri,
    open: &Open,
    encoding: Encoding,
) -> Vec<lsp_types::Diagnostic> {
    open.analysis
        .diagnostics
        .iter()
        .map(|diagnostic| lsp_diagnostic(uri, open, diagnostic, encoding))
        .collect()
}

fn lsp_diagnostic(
    uri: &Uri,
    open: &Open,
    diagnostic: &Diagnostic,
    encoding: Encoding,
) -> lsp_types::Diagnostic {
    let range = |range: TextRange| open.document.lsp_range(range, encoding);
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related = diagnostic
        .related
        .iter()
        .map(|related| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), range(related.range)),
            message: related.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: range(diagnostic.range),
        severity: Some(match diagnostic.severity() {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_owned())),
        code_description: diagnostic
            .code
            .documentation()
            .parse()
            .ok()
            .map(|href| CodeDescription { href }),
        source: Some("gotopy".to_owned()),
        message,
        related_information: Some(related),
        tags: (diagnostic.code == Code::UnusedLabel).then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: Some(serde_json::json!({
            "name": diagnostic.code.name(),
            "label": diagnostic.label,
            "help": diagnostic.help,
        })),
    }
}

/// The outline: each scope that has labels or switches, with them inside; the module's at
/// the top.
fn symbols(server: &Server<'_>, open: &Open) -> Vec<DocumentSymbol> {
    let range = |range: TextRange| open.document.lsp_range(range, server.encoding);
    let mut top = Vec::new();
    for (scope, symbols) in open.analysis.outline() {
        let children = symbols
            .into_iter()
            .map(|symbol| {
                symbol_of(
                    symbol.name,
                    match symbol.kind {
                        SymbolKind::Label => lsp_types::SymbolKind::KEY,
                        SymbolKind::Switch => lsp_types::SymbolKind::ENUM,
                    },
                    range(symbol.range),
                    range(symbol.selection),
                    None,
                )
            })
            .collect::<Vec<_>>();
        let kind = match scope.kind {
            ScopeKind::Module => {
                top.extend(children);
                continue;
            }
            ScopeKind::Class => lsp_types::SymbolKind::CLASS,
            ScopeKind::Function => lsp_types::SymbolKind::FUNCTION,
        };
        top.push(symbol_of(
            scope.qualname.clone(),
            kind,
            range(scope.range),
            range(scope.name_range),
            Some(children),
        ));
    }
    top
}

fn symbol_of(
    name: String,
    kind: lsp_types::SymbolKind,
    range: lsp_types::Range,
    selection_range: lsp_types::Range,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    #[allow(deprecated)] // `deprecated` is a field every literal must name.
    DocumentSymbol {
        name,
        detail: None,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children,
    }
}

/// The quick fixes for the diagnostics that overlap `range`: `@goto` on a function whose
/// markers are not rewritten (G102) in a file that imports it, and removing an unused
/// label (G101).
fn code_actions(
    server: &Server<'_>,
    uri: &Uri,
    open: &Open,
    range: TextRange,
) -> Vec<CodeActionOrCommand> {
    let analysis = &open.analysis;
    let text = open.document.text.as_str();
    let mut actions = Vec::new();
    for diagnostic in &analysis.diagnostics {
        if diagnostic.range.intersect(range).is_none() {
            continue;
        }
        let (title, edit) = match diagnostic.code {
            Code::MarkersNotRewritten => {
                // Only where the file imports the decorator: one it does not would be a
                // `NameError` (and where to add the import is the author's choice).
                let Some(function) = analysis
                    .unrewritten_function_at(diagnostic.range)
                    .filter(|_| analysis.imports_decorator())
                else {
                    continue;
                };
                let at = function.range.start();
                let line = open.document.whole_line(at);
                let indent = &text[TextRange::new(line.start(), at)];
                if !indent.chars().all(char::is_whitespace) {
                    continue;
                }
                let name = function
                    .qualname
                    .rsplit('.')
                    .next()
                    .unwrap_or(&function.qualname);
                let decorator = analysis.decorator();
                (
                    format!("Decorate `{name}` with `@{decorator}`"),
                    TextEdit::new(
                        open.document
                            .lsp_range(TextRange::empty(at), server.encoding),
                        format!("@{decorator}\n{indent}"),
                    ),
                )
            }
            Code::UnusedLabel => {
                let Some((label, alone)) = analysis.label_named_at(diagnostic.range) else {
                    continue;
                };
                let (removed, replacement) = removal(open, label, alone);
                (
                    format!("Remove the unused label `{}`", &text[label]),
                    TextEdit::new(
                        open.document.lsp_range(removed, server.encoding),
                        replacement,
                    ),
                )
            }
            _ => continue,
        };
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![lsp_diagnostic(uri, open, diagnostic, server.encoding)]),
            edit: Some(WorkspaceEdit::new(HashMap::from([(
                uri.clone(),
                vec![edit],
            )]))),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    actions
}

/// What removing the statement `label` replaces, and with what: `pass` in its place where
/// it is the only statement of its block (`alone`); else its whole lines where nothing else
/// is on them (a `;` after it aside); else the statement and the `;` that joins it to the
/// statement after it, or to the one before.
fn removal(open: &Open, label: TextRange, alone: bool) -> (TextRange, String) {
    if alone {
        return (label, "pass".to_owned());
    }
    let text = open.document.text.as_str();
    // A statement may go on over lines (`(label\n .a)`): from its first line to its last.
    let first = open.document.whole_line(label.start());
    let last = open.document.whole_line(label.end());
    let before = &text[TextRange::new(first.start(), label.start())];
    let after = &text[TextRange::new(label.end(), last.end())];
    let after_semicolon = after.trim_start().strip_prefix(';');
    let removed = if before.trim().is_empty() && after_semicolon.unwrap_or(after).trim().is_empty()
    {
        TextRange::new(first.start(), last.end())
    } else if let Some(rest) = after_semicolon {
        TextRange::new(label.start(), last.end() - TextSize::of(rest.trim_start()))
    } else if let Some(kept) = before.trim_end().strip_suffix(';') {
        TextRange::new(first.start() + TextSize::of(kept), label.end())
    } else {
        label
    };
    (removed, String::new())
}
