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

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Exit, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request as _, Shutdown};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, OneOf, PublishDiagnosticsParams, RenameOptions, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri, WorkDoneProgressOptions,
};

use crate::Options;
use analysis::Analysis;
use document::{Document, Encoding};

/// Why the server stopped other than by the client's `shutdown` and then `exit`: the
/// connection failed, the client's `initialize` was not one, or the client ended the
/// session without `shutdown` (LSP then asks for exit status 1).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServerError(String);

/// Serves one client over standard input and output until it sends `exit`. `options` are
/// the defaults of every document: a client's initialization option `allScopes` and a
/// file's `# gotopy: all-scopes` line add to them.
///
/// Messages are read and written on the calling thread, with nothing between the pipes
/// and the analysis: an editor waits for each update, and a thread handing each message
/// on would add to every one of them.
pub fn serve_stdio(options: Options) -> Result<(), ServerError> {
    let mut stdio = Stdio {
        input: std::io::stdin().lock(),
        output: std::io::stdout().lock(),
    };
    serve(&mut stdio, options)
}

/// Where messages come from and go to: the process's standard streams, or (in tests) an
/// in-memory connection.
trait Transport {
    /// The next message; `None` when the client has closed the connection.
    fn receive(&mut self) -> Result<Option<Message>, ServerError>;
    fn send(&mut self, message: Message) -> Result<(), ServerError>;
}

struct Stdio {
    input: std::io::StdinLock<'static>,
    output: std::io::StdoutLock<'static>,
}

impl Transport for Stdio {
    fn receive(&mut self) -> Result<Option<Message>, ServerError> {
        loop {
            let Some(body) = read_frame(&mut self.input)? else {
                return Ok(None);
            };
            match serde_json::from_slice(&body) {
                Ok(message) => return Ok(Some(message)),
                // The frame was read whole, so the next one starts after it.
                Err(error) => {
                    eprintln!("gotopy server: ignored a message that is not JSON-RPC: {error}")
                }
            }
        }
    }

    fn send(&mut self, message: Message) -> Result<(), ServerError> {
        message
            .write(&mut self.output)
            .and_then(|()| std::io::Write::flush(&mut self.output))
            .map_err(|error| ServerError(format!("cannot write a message: {error}")))
    }
}

/// The largest message the server reads (the whole text of a document comes in one): far
/// above any file an editor holds, and below what would exhaust memory on a corrupt length.
const MAX_MESSAGE: usize = 1 << 30;

/// The body of the next frame of `input` (header lines up to an empty one, of which
/// `Content-Length` is required, then that many bytes), or `None` if the input ends
/// before one. Headers that cannot be read lose the stream's place, so they end the session.
fn read_frame(input: &mut impl std::io::BufRead) -> Result<Option<Vec<u8>>, ServerError> {
    let broken = |why: String| ServerError(format!("cannot read a message: {why}"));
    let mut length = None;
    let mut line = String::new();
    let mut headers = 0;
    loop {
        line.clear();
        if input
            .read_line(&mut line)
            .map_err(|e| broken(e.to_string()))?
            == 0
        {
            return if headers == 0 {
                Ok(None)
            } else {
                Err(broken(
                    "the input ended inside a message's headers".to_owned(),
                ))
            };
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        headers += 1;
        let Some((name, value)) = header.split_once(':') else {
            return Err(broken(format!("a header without a colon: {header:?}")));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| broken(format!("Content-Length {value:?}")))?,
            );
        }
    }
    let length = length.ok_or_else(|| broken("a message without Content-Length".to_owned()))?;
    if length > MAX_MESSAGE {
        return Err(broken(format!("a message of {length} bytes")));
    }
    let mut body = vec![0; length];
    input
        .read_exact(&mut body)
        .map_err(|e| broken(format!("the input ended inside a message: {e}")))?;
    Ok(Some(body))
}

#[cfg(test)]
impl Transport for lsp_server::Connection {
    fn receive(&mut self) -> Result<Option<Message>, ServerError> {
        Ok(self.receiver.recv().ok())
    }

    fn send(&mut self, message: Message) -> Result<(), ServerError> {
        self.sender
            .send(message)
            .map_err(|_| ServerError("the client has gone".to_owned()))
    }
}

/// Serves one client: the `initialize` handshake, then every message until `exit`.
fn serve(transport: &mut dyn Transport, options: Options) -> Result<(), ServerError> {
    let Some((id, params)) = initialize_request(transport)? else {
        return Err(ServerError(
            "the client left before initializing".to_owned(),
        ));
    };
    let params: InitializeParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(error) => {
            let message = format!("invalid initialize parameters: {error}");
            let code = ErrorCode::InvalidParams as i32;
            transport.send(Response::new_err(id, code, message.clone()).into())?;
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
    let initialized = serde_json::json!({
        "capabilities": capabilities(encoding),
        "serverInfo": {"name": "gotopy", "version": env!("CARGO_PKG_VERSION")},
    });
    transport.send(Response::new_ok(id, initialized).into())?;
    let mut server = Server {
        transport,
        encoding,
        options: options.all_scopes(options.all_scopes || asked),
        open: HashMap::new(),
    };
    let mut shut_down = false;
    while let Some(message) = server.transport.receive()? {
        match message {
            Message::Request(request) if shut_down => {
                let message = "the server has been shut down".to_owned();
                let code = ErrorCode::InvalidRequest as i32;
                server.send(Response::new_err(request.id, code, message).into())?;
            }
            Message::Request(request) if request.method == Initialize::METHOD => {
                let message = "the server is initialized already".to_owned();
                let code = ErrorCode::InvalidRequest as i32;
                server.send(Response::new_err(request.id, code, message).into())?;
            }
            Message::Request(request) if request.method == Shutdown::METHOD => {
                shut_down = true;
                server.send(Response::new_ok(request.id, ()).into())?;
            }
            Message::Request(request) => {
                let response = server.answer(request);
                server.send(response.into())?;
            }
            Message::Notification(notification) if notification.method == Exit::METHOD => {
                return if shut_down {
                    Ok(())
                } else {
                    Err(ServerError(
                        "the client sent exit before shutdown".to_owned(),
                    ))
                };
            }
            // After `shutdown`, only `exit` counts.
            Message::Notification(_) if shut_down => {}
            Message::Notification(notification) => server.notified(notification)?,
            Message::Response(_) => {}
        }
    }
    Err(ServerError(
        "the client closed the connection without exit".to_owned(),
    ))
}

/// Waits for the client's `initialize` request: its id and parameters, or `None` if the
/// client leaves first. Other requests meanwhile get the error LSP prescribes.
fn initialize_request(
    transport: &mut dyn Transport,
) -> Result<Option<(lsp_server::RequestId, serde_json::Value)>, ServerError> {
    while let Some(message) = transport.receive()? {
        match message {
            Message::Request(request) if request.method == Initialize::METHOD => {
                return Ok(Some((request.id, request.params)));
            }
            Message::Request(request) => {
                let code = ErrorCode::ServerNotInitialized as i32;
                let message = "the server is not initialized yet".to_owned();
                transport.send(Response::new_err(request.id, code, message).into())?;
            }
            Message::Notification(notification) if notification.method == Exit::METHOD => {
                return Ok(None);
            }
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
    Ok(None)
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
    transport: &'a mut dyn Transport,
    encoding: Encoding,
    options: Options,
    open: HashMap<Uri, Open>,
}

impl Server<'_> {
    fn send(&mut self, message: Message) -> Result<(), ServerError> {
        self.transport.send(message)
    }

    /// Handles a notification; only writing the diagnostics can fail.
    fn notified(&mut self, notification: Notification) -> Result<(), ServerError> {
        let uri = match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                else {
                    return Ok(());
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
                    return Ok(());
                };
                let uri = params.text_document.uri;
                let Some(mut open) = self.open.remove(&uri) else {
                    return Ok(());
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
                    return Ok(());
                };
                let uri = params.text_document.uri;
                self.open.remove(&uri);
                return self.publish(uri, Vec::new(), None);
            }
            _ => return Ok(()),
        };
        let open = &self.open[&uri];
        let diagnostics = handlers::diagnostics(&uri, open, self.encoding);
        let version = open.document.version;
        self.publish(uri, diagnostics, Some(version))
    }

    /// The front end's analysis of `document`. Should the front end panic, the document's
    /// one diagnostic says so, and the server goes on.
    fn analyse(&self, uri: &Uri, document: &Document) -> Analysis {
        let (path, text, options) = (uri.path().as_str(), document.text.as_str(), self.options);
        std::panic::catch_unwind(|| Analysis::new(path, text, options))
            .unwrap_or_else(|_| Analysis::failed(path, text))
    }

    fn publish(
        &mut self,
        uri: Uri,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), ServerError> {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into())
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
