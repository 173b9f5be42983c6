//! `gotopy server`: the front end as a language server (LSP 3.17) over standard input and
//! output, for editors (feature `server`).
//!
//! It needs no interpreter: every answer comes from parse, scan and check, run again on
//! each version of a document (`analysis`), with positions converted in the encoding
//! the client and server agree on (`document`). It offers diagnostics as the user types,
//! go to definition (a `goto`, a computed goto's string literal, a `case`), references and
//! rename of a label, the outline (labels and switches), hover on a goto (what leaving
//! does there) and two quick fixes (`@goto` where G102 says markers are not rewritten,
//! removing an unused label). docs/editors.md shows how editors start it.
//!
//! ```no_run
//! // What `gotopy server --all-scopes` does.
//! gotopy::server::serve_stdio(gotopy::Options::new().all_scopes(true)).unwrap();
//! ```

// `lsp_types::Uri` keeps its parsed parts in a cell, which clippy takes for a key that may
// change; its hash and equality read only its text, which never does.
#![allow(clippy::mutable_key_type)]

mod analysis;
mod document;
mod handlers;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, OneOf, PublishDiagnosticsParams, RenameOptions, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri, WorkDoneProgressOptions,
};

use crate::Options;
use analysis::Analysis;
use document::{Document, Encoding};

/// Why the server stopped other than by the client's `shutdown` and `exit`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServerError(String);

/// Serves one client over standard input and output until it sends `exit` (or closes the
/// stream). `options` are the defaults of every document: a client's initialization
/// option `allScopes` and a file's `# gotopy: all-scopes` line add to them.
pub fn serve_stdio(options: Options) -> Result<(), ServerError> {
    let (connection, threads) = Connection::stdio();
    serve(&connection, options)?;
    // The writer thread ends once every sender is gone.
    drop(connection);
    threads
        .join()
        .map_err(|error| ServerError(format!("the connection failed: {error}")))
}

/// Serves one client over `connection`.
fn serve(connection: &Connection, options: Options) -> Result<(), ServerError> {
    let protocol = |error: lsp_server::ProtocolError| ServerError(error.to_string());
    let (id, params) = connection.initialize_start().map_err(protocol)?;
    let params: InitializeParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(error) => {
            let message = format!("invalid initialize parameters: {error}");
            let response = Response::new_err(id, ErrorCode::InvalidParams as i32, message.clone());
            let _ = connection.sender.send(response.into());
            return Err(ServerError(message));
        }
    };
    let encoding = Encoding::negotiate(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_deref()),
    );
    let asked = params
        .initialization_options
        .as_ref()
        .and_then(|init| init.get("allScopes"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let options = options.all_scopes(options.all_scopes || asked);
    let initialized = serde_json::json!({
        "capabilities": capabilities(encoding),
        "serverInfo": {"name": "gotopy", "version": env!("CARGO_PKG_VERSION")},
    });
    connection
        .initialize_finish(id, initialized)
        .map_err(protocol)?;
    let mut server = Server {
        connection,
        encoding,
        options,
        open: HashMap::new(),
    };
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection.handle_shutdown(&request).map_err(protocol)? {
                    return Ok(());
                }
                let response = server.answer(request);
                server.send(response.into());
            }
            Message::Notification(notification) => server.notified(notification),
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// A document the client has open: its text and what the front end says of it.
struct Open {
    document: Document,
    analysis: Analysis,
}

struct Server<'a> {
    connection: &'a Connection,
    encoding: Encoding,
    options: Options,
    open: HashMap<Uri, Open>,
}

impl Server<'_> {
    fn send(&self, message: Message) {
        // A client that has gone away is noticed by the receiving loop.
        let _ = self.connection.sender.send(message);
    }

    fn notified(&mut self, notification: Notification) {
        let uri = match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                else {
                    return;
                };
                let item = params.text_document;
                let document = Document::new(item.text, item.version);
                self.open.insert(
                    item.uri.clone(),
                    Open {
                        analysis: self.analyse(&item.uri, &document),
                        document,
                    },
                );
                item.uri
            }
            DidChangeTextDocument::METHOD => {
                let Ok(params) = notification.extract::<lsp_types::DidChangeTextDocumentParams>(
                    DidChangeTextDocument::METHOD,
                ) else {
                    return;
                };
                let uri = params.text_document.uri;
                let Some(mut open) = self.open.remove(&uri) else {
                    return;
                };
                for change in params.content_changes {
                    open.document.apply(change, self.encoding);
                }
                open.document.version = params.text_document.version;
                open.analysis = self.analyse(&uri, &open.document);
                self.open.insert(uri.clone(), open);
                uri
            }
            DidCloseTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                else {
                    return;
                };
                let uri = params.text_document.uri;
                self.open.remove(&uri);
                self.publish(uri, Vec::new(), None);
                return;
            }
            _ => return,
        };
        let open = &self.open[&uri];
        let diagnostics = handlers::diagnostics(&uri, open, self.encoding);
        let version = open.document.version;
        self.publish(uri, diagnostics, Some(version));
    }

    fn analyse(&self, uri: &Uri, document: &Document) -> Analysis {
        Analysis::new(uri.path().as_str(), &document.text, self.options)
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into());
    }

    /// The response to a request. A handler that panics answers with an error rather than
    /// ending the server: the editor keeps its diagnostics.
    fn answer(&self, request: Request) -> Response {
        let id = request.id.clone();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handlers::answer(self, request)
        })) {
            Ok(Ok(result)) => Response::new_ok(id, result),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                "gotopy server failed on this request (a bug in gotopy)".to_owned(),
            ),
        }
    }
}
