//! CLI tests: exit status, standard output and standard error of `gotopy`, as snapshots.

use std::path::PathBuf;
use std::process::Command;

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

/// `gotopy` run from the repository root, colour off.
fn gotopy() -> Command {
    let mut command = Command::new(get_cargo_bin("gotopy"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    command
}

/// A fresh scratch directory for inputs the repository cannot hold as files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gotopy-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    let dir = scratch("undecodable");
    std::fs::write(dir.join("latin1.py"), b"name = 'caf\xe9'\n").unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "latin1.py"]));
}

#[test]
fn empty_file_is_valid_python() {
    let dir = scratch("empty");
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
    let dir = scratch("tree");
    std::fs::create_dir_all(dir.join("pkg/sub")).unwrap();
    std::fs::write(dir.join("pkg/a.py"), "@goto\ndef f():\n    goto .x\n").unwrap();
    std::fs::write(dir.join("pkg/sub/b.py"), "x = 1\n").unwrap();
    std::fs::write(dir.join("pkg/sub/notes.txt"), "goto .x\n").unwrap();
    assert_cmd_snapshot!(gotopy().current_dir(&dir).args(["check", "pkg"]));
}

#[test]
fn directory_without_python_files_is_bad_input() {
    let dir = scratch("nopy");
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
    let dir = scratch("dot");
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
