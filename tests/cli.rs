//! CLI tests: exit status, standard output and standard error of `gotopy`, as snapshots.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::path::Path;
use std::process::{Command, Output};

// `gotopy server`, over its standard input and output.
#[path = "cli/server.rs"]
mod server;

use common::{Scratch, output_with_stdin};
use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

/// `gotopy` run from the repository root, colour off.
fn gotopy() -> Command {
    let mut command = Command::new(get_cargo_bin("gotopy"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    command
}

const EXAMPLE: &str = "\
from goto import goto, label

@goto
def f(n):
    label .top
    n -= 1
    if n:
        goto .top
    goto .bottom
    return n
";

#[test]
fn clean_file_exits_zero() {
    assert_cmd_snapshot!(gotopy().args(["check", "examples/countdown.py"]));
}

#[test]
fn errors_exit_one_with_rendered_diagnostics() {
    assert_cmd_snapshot!(gotopy().args(["check", "-"]).pass_stdin(EXAMPLE));
}

#[test]
fn json_format_lists_every_diagnostic() {
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "--format", "json", "-"])
            .pass_stdin(EXAMPLE)
    );
}

#[test]
fn json_format_is_an_empty_array_for_clean_input() {
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "--format", "json", "-"])
            .pass_stdin("print('hello')\n")
    );
}

#[test]
fn github_format_writes_one_workflow_command_per_diagnostic() {
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "--format", "github", "-"])
            .pass_stdin(EXAMPLE)
    );
}

#[test]
fn syntax_error_exits_one_with_its_location() {
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "-"])
            .pass_stdin("def f(:\n    pass\n")
    );
}

#[test]
fn module_markers_warn_without_all_scopes_and_are_checked_with_it() {
    let source = "label .a\ngoto .b\n";
    assert_cmd_snapshot!(gotopy().args(["check", "-"]).pass_stdin(source));
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "--all-scopes", "-"])
            .pass_stdin(source)
    );
}

#[test]
fn missing_file_exits_two_and_names_it() {
    assert_cmd_snapshot!(gotopy().args(["check", "no/such/file.py"]));
}

#[test]
fn undecodable_bytes_exit_two_and_say_where() {
    let dir = Scratch::dir("cli-undecodable");
    std::fs::write(dir.join("latin1.py"), b"name = 'caf\xe9'\n").unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "latin1.py"]));
}

#[test]
fn empty_file_is_valid_python() {
    let dir = Scratch::dir("cli-empty");
    std::fs::write(dir.join("empty.py"), b"").unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "empty.py"]));
}

#[test]
fn unreadable_input_wins_over_errors_and_other_files_are_still_checked() {
    assert_cmd_snapshot!(
        gotopy()
            .args(["check", "missing.py", "-"])
            .pass_stdin(EXAMPLE)
    );
}

#[test]
fn directories_are_searched_recursively_for_python_files() {
    let dir = Scratch::dir("cli-tree");
    std::fs::create_dir_all(dir.join("pkg/sub")).unwrap();
    std::fs::write(dir.join("pkg/a.py"), "@goto\ndef f():\n    goto .x\n").unwrap();
    std::fs::write(dir.join("pkg/sub/b.py"), "x = 1\n").unwrap();
    std::fs::write(dir.join("pkg/sub/notes.txt"), "goto .x\n").unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "pkg"]));
}

#[test]
fn directory_without_python_files_is_bad_input() {
    let dir = Scratch::dir("cli-nopy");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "docs"]));
}

#[test]
fn usage_errors_exit_two() {
    assert_cmd_snapshot!(gotopy().args(["check"]));
    assert_cmd_snapshot!(gotopy().args(["check", "--format", "xml", "a.py"]));
}

/// `--format dot` draws one function: blocks, jump and fall-through edges, handler edges.
#[test]
fn dis_dot_draws_the_control_flow_of_one_function() {
    assert_cmd_snapshot!(gotopy().args([
        "dis",
        "fixtures/ok/goto_out_of_try_finally.py",
        "--format",
        "dot",
        "--function",
        "finally_return_wins",
    ]));
}

#[test]
fn dis_dot_needs_exactly_one_function() {
    assert_cmd_snapshot!(gotopy().args(["dis", "examples/countdown.py", "--format", "dot"]));
    let dir = Scratch::dir("cli-dot");
    let path = dir.join("two.py");
    std::fs::write(
        &path,
        "class A:\n    def run(self): pass\nclass B:\n    def run(self): pass\n",
    )
    .unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args([
        "dis",
        "two.py",
        "--format",
        "dot",
        "--function",
        "run"
    ]));
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args([
        "dis",
        "two.py",
        "--format",
        "dot",
        "--function",
        "B.run"
    ]));
}

/// Runs `file` in `dir` with `python3` and with `gotopy run`, both printing UTF-8.
fn python_and_gotopy(dir: &Path, file: &str) -> (Output, Output) {
    let python = Command::new("python3")
        .current_dir(dir)
        .env("PYTHONIOENCODING", "utf-8")
        .arg(file)
        .output()
        .expect("python3 runs");
    let gotopy = gotopy()
        .current_dir(dir)
        .env("PYTHONIOENCODING", "utf-8")
        .args(["run", file])
        .output()
        .expect("gotopy runs");
    (python, gotopy)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit status, stdout and stderr, to compare two runs.
fn outcome(output: &Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// A module that asks for every scope itself (`# gotopy: all-scopes` among its first lines,
/// docs/language.md section 2) gets them from every command, as from the import hook and
/// `gotopy.compile`: its module body runs rewritten and prints what the same loop written
/// with `while` prints under python3, `check` has nothing to warn about, and the
/// translation runs under python3 too.
#[test]
fn a_module_that_asks_for_all_scopes_gets_them_from_every_command() {
    let dir = Scratch::dir("cli-asks");
    let asks = "\"\"\"A loop in the module body.\"\"\"\n# gotopy: all-scopes\n\
                from goto import goto, label\n\nn = 3\nlabel .top\nprint(n)\nn -= 1\n\
                if n:\n    goto .top\n";
    let plain = "n = 3\nwhile True:\n    print(n)\n    n -= 1\n    if not n:\n        break\n";
    std::fs::write(dir.join("asks.py"), asks).unwrap();
    std::fs::write(dir.join("plain.py"), plain).unwrap();
    let (python, _) = python_and_gotopy(&dir, "plain.py");
    assert_eq!(text(&python.stdout), "3\n2\n1\n");
    let run = gotopy()
        .current_dir(&dir)
        .args(["run", "asks.py"])
        .output()
        .unwrap();
    assert_eq!(outcome(&run), outcome(&python));
    let check = gotopy()
        .current_dir(&dir)
        .args(["check", "asks.py"])
        .output()
        .unwrap();
    let report = text(&check.stdout) + &text(&check.stderr);
    assert_eq!(check.status.code(), Some(0), "{report}");
    assert!(report.contains("0 errors, 0 warnings"), "{report}");
    let translated = gotopy()
        .current_dir(&dir)
        .args(["translate", "--out-dir", "out", "asks.py"])
        .output()
        .unwrap();
    assert_eq!(
        translated.status.code(),
        Some(0),
        "{}",
        text(&translated.stderr)
    );
    let python_translated = Command::new("python3")
        .current_dir(&dir)
        .arg("out/asks.py")
        .output()
        .unwrap();
    assert_eq!(outcome(&python_translated), outcome(&python));
}

/// A program python3 runs too: its labels never execute there. gotopy finds one unused
/// label (G101) and markers in a scope it does not rewrite (G102).
const LINTED: &str = "\
def goto(function):
    return function

@goto
def f():
    return 'result'
    label .unused

def not_rewritten():
    label .ordinary

print(f())
";

/// `run` prints errors only, as `python` does not lint: same output and status as python3.
/// `check` still warns, and so does `compile`, a build step.
#[test]
fn run_prints_no_warnings_as_python_does_not_lint() {
    let dir = Scratch::dir("cli-lint");
    std::fs::write(dir.join("linted.py"), LINTED).unwrap();
    let (python, gotopy_run) = python_and_gotopy(&dir, "linted.py");
    assert_eq!(text(&python.stdout), "result\n");
    assert_eq!(outcome(&gotopy_run), outcome(&python));
    assert_cmd_snapshot!(
        "check_still_warns",
        gotopy().current_dir(&dir).args(["check", "linted.py"])
    );
    assert_cmd_snapshot!(
        "compile_still_warns",
        gotopy()
            .current_dir(&dir)
            .args(["compile", "linted.py", "-o", "linted.rpyc"])
    );
}

/// A file with errors does not run, and `run` shows its errors without its warnings.
#[test]
fn run_shows_errors_without_warnings() {
    let dir = Scratch::dir("cli-run-errors");
    let broken = EXAMPLE.replace("    return n\n", "    return n\n    label .unused\n");
    std::fs::write(dir.join("broken.py"), broken).unwrap();
    let check = gotopy()
        .current_dir(&dir)
        .args(["check", "broken.py"])
        .output()
        .unwrap();
    assert!(text(&check.stdout).contains("warning[G101]"));
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["run", "broken.py"]));
}

/// Files in declared encodings (PEP 263), with a byte order mark, and with the declaration
/// on line 2 after a shebang: `gotopy run` prints what `python3` prints.
#[test]
fn declared_encodings_run_as_under_python() {
    let dir = Scratch::dir("cli-encodings");
    let files: &[(&str, &[u8])] = &[
        (
            "latin1.py",
            b"# -*- coding: latin-1 -*-\ns = 'caf\xe9 \xa9 \xff \x80\x9f'\n\
              print(s, len(s), s.encode('utf-8'), [hex(ord(c)) for c in s])\n",
        ),
        (
            "iso.py",
            b"# coding=ISO-8859-1\nprint([hex(ord(c)) for c in '\x80\x85\x9f\xa4'])\n",
        ),
        (
            "cp1252.py",
            b"# coding: cp1252\nprint('\x80 \x84quoted\x93 \x85', [hex(ord(c)) for c in '\x80\x85'])\n",
        ),
        (
            "shebang.py",
            b"#!/usr/bin/env python3\n# vim: set fileencoding=latin-1 :\nprint('\xe9t\xe9')\n",
        ),
        (
            "eucjp.py",
            b"# coding: euc-jp\nprint('\xc6\xfc\xcb\xdc\xb8\xec \xa1\xc1 \xa1\xc2 \xa1\xdd \xa1\xf1')\n",
        ),
        (
            "sjis.py",
            b"# coding: shift_jis\nprint('\x93\xfa\x96\x7b\x8c\xea \x81\x60 \x81\x61 \x81\x7c \x81\x91')\n",
        ),
        ("koi8.py", b"# coding: koi8-r\nprint('\xf0\xd2\xc9\xd7\xc5\xd4')\n"),
        (
            "bom.py",
            b"\xef\xbb\xbf# coding: utf-8\nprint('\xc3\xa9', len('\xc3\xa9'))\n",
        ),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
        let (python, gotopy_run) = python_and_gotopy(&dir, name);
        assert!(python.status.success(), "python3 runs {name}");
        assert_eq!(outcome(&gotopy_run), outcome(&python), "{name}");
    }
}

/// Diagnostics of a latin-1 file point into the decoded text: columns count characters.
#[test]
fn diagnostics_of_a_latin1_file_count_decoded_characters() {
    let dir = Scratch::dir("cli-latin1-check");
    std::fs::write(
        dir.join("caf\u{e9}.py"),
        b"# coding: latin-1\n@goto\ndef f():\n    s = '\xe9\xe9\xe9'; goto .l\xe0\n",
    )
    .unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "caf\u{e9}.py"]));
}

/// Encoding problems CPython refuses a file for are bad input (exit 2) with a message that
/// says where; python3 refuses each of these files too.
#[test]
fn encoding_problems_exit_two_where_python_refuses_the_file() {
    let dir = Scratch::dir("cli-encoding-problems");
    let files: &[(&str, &[u8])] = &[
        ("unknown", b"# coding: klingon\nx = 1\n"),
        ("utf16", b"# coding: utf-16\nx = 1\n"),
        ("bom_and_latin1", b"\xef\xbb\xbf# coding: latin-1\nx = 1\n"),
        // CPython compares the name with `utf-8` after only lowercasing and `_` to `-`.
        (
            "bom_and_utf8_spelled_utf8",
            b"\xef\xbb\xbf# coding: utf8\nx = 1\n",
        ),
        (
            "cp1252_undefined_byte",
            b"# coding: cp1252\nx = '\xe9\x81'\n",
        ),
        ("ascii_declared", b"# coding: ascii\nx = '\xe9'\n"),
        ("undeclared_latin1", b"x = 'caf\xe9'\n"),
        ("declared_on_line_3", b"\n\n# coding: latin-1\nx = '\xe9'\n"),
        (
            "declared_after_code",
            b"x = 1\n# coding: latin-1\nx = '\xe9'\n",
        ),
        ("euc_jp_truncated", b"# coding: euc_jp\nx = '\xc6'\n"),
    ];
    for (name, bytes) in files {
        let file = format!("{name}.py");
        std::fs::write(dir.join(&file), bytes).unwrap();
        let python = Command::new("python3")
            .current_dir(&dir)
            .arg(&file)
            .output()
            .unwrap();
        assert!(!python.status.success(), "python3 refuses {file}");
        assert_cmd_snapshot!(
            format!("encoding_problem_{name}"),
            gotopy().current_dir(&dir).args(["check", &file])
        );
    }
    let run = gotopy()
        .current_dir(&dir)
        .args(["run", "unknown.py"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("declares encoding `klingon`"));
}

/// `raise SystemExit(code)` exits with the status python3 exits with: the code modulo 256
/// for integers that fit in 64 bits, 255 beyond, 1 with a message for other objects.
#[test]
fn system_exit_statuses_are_those_of_python() {
    let dir = Scratch::dir("cli-exit");
    let codes = [
        "0",
        "1",
        "255",
        "256",
        "257",
        "-1",
        "-256",
        "2**31",
        "2**32 + 5",
        "2**40 + 7",
        "2**63 - 1",
        "-2**63",
        "2**63",
        "2**70",
        "True",
        "None",
        "'message'",
        "(1, 2)",
    ];
    for code in codes {
        std::fs::write(dir.join("exit.py"), format!("raise SystemExit({code})\n")).unwrap();
        let (python, gotopy_run) = python_and_gotopy(&dir, "exit.py");
        assert_eq!(outcome(&gotopy_run), outcome(&python), "SystemExit({code})");
    }
}

/// Standard streams are UTF-8 with `surrogateescape`, as CPython's are under a UTF-8 or C
/// locale: non-ASCII text prints as python3 prints it, and so do lone surrogates.
#[test]
fn non_ascii_output_prints_as_under_python() {
    let dir = Scratch::dir("cli-utf8-output");
    std::fs::write(
        dir.join("hello.py"),
        "import sys\nprint('h\u{e9}llo \u{65e5}\u{672c} \u{1F600}')\nsys.stdout.write('\\udce9\\n')\n",
    )
    .unwrap();
    for encoding in [None, Some("latin-1:replace")] {
        let mut python = Command::new("python3");
        let mut run = gotopy();
        python.current_dir(&dir).env_remove("PYTHONIOENCODING");
        run.current_dir(&dir).env_remove("PYTHONIOENCODING");
        if let Some(encoding) = encoding {
            python.env("PYTHONIOENCODING", encoding);
            run.env("PYTHONIOENCODING", encoding);
        }
        let python = python.arg("hello.py").output().unwrap();
        let run = run.args(["run", "hello.py"]).output().unwrap();
        assert_eq!(run.stdout, python.stdout, "{encoding:?}");
        assert_eq!(outcome(&run), outcome(&python), "{encoding:?}");
    }
}

/// Output that cannot be written is an error (exit 2, a message on stderr), never a
/// silently missing or empty report.
#[test]
fn a_report_that_cannot_be_written_exits_two() {
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        eprintln!("skipped: this system has no /dev/full");
        return;
    };
    let runs = [
        vec!["check", "--format", "json", "examples/countdown.py"],
        vec!["check", "--format", "text", "examples/countdown.py"],
        vec!["dis", "examples/countdown.py"],
    ];
    for args in runs {
        let output = gotopy()
            .args(&args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&output.stderr),
            "gotopy: error: cannot write to standard output: no space left on device\n",
            "{args:?}"
        );
    }
}

/// A program with one error, whose diagnostic is coloured or not.
const BROKEN: &str = "@goto\ndef f():\n    goto .nowhere\n";

/// Environment variables a command runs with.
type Environment<'a> = &'a [(&'a str, &'a str)];

/// Where a subcommand prints its diagnostics.
#[derive(Clone, Copy, Debug)]
enum Stream {
    Stdout,
    Stderr,
}

/// `--color` is accepted by every subcommand, after it or before it (a global option).
/// `always` colours and `never` does not, whatever the environment says; `auto`, the
/// default, does not colour a pipe, and follows `NO_COLOR` and `CLICOLOR_FORCE` (which wins
/// over the stream not being a terminal, and loses to `NO_COLOR`).
#[test]
fn color_is_accepted_by_every_subcommand_and_follows_the_environment() {
    let dir = Scratch::dir("cli-color");
    std::fs::write(dir.join("broken.py"), BROKEN).unwrap();
    let subcommands: [(&[&str], Stream); 4] = [
        (&["check", "broken.py"], Stream::Stdout),
        (
            &["compile", "broken.py", "-o", "broken.rpyc"],
            Stream::Stderr,
        ),
        (&["dis", "broken.py"], Stream::Stderr),
        (&["run", "broken.py"], Stream::Stderr),
    ];
    // The colour arguments, the environment, and whether diagnostics are coloured.
    let cases: [(&[&str], Environment, bool); 8] = [
        (&["--color", "always"], &[], true),
        (&["--color=always"], &[("NO_COLOR", "1")], true),
        (&["--color", "never"], &[("CLICOLOR_FORCE", "1")], false),
        (&["--color", "never"], &[], false),
        (&[], &[], false),
        (&["--color", "auto"], &[("NO_COLOR", "1")], false),
        (&[], &[("CLICOLOR_FORCE", "1")], true),
        (&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false),
    ];
    for (subcommand, stream) in subcommands {
        for (color, environment, coloured) in cases {
            for global in [false, true] {
                let mut command = gotopy();
                command
                    .current_dir(&dir)
                    .env_remove("NO_COLOR")
                    .env_remove("CLICOLOR_FORCE")
                    .env_remove("CLICOLOR")
                    .envs(environment.iter().copied());
                if global {
                    command.args(color).args(subcommand);
                } else {
                    command
                        .arg(subcommand[0])
                        .args(color)
                        .args(&subcommand[1..]);
                }
                let output = command.output().unwrap();
                let shown = text(match stream {
                    Stream::Stdout => &output.stdout,
                    Stream::Stderr => &output.stderr,
                });
                let case = format!("{subcommand:?} {color:?} {environment:?} global: {global}");
                assert_eq!(output.status.code(), Some(1), "{case}");
                assert!(shown.contains("G002"), "{case}: {shown}");
                assert_eq!(shown.contains("\x1b["), coloured, "{case}: {shown}");
            }
        }
    }
}

/// `--help` of the commands that take `-`, and of `run` with its `-c` and `-m`.
#[test]
fn help_says_where_dash_and_run_forms_are_accepted() {
    assert_cmd_snapshot!("run_help", gotopy().args(["run", "--help"]));
    assert_cmd_snapshot!("compile_help", gotopy().args(["compile", "--help"]));
}

/// `compile -` reads standard input; `-o -` writes the code object to standard output, the
/// same bytes `-o FILE` writes. Standard input has no name to put under `--out-dir`.
#[test]
fn compile_reads_and_writes_standard_streams() {
    let dir = Scratch::dir("cli-compile-dash");
    let clean = EXAMPLE.replace("    goto .bottom\n", "");
    let to_stdout = output_with_stdin(
        gotopy().current_dir(&dir).args(["compile", "-", "-o", "-"]),
        clean.as_bytes(),
    );
    assert_eq!(
        to_stdout.status.code(),
        Some(0),
        "{}",
        text(&to_stdout.stderr)
    );
    let to_file = output_with_stdin(
        gotopy()
            .current_dir(&dir)
            .args(["compile", "-", "-o", "countdown.rpyc"]),
        clean.as_bytes(),
    );
    assert_eq!(to_file.status.code(), Some(0), "{}", text(&to_file.stderr));
    let written = std::fs::read(dir.join("countdown.rpyc")).unwrap();
    assert!(!written.is_empty());
    assert_eq!(to_stdout.stdout, written);
    assert_cmd_snapshot!(
        "compile_refuses_standard_input_with_errors",
        gotopy()
            .current_dir(&dir)
            .args(["compile", "-", "-o", "-"])
            .pass_stdin(EXAMPLE)
    );
    assert_cmd_snapshot!(
        "compile_standard_input_needs_a_name",
        gotopy()
            .current_dir(&dir)
            .args(["compile", "-", "--out-dir", "out"])
            .pass_stdin(EXAMPLE)
    );
}

/// `dis -` disassembles standard input as `dis FILE` does the same text.
#[test]
fn dis_reads_standard_input() {
    let file = gotopy()
        .args(["dis", "examples/countdown.py"])
        .output()
        .unwrap();
    let source =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/countdown.py")).unwrap();
    let stdin = output_with_stdin(gotopy().args(["dis", "-"]), &source);
    let named = text(&stdin.stdout).replace("\"<stdin>\"", "\"examples/countdown.py\"");
    assert_eq!(named, text(&file.stdout));
    assert_eq!(
        (stdin.status.code(), text(&stdin.stderr)),
        (Some(0), String::new())
    );
    assert!(named.contains("Disassembly of <module>"));
}

/// `run -c 'print(1)'`.
#[test]
fn run_dash_c_prints() {
    assert_cmd_snapshot!(gotopy().args(["run", "-c", "print(1)"]));
}

/// A program that shows what `python` sets up for it: `sys.argv`, `sys.path[0]` and the
/// module's own names.
const SHOW: &str = "\
import sys
print(sys.argv)
print(repr(sys.path[0]))
print(__name__, globals().get('__file__'), __package__, __spec__ and __spec__.name)
";

/// `sys.argv`, `sys.path[0]`, `__file__`, `__package__` and `__spec__` under `run FILE`,
/// `run -`, `run -c`, `run -m pkg.show` and `run -m pkg` are what `python3` sets for the same
/// command line; everything after the program, options included, is the program's.
#[test]
fn argv_and_path_of_each_form_are_those_of_python() {
    let dir = Scratch::dir("cli-argv");
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(dir.join("pkg/__init__.py"), "").unwrap();
    std::fs::write(dir.join("pkg/show.py"), SHOW).unwrap();
    std::fs::write(dir.join("pkg/__main__.py"), SHOW).unwrap();
    std::fs::write(dir.join("show.py"), SHOW).unwrap();
    let forms: [&[&str]; 5] = [
        &["show.py"],
        &["-"],
        &["-c", SHOW],
        &["-m", "pkg.show"],
        &["-m", "pkg"],
    ];
    for form in forms {
        let args = ["a", "-b", "--color", "never", "--help"];
        let python = output_with_stdin(
            Command::new("python3")
                .current_dir(&dir)
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .args(form)
                .args(args),
            SHOW.as_bytes(),
        );
        let ours = output_with_stdin(
            gotopy().current_dir(&dir).arg("run").args(form).args(args),
            SHOW.as_bytes(),
        );
        assert!(
            python.status.success(),
            "{form:?}: {}",
            text(&python.stderr)
        );
        assert_eq!(outcome(&ours), outcome(&python), "{form:?}");
    }
}

/// A module `-m` cannot run is bad input (exit status 2), as a missing file is.
#[test]
fn run_dash_m_names_modules_it_cannot_run() {
    let dir = Scratch::dir("cli-no-module");
    std::fs::create_dir_all(dir.join("namespace")).unwrap();
    for module in ["no_such_module", "namespace", ".relative"] {
        assert_cmd_snapshot!(
            format!("run_dash_m_cannot_run_{}", module.trim_start_matches('.')),
            gotopy().current_dir(&dir).args(["run", "-m", module])
        );
    }
}

/// `run` takes a code object `compile` wrote (`.rpyc`), told by its content: its first
/// byte is a NUL, which no Python source holds. A goto program (`tests/programs/`) compiled
/// then run, from a file and from standard input, prints what python3 prints for the same
/// program written without goto, and a program sees `sys.argv` and `__file__` as python3
/// gives them for a `.pyc` file; a file that starts like one but is cut short is bad input
/// (exit status 2).
#[test]
fn run_runs_the_code_objects_compile_writes() {
    let dir = Scratch::dir("cli-rpyc");
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    for name in ["basic_game.py", "basic_game_plain.py"] {
        std::fs::copy(programs.join(name), dir.join(name)).unwrap();
    }
    let show = "import sys, os\nprint(sys.argv, __file__ == os.path.abspath(sys.argv[0]))\n";
    std::fs::write(dir.join("show.py"), show).unwrap();
    for name in ["basic_game", "show"] {
        let compiled = gotopy()
            .current_dir(&dir)
            .args([
                "compile",
                &format!("{name}.py"),
                "-o",
                &format!("{name}.rpyc"),
            ])
            .output()
            .unwrap();
        assert_eq!(
            compiled.status.code(),
            Some(0),
            "{}",
            text(&compiled.stderr)
        );
    }
    let (python, _) = python_and_gotopy(&dir, "basic_game_plain.py");
    assert!(text(&python.stdout).contains("sticks"));
    let (_, from_file) = python_and_gotopy(&dir, "basic_game.rpyc");
    assert_eq!(outcome(&from_file), outcome(&python));
    let bytes = std::fs::read(dir.join("basic_game.rpyc")).unwrap();
    let from_stdin = output_with_stdin(gotopy().current_dir(&dir).args(["run", "-"]), &bytes);
    assert_eq!(outcome(&from_stdin), outcome(&python));
    // As `python3 show.pyc` does: its path as given, and `__file__` absolute.
    let shown = gotopy()
        .current_dir(&dir)
        .args(["run", "show.rpyc", "a", "-b"])
        .output()
        .unwrap();
    let python = Command::new("python3")
        .current_dir(&dir)
        .args(["show.py", "a", "-b"])
        .output()
        .unwrap();
    assert_eq!(
        text(&shown.stdout),
        text(&python.stdout).replace("show.py", "show.rpyc")
    );
    std::fs::write(dir.join("cut.rpyc"), &bytes[..bytes.len() / 2]).unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["run", "cut.rpyc"]));
}
