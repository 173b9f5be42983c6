//! The server driven over an in-memory connection, as a client drives it. Every expected
//! position is found in the test's own text (the `n`-th occurrence of a string), not
//! computed by the server's code.

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

use super::{ServerError, serve};
use crate::Options;

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), ServerError>>>,
    next: i32,
    /// Notifications that arrived while a response was awaited.
    pending: Vec<Notification>,
}

const URI: &str = "file:///work/demo.py";

impl Client {
    /// A server started with `options`, initialized with `init` as its client's
    /// `initializationOptions` and UTF-16 positions.
    fn start(options: Options, init: Value) -> Client {
        Client::start_with(
            options,
            json!({"initializationOptions": init, "capabilities": {}}),
        )
    }

    fn start_with(options: Options, initialize: Value) -> Client {
        let mut client = Client::spawn(options);
        let answer = client.request("initialize", initialize);
        assert!(answer.response_result.is_ok(), "{answer:?}");
        client.notify("initialized", json!({}));
        client
    }

    /// A server on its thread, not yet initialized.
    fn spawn(options: Options) -> Client {
        let (server_side, client_side) = Connection::memory();
        let server = std::thread::spawn(move || {
            let mut server_side = server_side;
            serve(&mut server_side, options)
        });
        Client {
            connection: client_side,
            server: Some(server),
            next: 0,
            pending: Vec::new(),
        }
    }

    /// A server with the default options and `text` open in it, and the diagnostics it
    /// published.
    fn opened(text: &str) -> (Client, Value) {
        let mut client = Client::start(Options::new(), Value::Null);
        let published = client.open(text);
        (client, published)
    }

    fn notify(&self, method: &str, params: Value) {
        let notification = Notification::new(method.to_owned(), params);
        self.connection.sender.send(notification.into()).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        self.next += 1;
        let id = RequestId::from(self.next);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection.sender.send(request.into()).unwrap();
        loop {
            match self.receive() {
                Message::Response(response) if response.id == id => return response,
                Message::Notification(notification) => self.pending.push(notification),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// The result of a request that must succeed.
    fn result(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params).response_result {
            Ok(result) => result,
            Err(error) => panic!("{method}: {error:?}"),
        }
    }

    fn receive(&self) -> Message {
        self.connection
            .receiver
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the server answers")
    }

    /// The next diagnostics published.
    fn diagnostics(&mut self) -> Value {
        loop {
            let notification = if self.pending.is_empty() {
                match self.receive() {
                    Message::Notification(notification) => notification,
                    other => panic!("unexpected {other:?}"),
                }
            } else {
                self.pending.remove(0)
            };
            if notification.method == "textDocument/publishDiagnostics" {
                return notification.params;
            }
        }
    }

    fn open(&mut self, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": text}}),
        );
        self.diagnostics()
    }

    fn at(&mut self, method: &str, position: Value) -> Value {
        self.result(
            method,
            json!({"textDocument": {"uri": URI}, "position": position,
                   "context": {"includeDeclaration": true}}),
        )
    }

    /// The ranges of the references at `position`, declarations included.
    fn references(&mut self, position: Value) -> Vec<Value> {
        let answer = self.at("textDocument/references", position);
        answer
            .as_array()
            .unwrap()
            .iter()
            .map(|location| location["range"].clone())
            .collect()
    }

    fn stop(mut self) {
        self.result("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let server = self.server.take().unwrap();
        server.join().unwrap().unwrap();
    }
}

/// The LSP position (UTF-16 columns) of the `nth` occurrence of `needle` in `text`, plus
/// `shift` characters.
fn position(text: &str, needle: &str, nth: usize, shift: usize) -> Value {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .expect("the needle is there")
        .0;
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    let character: usize = text[line_start..offset]
        .chars()
        .map(char::len_utf16)
        .sum::<usize>()
        + shift;
    json!({"line": line, "character": character})
}

fn range(text: &str, needle: &str, nth: usize) -> Value {
    let start = position(text, needle, nth, 0);
    let end = position(text, needle, nth, needle.chars().map(char::len_utf16).sum());
    json!({"start": start, "end": end})
}

/// The range of the name after the dot in the `nth` occurrence of a marker such as
/// `label .a`.
fn name_in(text: &str, marker: &str, nth: usize) -> Value {
    let dot = marker.rfind('.').unwrap() + 1;
    let start = position(text, marker, nth, dot);
    let end = position(text, marker, nth, marker.len());
    json!({"start": start, "end": end})
}

/// A goto that leaves a `with` and a `for`, one that leaves nothing, and a label in a
/// function that is not rewritten; also the Python package's client test's program.
const PROGRAM: &str = include_str!("../../tests/server/walk.py");

#[test]
fn diagnostics_follow_the_edits() {
    let text = "from goto import goto\n\n@goto\ndef f():\n    goto .missing\n";
    let (mut client, published) = Client::opened(text);
    assert_eq!(published["version"], 1);
    let diagnostic = &published["diagnostics"][0];
    assert_eq!(diagnostic["code"], "G002");
    assert_eq!(diagnostic["severity"], 1);
    assert_eq!(diagnostic["range"], range(text, "missing", 0));
    assert!(
        diagnostic["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with("docs/language.md#g002")
    );
    // An edit that breaks the syntax: the error is reported and the server goes on.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
            {"range": {"start": position(text, "goto .", 0, 0), "end": position(text, "goto .", 0, 0)},
             "text": "("}]}),
    );
    let published = client.diagnostics();
    assert_eq!(published["version"], 2);
    assert_eq!(published["diagnostics"][0]["code"], "G000");
    // Undone, and the label added: no diagnostic is left.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [
            {"text": format!("{text}    label .missing\n")}]}),
    );
    let published = client.diagnostics();
    assert_eq!(published["diagnostics"], json!([]));
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    assert_eq!(client.diagnostics()["diagnostics"], json!([]));
    client.stop();
}

#[test]
fn related_places_and_warnings() {
    let text = "from goto import goto\n\n@goto\ndef f(x):\n    label .a\n    label .a\n    for y in x:\n        label .b\n    goto .b\n";
    let (client, published) = Client::opened(text);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    let codes: Vec<&str> = diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["G101", "G001", "G003"]);
    let duplicate = &diagnostics[1];
    assert_eq!(duplicate["range"], name_in(text, "label .a", 1));
    let related = &duplicate["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], URI);
    assert_eq!(related["location"]["range"], name_in(text, "label .a", 0));
    assert_eq!(diagnostics[0]["range"], name_in(text, "label .a", 0));
    assert_eq!(diagnostics[0]["severity"], 2);
    assert_eq!(diagnostics[0]["tags"], json!([1]));
    client.stop();
}

#[test]
fn labels_are_symbols() {
    let text = PROGRAM;
    let (mut client, _) = Client::opened(text);
    let done = range(text, "done", 2);
    // Definition, from either goto (the cursor at the end of the name counts).
    for goto in [0, 1] {
        let answer = client.at("textDocument/definition", position(text, "done", goto, 4));
        assert_eq!(answer, json!({"uri": URI, "range": done}));
    }
    // References: the label and both gotos, in order.
    let ranges = client.references(position(text, "done", 2, 1));
    assert_eq!(
        ranges,
        [range(text, "done", 0), range(text, "done", 1), done]
    );
    // Nothing at a plain statement.
    assert_eq!(
        client.at("textDocument/definition", position(text, "s = ", 0, 0)),
        Value::Null
    );
    // The outline.
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    let names: Vec<(&str, Vec<&str>)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|scope| {
            let children = scope["children"].as_array().unwrap();
            (
                scope["name"].as_str().unwrap(),
                children
                    .iter()
                    .map(|c| c["name"].as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(names, [("walk", vec![".done"]), ("plain", vec![".unused"])]);
    client.stop();
}

#[test]
fn hover_says_what_a_goto_leaves() {
    let text = PROGRAM;
    let (mut client, _) = Client::opened(text);
    let hover = client.at("textDocument/hover", position(text, "goto .done", 0, 0));
    let value = hover["contents"]["value"].as_str().unwrap();
    assert_eq!(
        value,
        "`goto .done` jumps to `label .done` at line 11.\n\nIt leaves the `with` at line 7 \
         (`__exit__` runs) and the `for` at line 6 (its iterator is dropped)."
    );
    let hover = client.at("textDocument/hover", position(text, "goto .done", 1, 0));
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .ends_with("leaving nothing to clean up.")
    );
    let hover = client.at("textDocument/hover", position(text, "label .done", 0, 0));
    assert_eq!(
        hover["contents"]["value"],
        "`label .done` in function `walk`: jumped to from lines 9, 10"
    );
    client.stop();
}

#[test]
fn rename_moves_the_label_and_its_gotos() {
    let text = "from goto import goto\n\n@goto\ndef f(n):\n    label .top\n    n -= 1\n    if n:\n        goto .top\n    label .end\n    goto .end\n";
    let (mut client, _) = Client::opened(text);
    let at = position(text, "top", 1, 1);
    let prepared = client.at("textDocument/prepareRename", at.clone());
    assert_eq!(
        prepared,
        json!({"range": range(text, "top", 1), "placeholder": "top"})
    );
    let rename = |client: &mut Client, name: &str| {
        client.request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": at, "newName": name}),
        )
    };
    let answer = rename(&mut client, ".again").response_result.unwrap();
    let edits = answer["changes"][URI].as_array().unwrap();
    assert_eq!(edits.len(), 2);
    assert_eq!(
        edits[0],
        json!({"range": range(text, "top", 0), "newText": "again"})
    );
    assert_eq!(
        edits[1],
        json!({"range": range(text, "top", 1), "newText": "again"})
    );
    for (name, why) in [
        ("end", "function `f` already has a label `.end` (line 9)"),
        ("for", "`for` is not a name a label can have"),
        ("2x", "`2x` is not a name a label can have"),
    ] {
        let error = rename(&mut client, name)
            .response_result
            .expect_err("refused");
        assert_eq!(error.message, why);
    }
    client.stop();
}

#[test]
fn computed_gotos_and_switches_lead_to_their_targets() {
    let text = "from goto import goto, switch\n\n@goto\ndef f(stack, x):\n    stack.append(\"back\")\n    goto *stack.pop()\n    label .back\n    while switch *x:\n        case[1]\n        break\n";
    let (mut client, _) = Client::opened(text);
    let answer = client.at("textDocument/definition", position(text, "back", 0, 1));
    assert_eq!(answer["range"], range(text, "back", 1));
    let ranges = client.references(position(text, "back", 1, 0));
    assert_eq!(ranges, [range(text, "back", 0), range(text, "back", 1)]);
    let answer = client.at("textDocument/definition", position(text, "case", 0, 2));
    assert_eq!(answer["range"], range(text, "while switch *x", 0));
    let hover = client.at("textDocument/hover", position(text, "goto *", 0, 0));
    assert_eq!(hover["contents"]["value"], "`goto *`: can jump to `.back`");
    client.stop();
}

#[test]
fn quick_fixes() {
    let text = "from goto import with_goto\n\nclass C:\n    @staticmethod\n    def f():\n        goto .a\n        label .a\n\n@with_goto\ndef g(x):\n    if x:\n        label .unused\n    x += 1; label .spare\n";
    let (mut client, published) = Client::opened(text);
    let actions = |client: &mut Client, diagnostic: &Value| {
        client.result(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": URI}, "range": diagnostic["range"],
                   "context": {"diagnostics": [diagnostic]}}),
        )
    };
    let diagnostics = published["diagnostics"].as_array().unwrap().clone();
    let codes: Vec<&str> = diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["G102", "G101", "G101"]);
    let edit = |action: &Value| action[0]["edit"]["changes"][URI][0].clone();
    // The decorator the file imports, above the first decorator, at its indentation.
    let fix = actions(&mut client, &diagnostics[0]);
    assert_eq!(fix[0]["title"], "Decorate `f` with `@with_goto`");
    let at = position(text, "@staticmethod", 0, 0);
    assert_eq!(
        edit(&fix),
        json!({"range": {"start": at, "end": at}, "newText": "@with_goto\n    "})
    );
    // A label alone in its block becomes `pass`; one after `;` goes with it.
    let fix = actions(&mut client, &diagnostics[1]);
    assert_eq!(fix[0]["title"], "Remove the unused label `label .unused`");
    assert_eq!(
        edit(&fix),
        json!({"range": range(text, "label .unused", 0), "newText": "pass"})
    );
    let fix = actions(&mut client, &diagnostics[2]);
    assert_eq!(
        edit(&fix),
        json!({"range": range(text, "; label .spare", 0), "newText": ""})
    );
    client.stop();
}

#[test]
fn all_scopes_from_the_client_or_the_file() {
    let text = "goto .a\nlabel .a\n";
    let mut client = Client::start(Options::new(), Value::Null);
    assert_eq!(client.open(text)["diagnostics"][0]["code"], "G102");
    client.stop();
    let mut client = Client::start(Options::new(), json!({"allScopes": true}));
    assert_eq!(client.open(text)["diagnostics"], json!([]));
    client.stop();
    let mut client = Client::start(Options::new(), Value::Null);
    assert_eq!(
        client.open(&format!("# gotopy: all-scopes\n{text}"))["diagnostics"],
        json!([])
    );
    client.stop();
}

#[test]
fn bad_requests_get_errors_and_the_server_goes_on() {
    let mut client = Client::start(Options::new(), Value::Null);
    let unseen = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": "file:///elsewhere.py"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(
        unseen
            .response_result
            .unwrap_err()
            .message
            .contains("is not open")
    );
    let unknown = client.request("textDocument/formatting", json!({}));
    assert_eq!(
        unknown.response_result.unwrap_err().code,
        lsp_server::ErrorCode::MethodNotFound as i32
    );
    let invalid = client.request("textDocument/hover", json!({"nonsense": 1}));
    assert_eq!(
        invalid.response_result.unwrap_err().code,
        lsp_server::ErrorCode::InvalidParams as i32
    );
    // Deeper than CPython allows: a syntax error, not a crashed server.
    let deep = format!(
        "from goto import goto\nx = {}1{}\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert_eq!(client.open(&deep)["diagnostics"][0]["code"], "G000");
    // A position past the end of the text.
    let past = client.at("textDocument/hover", json!({"line": 99, "character": 99}));
    assert_eq!(past, Value::Null);
    client.stop();
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let mut client = Client::start_with(
        Options::new(),
        json!({"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}}),
    );
    let text = "from goto import goto\n\n@goto\ndef f():\n    s = '\u{1d11e}'; goto .x\n";
    let published = client.open(text);
    let at = text.find(".x").unwrap() + 1 - text.find("    s").unwrap();
    assert_eq!(
        published["diagnostics"][0]["range"]["start"],
        json!({"line": 4, "character": at})
    );
    client.stop();
}

#[test]
fn the_session_follows_the_protocol() {
    let mut client = Client::spawn(Options::new());
    // Before `initialize`, a request gets an error and the server waits on.
    let early = client.request("textDocument/hover", json!({}));
    assert_eq!(early.response_result.unwrap_err().code, -32002);
    client.result("initialize", json!({"capabilities": {}}));
    client.result("shutdown", Value::Null);
    // After `shutdown`, a request is an invalid one.
    let late = client.request("textDocument/hover", json!({}));
    assert_eq!(
        late.response_result.unwrap_err().code,
        lsp_server::ErrorCode::InvalidRequest as i32
    );
    client.notify("exit", Value::Null);
    client.server.take().unwrap().join().unwrap().unwrap();

    // `exit` without `shutdown` ends the server with an error (exit status 1 in LSP's words).
    let mut client = Client::start(Options::new(), Value::Null);
    client.notify("exit", Value::Null);
    let ended = client.server.take().unwrap().join().unwrap();
    assert_eq!(
        ended.unwrap_err().to_string(),
        "the client sent exit before shutdown"
    );
}

/// The code actions for the `nth` diagnostic of `text`.
fn fixes_for(text: &str, nth: usize) -> (Value, Value) {
    let (mut client, published) = Client::opened(text);
    let diagnostic = published["diagnostics"][nth].clone();
    let actions = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": diagnostic["range"],
               "context": {"diagnostics": [diagnostic]}}),
    );
    client.stop();
    (diagnostic, actions)
}

#[test]
fn quick_fixes_keep_the_program_as_it_was() {
    // A label ended by a bare `;`: its line goes, not the line break after it, which would
    // pull the module's next statement into the function.
    let text = "from goto import goto\n\n@goto\ndef f():\n    x = 1\n    label .a;\ny = 2\n";
    let (diagnostic, fix) = fixes_for(text, 0);
    assert_eq!(diagnostic["code"], "G101");
    let line = position(text, "    label .a;", 0, 0);
    let next = position(text, "y = 2", 0, 0);
    assert_eq!(
        fix[0]["edit"]["changes"][URI][0],
        json!({"range": {"start": line, "end": next}, "newText": ""})
    );
    // A label over two lines goes whole.
    let text = "from goto import goto\n\n@goto\ndef f():\n    x = 1\n    (label\n        .a)\n    return x\n";
    let (_, fix) = fixes_for(text, 0);
    let from = position(text, "    (label", 0, 0);
    let to = position(text, "    return", 0, 0);
    assert_eq!(
        fix[0]["edit"]["changes"][URI][0],
        json!({"range": {"start": from, "end": to}, "newText": ""})
    );
    // No `@goto` for a class's markers (only all-scopes rewrites those), nor where the file
    // does not import the decorator.
    let text = "from goto import goto\n\n@goto\ndef f():\n    class C:\n        goto .a\n        label .a\n";
    let (diagnostic, fix) = fixes_for(text, 0);
    assert_eq!(
        (diagnostic["code"].as_str(), fix),
        (Some("G102"), json!([]))
    );
    let text = "def f():\n    goto .a\n    label .a\n";
    let (diagnostic, fix) = fixes_for(text, 0);
    assert_eq!(
        (diagnostic["code"].as_str(), fix),
        (Some("G102"), json!([]))
    );
}

#[test]
fn renames_that_could_break_the_program_are_refused() {
    let text = "from goto import goto\n\n@goto\ndef f(x):\n    d = {\"end\": 1}\n    goto *x\n    label .end\n    label .top\n    goto .top\n";
    let (mut client, _) = Client::opened(text);
    let rename = |client: &mut Client, at: Value, name: &str| {
        client
            .request(
                "textDocument/rename",
                json!({"textDocument": {"uri": URI}, "position": at, "newName": name}),
            )
            .response_result
    };
    let refused = rename(&mut client, position(text, "end", 1, 0), "finish").unwrap_err();
    assert_eq!(
        refused.message,
        "`.end` is also named by the string literal on line 5, which a computed goto may \
         jump with; rename the label and those strings by hand"
    );
    // Not a Python identifier: `²` continues no name.
    let refused = rename(&mut client, position(text, "top", 0, 0), "a\u{b2}").unwrap_err();
    assert_eq!(refused.message, "`a\u{b2}` is not a name a label can have");
    let renamed = rename(&mut client, position(text, "top", 0, 0), "\u{e9}t\u{e9}").unwrap();
    assert_eq!(renamed["changes"][URI].as_array().unwrap().len(), 2);
    client.stop();
}

#[test]
fn after_shutdown_only_exit_counts() {
    let mut client = Client::start(Options::new(), Value::Null);
    let again = client.request("initialize", json!({"capabilities": {}}));
    assert_eq!(
        again.response_result.unwrap_err().code,
        lsp_server::ErrorCode::InvalidRequest as i32
    );
    client.result("shutdown", Value::Null);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                "text": "goto .nowhere\n"}}),
    );
    client.notify("exit", Value::Null);
    client.server.take().unwrap().join().unwrap().unwrap();
    // Nothing was published for the document opened after `shutdown`.
    assert!(client.connection.receiver.try_recv().is_err());
}

#[test]
fn frames_are_read_as_lsp_writes_them() {
    use super::read_frame;
    let read = |bytes: &[u8]| read_frame(&mut std::io::Cursor::new(bytes.to_vec()));
    let body = read(b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}rest").unwrap();
    assert_eq!(body.as_deref(), Some(&b"{}"[..]));
    assert_eq!(read(b"").unwrap(), None);
    for (broken, why) in [
        (
            &b"Content-Length: 2\r\n"[..],
            "the input ended inside a message's headers",
        ),
        (
            b"Content-Type: x\r\n\r\n{}",
            "a message without Content-Length",
        ),
        (b"Content-Length: two\r\n\r\n{}", "Content-Length \"two\""),
        (b"garbage\r\n\r\n", "a header without a colon: \"garbage\""),
        (
            b"Content-Length: 99999999999\r\n\r\n",
            "a message of 99999999999 bytes",
        ),
    ] {
        let error = read(broken).unwrap_err().to_string();
        assert_eq!(error, format!("cannot read a message: {why}"));
    }
    let short = read(b"Content-Length: 9\r\n\r\n{}")
        .unwrap_err()
        .to_string();
    assert!(short.starts_with("cannot read a message: the input ended inside a message"));
}
