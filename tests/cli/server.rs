//! `gotopy server` over its standard input and output, as an editor runs it: every `err`
//! and `ok` fixture's diagnostics over LSP are the ones `gotopy check --format json`
//! prints for it (the client asks for UTF-32 positions, which count characters as `check`'s
//! columns do); and Neovim, with the setup docs/editors.md gives, as the client.

use std::io::{BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

use super::common;

struct Server {
    child: std::process::Child,
    input: ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gotopy"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("gotopy server starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
        };
        let capabilities = json!({"general": {"positionEncodings": ["utf-32"]}});
        let answer = server.request(1, "initialize", json!({"capabilities": capabilities}));
        assert_eq!(answer["capabilities"]["positionEncoding"], "utf-32");
        server.send(Notification::new("initialized".to_owned(), json!({})).into());
        server
    }

    fn send(&mut self, message: Message) {
        message.write(&mut self.input).unwrap();
        self.input.flush().unwrap();
    }

    fn receive(&mut self) -> Message {
        Message::read(&mut self.output)
            .unwrap()
            .expect("the server answers")
    }

    fn request(&mut self, id: i32, method: &str, params: Value) -> Value {
        self.send(Request::new(RequestId::from(id), method.to_owned(), params).into());
        loop {
            if let Message::Response(response) = self.receive() {
                return response.response_result.expect("the request succeeds");
            }
        }
    }

    /// Opens `text` as `uri` and returns the diagnostics published for it.
    fn diagnostics(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let document = json!({"uri": uri, "languageId": "python", "version": 1, "text": text});
        self.send(
            Notification::new(
                "textDocument/didOpen".to_owned(),
                json!({"textDocument": document}),
            )
            .into(),
        );
        loop {
            if let Message::Notification(notification) = self.receive()
                && notification.params["uri"] == uri
            {
                return notification.params["diagnostics"]
                    .as_array()
                    .unwrap()
                    .clone();
            }
        }
    }

    fn stop(mut self) {
        self.request(2, "shutdown", Value::Null);
        self.send(Notification::new("exit".to_owned(), Value::Null).into());
        assert!(self.child.wait().unwrap().success());
    }
}

/// A `check --format json` diagnostic as LSP gives it: zero-based lines and columns, the
/// help after the message.
fn as_lsp(checked: &Value, uri: &str) -> Value {
    let at = |line: &Value, column: &Value| json!({"line": line.as_u64().unwrap() - 1, "character": column.as_u64().unwrap() - 1});
    let range = |place: &Value| {
        json!({"start": at(&place["line"], &place["column"]),
               "end": at(&place["end_line"], &place["end_column"])})
    };
    let mut message = checked["message"].as_str().unwrap().to_owned();
    if let Some(help) = checked["help"].as_str() {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<Value> = checked["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|related| {
            json!({"location": {"uri": uri, "range": range(related)},
                   "message": related["message"]})
        })
        .collect();
    json!({
        "code": checked["code"],
        "severity": if checked["severity"] == "error" { 1 } else { 2 },
        "message": message,
        "range": range(checked),
        "relatedInformation": related,
        "label": checked["label"],
    })
}

/// The fields of an LSP diagnostic that `as_lsp` fills.
fn compared(published: &Value) -> Value {
    json!({
        "code": published["code"],
        "severity": published["severity"],
        "message": published["message"],
        "range": published["range"],
        "relatedInformation": published["relatedInformation"],
        "label": published["data"]["label"],
    })
}

#[test]
fn server_diagnostics_are_checks() {
    let mut server = Server::start();
    let mut compared_count = 0;
    for dir in ["fixtures/err", "fixtures/ok"] {
        for path in common::python_files(dir) {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut check = Command::new(env!("CARGO_BIN_EXE_gotopy"));
            check.args(["check", "--format", "json"]);
            if common::fixture_options(&text).all_scopes {
                check.arg("--all-scopes");
            }
            let output = check.arg(&path).output().unwrap();
            let checked: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
            let uri = format!("file://{}", path.display());
            let expected: Vec<Value> = checked.iter().map(|d| as_lsp(d, &uri)).collect();
            let published: Vec<Value> = server
                .diagnostics(&uri, &text)
                .iter()
                .map(compared)
                .collect();
            assert_eq!(published, expected, "{}", path.display());
            compared_count += expected.len();
        }
    }
    // Every err fixture has at least one diagnostic.
    assert!(
        compared_count >= 30,
        "compared {compared_count} diagnostics"
    );
    server.stop();
}

/// Neovim (Debian's, from `tools/pythons --neovim`) runs the setup docs/editors.md gives
/// (its Lua block, copied here) with this build's `gotopy` first on `PATH`, then
/// `tests/editors/neovim.lua`: in `tests/server/walk.py`, the diagnostics, the definition
/// of a goto, the references of a label, a hover, the outline, a rename and both quick
/// fixes, each checked against the buffer's own text.
#[test]
fn neovim_runs_the_documented_setup() {
    let listed = Command::new(common::root().join("tools/pythons"))
        .arg("--neovim")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(listed.status.success(), "tools/pythons --neovim failed");
    let nvim = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("nvim ").map(str::to_owned))
        .expect("tools/pythons --neovim names nvim");
    let guide = std::fs::read_to_string(common::root().join("docs/editors.md")).unwrap();
    let setup = guide
        .split("```lua\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/editors.md has a Lua block");
    let setup_file = common::write("neovim-setup.lua", setup);
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_gotopy"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let output = Command::new(nvim)
        .args(["--headless", "--clean", "-S"])
        .arg(common::root().join("tests/editors/neovim.lua"))
        .current_dir(common::root())
        .env("PATH", path)
        .env("GOTOPY_SETUP", &setup_file)
        .env("FILE", "tests/server/walk.py")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "neovim failed:\n{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        said,
        "ok diagnostics\nok client\nok definition\nok references\nok hover\nok outline\n\
         ok rename\nok quick fix for G102\nok quick fix for G101\nok fixed\n"
    );
}
