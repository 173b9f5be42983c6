//! `gotopy server` under typing: a session of 1,000 edits to one file of 2,000 lines with
//! 150 labels (a Fortran port's shape: one function, a label every dozen lines, gotos
//! forward and back), each edit one character typed or deleted: a line opened at a place
//! spread over the file, a statement typed into it and deleted again a character at a
//! time, the line closed (so that some of the texts in between are not valid Python). Each update is timed from sending `didChange` to receiving the
//! diagnostics of that version, through the process's standard input and output as an
//! editor talks to it.
//!
//! The baselines, measured in this run: `gotopy check FILE` (the whole process, median of
//! 20) and `gotopy::check_source` on the same text in this process (the check alone). Goal
//! (issue 38): every update under the time `gotopy check` takes on the file. It also prints
//! the CPU time of an update (the server's, from `/proc`) and of a `check` process.
//!
//! Run: `cargo bench --bench server`; figures in docs/performance.md.

use std::io::{BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gotopy::{Options, Source, check_source};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::json;

/// The file: `labels` labels in one decorated function, 13 lines each.
fn program(labels: usize) -> String {
    let mut text = String::from("from goto import goto\n\n\n@goto\ndef port(n, a, b):\n");
    text.push_str("    total = 0\n    i = 0\n");
    for k in 0..labels {
        let back = k / 2;
        let forward = (k + 7).min(labels - 1);
        text.push_str(&format!(
            "    label .L{k}\n\
             \x20   i = i + 1\n\
             \x20   a = (a * 31 + {k}) % 1009\n\
             \x20   b = b + a // 7\n\
             \x20   if a % 5 == 0:\n\
             \x20       total = total + b\n\
             \x20       if total > n:\n\
             \x20           goto .L{forward}\n\
             \x20   if i < n and a % 11 == 3:\n\
             \x20       goto .L{back}\n\
             \x20   # statement {k} of the port\n\
             \x20   b = b - i\n\
             \x20   total = total ^ b\n"
        ));
    }
    text.push_str("    return total\n");
    text
}

struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Server {
    fn send(&mut self, message: Message) {
        message.write(&mut self.input).unwrap();
        self.input.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: serde_json::Value) {
        self.send(Notification::new(method.to_owned(), params).into());
    }

    /// Waits for the diagnostics of `version`; how many there were.
    fn diagnostics_of(&mut self, version: i32) -> usize {
        loop {
            let message = Message::read(&mut self.output)
                .unwrap()
                .expect("the server answers");
            if let Message::Notification(notification) = message
                && notification.params["version"] == version
            {
                return notification.params["diagnostics"].as_array().unwrap().len();
            }
        }
    }
}

fn main() {
    let binary = env!("CARGO_BIN_EXE_gotopy");
    let text = program(150);
    let lines = text.lines().count();
    let path = std::env::temp_dir().join(format!("gotopy-server-bench-{}.py", std::process::id()));
    std::fs::write(&path, &text).unwrap();

    // Baselines: the whole `gotopy check` process, and the check in this process.
    let children_before = cpu_seconds("self", true);
    let mut checks: Vec<Duration> = (0..20)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new(binary)
                .arg("check")
                .arg(&path)
                .output()
                .unwrap()
                .status;
            assert!(status.success(), "the benchmark's file checks");
            start.elapsed()
        })
        .collect();
    let check_cpu = (cpu_seconds("self", true) - children_before) / 20.0;
    checks.sort();
    let source = Source::new("bench.py", text.clone());
    let mut in_process: Vec<Duration> = (0..20)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(check_source(&source, Options::new()));
            start.elapsed()
        })
        .collect();
    in_process.sort();

    let mut child = Command::new(binary)
        .arg("server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Server {
        input: child.stdin.take().unwrap(),
        output: BufReader::new(child.stdout.take().unwrap()),
        child,
    };
    server.send(
        Request::new(
            RequestId::from(1),
            "initialize".to_owned(),
            json!({"capabilities": {}}),
        )
        .into(),
    );
    while !matches!(
        Message::read(&mut server.output).unwrap(),
        Some(Message::Response(_))
    ) {}
    server.notify("initialized", json!({}));
    let uri = "file:///bench.py";
    let document = json!({"uri": uri, "languageId": "python", "version": 0, "text": text});
    server.notify("textDocument/didOpen", json!({"textDocument": document}));
    server.diagnostics_of(0);

    // At lines spread over the file: open a line, type a statement into it a character at
    // a time, delete it the same way, and close the line: 22 edits a round.
    const TYPED: &str = "    q = 42";
    let mut updates = Vec::new();
    let mut version = 0;
    let mut invalid = 0;
    let position = |line: usize, character: usize| json!({"line": line, "character": character});
    'session: for round in 0.. {
        let line = 8 + (round * 43) % (lines - 10);
        let mut edits = vec![(position(line, 0), position(line, 0), "\n".to_owned())];
        for (at, c) in TYPED.char_indices() {
            edits.push((position(line, at), position(line, at), c.to_string()));
        }
        for at in (0..TYPED.len()).rev() {
            edits.push((position(line, at), position(line, at + 1), String::new()));
        }
        edits.push((position(line, 0), position(line + 1, 0), String::new()));
        for (start, end, new) in edits {
            version += 1;
            let began = Instant::now();
            server.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version},
                       "contentChanges": [{"range": {"start": start, "end": end}, "text": new}]}),
            );
            if server.diagnostics_of(version) > 0 {
                invalid += 1;
            }
            updates.push(began.elapsed());
            if updates.len() == 1000 {
                break 'session;
            }
        }
    }
    // The server's own CPU time, over the opening and the 1,000 updates.
    let server_cpu =
        cpu_seconds(&server.child.id().to_string(), false) / (updates.len() + 1) as f64;
    server.send(
        Request::new(
            RequestId::from(2),
            "shutdown".to_owned(),
            serde_json::Value::Null,
        )
        .into(),
    );
    while !matches!(
        Message::read(&mut server.output).unwrap(),
        Some(Message::Response(_))
    ) {}
    server.notify("exit", serde_json::Value::Null);
    assert!(server.child.wait().unwrap().success());
    std::fs::remove_file(&path).ok();

    updates.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |sorted: &[Duration], q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    println!(
        "file: {lines} lines, 150 labels; {} edits, {invalid} of them leaving an error",
        updates.len()
    );
    println!(
        "diagnostics update: median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(at(&updates, 0.5)),
        ms(at(&updates, 0.99)),
        ms(updates[updates.len() - 1])
    );
    println!(
        "`gotopy check FILE` (process): min {:.2} ms, median {:.2} ms; check_source in process: median {:.2} ms",
        ms(checks[0]),
        ms(at(&checks, 0.5)),
        ms(at(&in_process, 0.5))
    );
    println!(
        "CPU per update (server): {:.2} ms; CPU per `gotopy check` process: {:.2} ms",
        server_cpu * 1e3,
        check_cpu * 1e3
    );
    let over = |limit: Duration| updates.iter().filter(|&&update| update > limit).count();
    println!(
        "updates over the fastest `gotopy check`: {}; over its median: {}; slowest update / median check: {:.2}",
        over(checks[0]),
        over(at(&checks, 0.5)),
        updates[updates.len() - 1].as_secs_f64() / at(&checks, 0.5).as_secs_f64()
    );
}

/// User and system CPU seconds of process `pid` (`self` for this one) from
/// `/proc/PID/stat`: its own (`utime`, `stime`), or with `children` those of its children it
/// has waited for (`cutime`, `cstime`), in clock ticks of `getconf CLK_TCK`.
fn cpu_seconds(pid: &str, children: bool) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (which is in parentheses and may hold spaces),
    // from the third, `state`: `utime` is the 14th.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let first = if children { 16 } else { 14 } - 3;
    let ticks: f64 = fields[first..first + 2]
        .iter()
        .map(|field| field.parse::<f64>().unwrap())
        .sum();
    let tck = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .unwrap()
        .stdout;
    ticks
        / String::from_utf8(tck)
            .unwrap()
            .trim()
            .parse::<f64>()
            .unwrap()
}
