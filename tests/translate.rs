//! `gotopy translate` (issue 26): translated programs run under plain Pythons, gotopy nowhere
//! importable (`-I -S`), and must print what the goto program prints. Oracles: `gotopy run`
//! for the fixtures (whose own assertions run too), the differential generator's reference
//! interpreter for random programs (`tests/differential/programs.py`).

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The plain Pythons a translation runs on: CPython 3.11 to 3.15, PyPy 3.11 and MicroPython
/// (`tools/pythons`), and CPython 3.8, 3.9 and 3.10 where pyenv has them; only those that
/// `GOTOPY_TRANSLATE_PYTHONS` names when it is set (`3.11,3.13,pypy3.11`).
fn interpreters() -> Vec<(String, PathBuf)> {
    let mut all = every_interpreter();
    if let Ok(names) = std::env::var("GOTOPY_TRANSLATE_PYTHONS") {
        let names: Vec<&str> = names.split(',').map(str::trim).collect();
        all.retain(|(version, _)| names.contains(&version.as_str()));
        assert!(
            !all.is_empty(),
            "GOTOPY_TRANSLATE_PYTHONS names none of them"
        );
    }
    all
}

fn every_interpreter() -> Vec<(String, PathBuf)> {
    let mut all = cpython::pythons();
    all.push(("pypy3.11".to_owned(), cpython::pypy()));
    all.push(("micropython".to_owned(), cpython::micropython()));
    let pyenv = std::env::var("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".pyenv"));
    for old in ["3.8", "3.9", "3.10"] {
        let found = std::fs::read_dir(pyenv.join("versions"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .find(|path| {
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{old}.")))
            });
        if let Some(dir) = found {
            all.push((old.to_owned(), dir.join(format!("bin/python{old}"))));
        }
    }
    all
}

fn minor(version: &str) -> u32 {
    version
        .split('.')
        .nth(1)
        .and_then(|minor| minor.parse().ok())
        .unwrap_or(0)
}

fn translate(input: &Path, output: &Path, all_scopes: bool) -> Output {
    translate_as(input, output, all_scopes, false)
}

/// `gotopy translate`, with `--migrate` when `migrate`.
fn translate_as(input: &Path, output: &Path, all_scopes: bool, migrate: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gotopy"));
    command.arg("translate").arg(input).arg("-o").arg(output);
    if all_scopes {
        command.arg("--all-scopes");
    }
    if migrate {
        command.arg("--migrate");
    }
    command.output().unwrap()
}

/// How an interpreter runs a file with nothing of gotopy's: CPython and PyPy isolated
/// (`-I -S`), MicroPython (which has neither option, nor the packages) with a heap that
/// holds 2,000 programs.
fn plain_args(python: &Path) -> &'static [&'static str] {
    if python.ends_with("micropython") {
        &["-X", "heapsize=1024M"]
    } else {
        &["-I", "-S"]
    }
}

fn plain_run(python: &Path, file: &Path) -> Output {
    Command::new(python)
        .args(plain_args(python))
        .arg(file.file_name().unwrap())
        .current_dir(file.parent().unwrap())
        .output()
        .unwrap()
}

/// `path` translated into `dir` (for every scope when it asks so): its text, the output's
/// path, and whether it asks for every scope.
fn translated_into(path: &Path, dir: &Path) -> (String, PathBuf, bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let output = dir.join(path.file_name().unwrap());
    let all_scopes = text.contains("# gotopy: all-scopes");
    assert!(
        translate(path, &output, all_scopes).status.success(),
        "{path:?}"
    );
    (text, output, all_scopes)
}

/// Every `ok` fixture and every program of tests/programs, in order.
fn fixtures_and_programs() -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = ["fixtures/ok", "tests/programs"]
        .into_iter()
        .flat_map(|under| std::fs::read_dir(common::root().join(under)).unwrap())
        .map(|entry| entry.unwrap().path())
        .collect();
    sources.sort();
    sources
}

/// Whether a line of a translation still uses gotopy: imports it or decorates with it.
fn uses_gotopy(line: &str) -> bool {
    let line = line.trim_start();
    [
        "from goto",
        "import gotopy",
        "from gotopy",
        "@goto",
        "@gotopy.",
        "@with_goto",
        "@switch",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

#[test]
fn every_fixture_translated_prints_what_gotopy_run_prints() {
    let dir = common::Scratch::dir("translate");
    let pythons = interpreters();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(common::root().join("fixtures/ok"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let options = common::fixture_options(&text);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = dir.join(&name);
        let translated = translate(&path, &out, options.all_scopes);
        assert!(
            translated.status.success(),
            "{name}: translate failed\n{}",
            String::from_utf8_lossy(&translated.stderr)
        );
        let output = std::fs::read_to_string(&out).unwrap();
        // A program that uses the goto module itself (not only its markers) keeps its
        // import, so it needs gotopy installed: the one fixture that does is run by the
        // CPython package's own tests instead.
        if output
            .lines()
            .any(|line| line.trim_start().starts_with("import goto"))
        {
            assert_eq!(name, "marker_names_imported_or_global.py");
            continue;
        }
        assert!(
            !output.lines().any(uses_gotopy),
            "{name}: the translation still uses gotopy:\n{output}"
        );
        let args: &[&str] = if options.all_scopes {
            &["--all-scopes"]
        } else {
            &[]
        };
        let expected = common::gotopy_run(&path, args);
        // The fixtures use syntax of 3.11 (`except*`, `match`): the older Pythons and
        // MicroPython run the random programs below.
        for (version, python) in pythons.iter().filter(|(version, _)| minor(version) >= 11) {
            let got = plain_run(python, &out);
            compared += 1;
            if got.stdout != expected.stdout || got.status.code() != expected.status.code() {
                failures.push(format!(
                    "{name} on {version}: expected\n{}\ngot\n{}",
                    cpython::shown(&expected),
                    cpython::shown(&got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared > 200, "only {compared} runs compared");
}

/// `translate --migrate` writes the program's new source: for every `ok` fixture, nothing
/// of gotopy is left (no header, no `# gotopy: all-scopes` line, no import or decorator of
/// it, and no blank line at the top), every comment of the program is (also one whose line
/// the translation needs), its statements stand on lines of their own and its definitions
/// keep their spacing as in the source (`tests/translate/layout.py`), and the newest
/// CPython prints what `gotopy run` prints for the goto program.
#[test]
fn a_migration_leaves_nothing_of_gotopy_and_runs_as_the_program_did() {
    let dir = common::Scratch::dir("migrate");
    let (version, python) =
        (cpython::pythons().into_iter().next_back()).expect("tools/pythons gives CPython");
    let mut migrated = 0;
    for entry in std::fs::read_dir(common::root().join("fixtures/ok")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // The one fixture that uses the goto module itself keeps its import (above).
        if name == "marker_names_imported_or_global.py" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let options = common::fixture_options(&text);
        let out = dir.join(&name);
        let translated = translate_as(&path, &out, options.all_scopes, true);
        assert!(
            translated.status.success(),
            "{name}: translate --migrate failed\n{}",
            String::from_utf8_lossy(&translated.stderr)
        );
        let output = std::fs::read_to_string(&out).unwrap();
        let left = (output.lines()).find(|line| {
            uses_gotopy(line)
                || line.contains("Generated by `gotopy translate`")
                || line.trim() == "# gotopy: all-scopes"
        });
        assert_eq!(
            left, None,
            "{name}: gotopy is left in the migration:\n{output}"
        );
        assert!(
            !output.starts_with('\n'),
            "{name}: a blank line on top:\n{output}"
        );
        // The program's own comments: every one that stands on a line of its own.
        let lost = (text.lines().map(str::trim))
            .filter(|line| line.starts_with('#') && *line != "# gotopy: all-scopes")
            .find(|comment| !output.contains(comment));
        assert_eq!(lost, None, "{name}: a comment is lost:\n{output}");
        let layout = Command::new("python3")
            .arg(common::root().join("tests/translate/layout.py"))
            .args([&path, &out])
            .output()
            .unwrap();
        assert!(
            layout.status.success() && layout.stdout.is_empty(),
            "{name}: the migration is laid out otherwise than its source:\n{}\n{output}",
            cpython::shown(&layout)
        );
        let args: &[&str] = if options.all_scopes {
            &["--all-scopes"]
        } else {
            &[]
        };
        let expected = common::gotopy_run(&path, args);
        let got = plain_run(&python, &out);
        assert_eq!(
            (got.status.code(), &got.stdout),
            (expected.status.code(), &expected.stdout),
            "{name} on {version}: the migration runs otherwise than the goto program:\n{}",
            cpython::shown(&got)
        );
        migrated += 1;
    }
    assert!(migrated > 40, "only {migrated} fixtures migrated");
}

/// A comment after a goto (a coverage pragma, a note) stays in the translation, at the end
/// of what the goto becomes: every one of the `ok` fixtures and of `tests/programs`, at
/// least as many times as gotos of the source carry it.
#[test]
fn a_comment_after_a_goto_stays() {
    let dir = common::Scratch::dir("comments");
    let mut kept = 0;
    for folder in ["fixtures/ok", "tests/programs"] {
        for entry in std::fs::read_dir(common::root().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let comments: Vec<&str> = (text.lines())
                .filter(|line| line.trim_start().starts_with("goto "))
                .filter_map(|line| line.find('#').map(|at| &line[at..]))
                .collect();
            if comments.is_empty() {
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let out = dir.join(&name);
            let all_scopes = common::fixture_options(&text).all_scopes;
            assert!(
                translate(&path, &out, all_scopes).status.success(),
                "{name}"
            );
            let output = std::fs::read_to_string(&out).unwrap();
            for &comment in &comments {
                let wanted = comments.iter().filter(|&&other| other == comment).count();
                let found = output.matches(comment).count();
                assert!(
                    found >= wanted,
                    "{name}: `{comment}` after {wanted} gotos of the source, {found} times in:\n{output}"
                );
                kept += 1;
            }
        }
    }
    assert!(kept >= 3, "only {kept} comments after gotos");
}

/// A comment after a label stays on the label's line where the register does the jumping
/// (the label's own statement is gone there), in a generated file and in a migration; and
/// the translation still computes what the same function without goto computes
/// (tests/translate/comments.py checks it against its plain twin).
#[test]
fn a_comment_after_a_label_stays_where_the_register_does_the_jumping() {
    let dir = common::Scratch::dir("label-comments");
    let source = common::root().join("tests/translate/comments.py");
    for migrate in [false, true] {
        let output = dir.join(format!("comments_{migrate}.py"));
        let translated = translated_and_ok(&source, &output, migrate);
        assert!(
            translated.contains("_goto_"),
            "no dispatch to test:\n{translated}"
        );
        for comment in ["# even steps", "# odd steps"] {
            assert_eq!(
                translated.matches(comment).count(),
                1,
                "{comment}:\n{translated}"
            );
        }
    }
}

/// `source` translated to `output` (migrated with `migrate`): its text, once it has printed
/// `ok` (its own assertions held) on every CPython.
fn translated_and_ok(source: &Path, output: &Path, migrate: bool) -> String {
    let done = translate_as(source, output, false, migrate);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let translated = std::fs::read_to_string(output).unwrap();
    for (version, python) in cpython::pythons() {
        let ran = plain_run(&python, output);
        assert_eq!(
            (
                ran.status.success(),
                String::from_utf8_lossy(&ran.stdout).as_ref()
            ),
            (true, "ok\n"),
            "CPython {version}: {}\n{translated}",
            String::from_utf8_lossy(&ran.stderr)
        );
    }
    translated
}

/// Programs per generated module: a module of 100,000 programs would take each interpreter
/// minutes to compile, so larger runs go in modules of this many, each with a seed of its
/// own (the given seed plus the module's number).
const PROGRAMS_PER_MODULE: usize = 2000;

#[test]
fn random_programs_translated_match_the_reference_interpreter() {
    let (seed, count) = common::seed_and_size("GOTOPY_TRANSLATE", 1000);
    let pythons = interpreters();
    for (index, start) in (0..count).step_by(PROGRAMS_PER_MODULE).enumerate() {
        let size = PROGRAMS_PER_MODULE.min(count - start);
        translated_programs_agree(seed + index as u64, size, &pythons);
    }
}

/// Generates `count` programs from `seed`, translates them as one module, and runs the
/// translation on every interpreter at once.
fn translated_programs_agree(seed: u64, count: usize, pythons: &[(String, PathBuf)]) {
    let dir = common::generate_programs("translate", seed, count);
    let out = dir.join("translated.py");
    let translated = translate(&dir.join("module.py"), &out, false);
    assert!(
        translated.status.success(),
        "seed {seed}: translate failed\n{}",
        String::from_utf8_lossy(&translated.stderr)
    );
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    assert!(
        expected.lines().count() > count,
        "seed {seed}: too few calls"
    );
    let running: Vec<_> = pythons
        .iter()
        .map(|(version, python)| {
            let child = Command::new(python)
                .args(plain_args(python))
                .arg("translated.py")
                .current_dir(&dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (version, child)
        })
        .collect();
    for (version, child) in running {
        let got = child.wait_with_output().unwrap();
        assert!(
            got.status.success(),
            "seed {seed}, {version}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        let got = String::from_utf8_lossy(&got.stdout);
        let mismatches: Vec<(&str, &str)> = expected
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(3)
            .collect();
        assert!(
            mismatches.is_empty() && expected.lines().count() == got.lines().count(),
            "seed {seed}, {version}: the translation disagrees with the reference: {mismatches:#?}"
        );
    }
}

#[test]
fn a_file_check_rejects_is_not_translated() {
    let path = common::write(
        "translate_rejected.py",
        "from goto import goto\n\n@goto\ndef f():\n    goto .nowhere\n",
    );
    let out = path.with_extension("out.py");
    let output = translate(&path, &out, false);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("G002"));
    assert!(!out.exists());
}

/// PyPy 3.11 (8.0.1) miscompiles a `with` left early more than once (its handler stays on
/// after the first exit): an exception raised after the later exit calls a stale `__exit__`
/// or crashes the interpreter, for plain Python too. A translated goto function leaves
/// every `with` early at most once (docs/translate.md), so this one runs there; the `return`s
/// of an async generator stay bare.
#[test]
fn a_with_left_by_two_returns_runs_on_pypy() {
    let path = common::write(
        "translate_two_returns.py",
        r#"from goto import goto, label


class Manager:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append(f"enter {self.name}")

    def __exit__(self, kind, value, tb):
        self.log.append(f"exit {self.name} {kind.__name__ if kind else None}")


@goto
def twice(log, x):
    try:
        label .again
        x += 1
        if x < 2:
            goto .again
        with Manager(log, "outer"):
            with Manager(log, "inner"):
                if x > 9:
                    return "big"
                return "small"
    finally:
        raise KeyError(x)


@goto
async def numbers(log, n):
    label .top
    with Manager(log, n):
        if n > 3:
            return
        yield n
        n += 1
        if n == 2:
            return
        goto .top


async def main():
    for n in (0, 4):
        log = []
        print([x async for x in numbers(log, n)], log)


for x in (0, 10):
    log = []
    try:
        twice(log, x)
    except KeyError as error:
        print(x, log, error)
import asyncio
asyncio.run(main())
"#,
    );
    let out = path.with_extension("out.py");
    assert!(translate(&path, &out, false).status.success());
    let expected = common::gotopy_run(&path, &[]);
    assert!(expected.status.success(), "{}", cpython::shown(&expected));
    let got = plain_run(&cpython::pypy(), &out);
    assert_eq!(
        (got.status.code(), &got.stdout),
        (Some(0), &expected.stdout),
        "{}",
        cpython::shown(&got)
    );
}

/// Most statements off their source lines that the translation of the `ok` fixtures and of
/// the programs in the old libraries' shapes may have, inside rewritten scopes and after
/// them (outside any): 2026-11-28, 316 of 782 inside and 104 of 447 after, all in the
/// fixtures that leave `with` statements, `finally` bodies and switches, but for four
/// statements of the programs (a dispatch loop's header and its first guard both want the
/// label's line when a statement comes right before it); 2026-11-29, 22 and 27 more, all
/// in the fixture of computed gotos that leave a `with`, a `for` and a handler
/// (`computed_gotos_of_one_place.py`: each computed goto takes four lines); later that
/// day 10 and 5 more, all in the fixture of two nested `with` statements left by gotos
/// (`a_with_that_swallows_an_exception_raised_mid_jump.py`: each statement's loop and
/// post-check take lines); the next day 38 and 44 more, all in the fixture of computed
/// gotos in many frames (`computed_gotos_in_many_frames.py`, four lines each again); later
/// that day 80 and 33 more, all in the fixture of computed gotos that leave loops for any
/// of 69 labels (`computed_gotos_leaving_loops_over_many_labels.py`: each of its 64
/// numbered lines holds a computed goto of its own); then 30 and 31 fewer, the
/// same fixture's numbered lines now running on into each other to one computed goto;
/// 2026-11-30, 89 more inside, all in the fixture of computed gotos that leave an `async
/// for`, a switch body and loops at module level
/// (`computed_gotos_leaving_async_for_switch_and_module_loops.py`: two scopes of 65
/// numbered labels, whose guards nest as a balanced tree); 2026-12-01, 6 more inside, all
/// in the fixture of gotos into code under literal tests
/// (`goto_into_code_under_a_literal_test.py`: each `if` and `while` that a dispatch loop
/// splits gives its label's line to the loop's guard); 2026-12-02, 3 more after, in the
/// two fixtures whose gotos carry a comment (`# pragma: no cover`, kept now at the end of
/// what the goto becomes, which a late statement then cannot join). A change that moves
/// fewer lowers them.
const OFF_INSIDE_AT_MOST: usize = 531;
const OFF_AFTER_AT_MOST: usize = 185;

/// Every statement of the `ok` fixtures and of `tests/programs`, found by Python's `ast` in
/// the source and in the translation (`tests/translate/lines.py`): before the first
/// rewritten scope each is on its line (the header comment takes a line no statement
/// wanted), and so is each one after the rewritten functions of the programs users write.
/// Inside a rewritten scope a dispatch loop, a `with` left early or a computed goto needs
/// lines the source does not free, and the statements after move down until joins or a
/// free line take the shift back (docs/translate.md): no more of them than recorded.
#[test]
fn statements_keep_their_source_lines() {
    let dir = common::Scratch::dir("translate-lines");
    let sources = fixtures_and_programs();
    let (mut checked, mut inside, mut after) = ([0; 3], 0, 0);
    let mut shown = String::new();
    for path in &sources {
        let (_, output, all_scopes) = translated_into(path, &dir);
        let run = Command::new("python3")
            .arg(common::root().join("tests/translate/lines.py"))
            .arg(path)
            .arg(&output)
            .arg(if all_scopes {
                "all-scopes"
            } else {
                "decorated"
            })
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{path:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let counts: Vec<usize> = report
            .lines()
            .find_map(|line| line.strip_prefix("counts "))
            .expect("the counts")
            .split(' ')
            .map(|n| n.parse().unwrap())
            .collect();
        let program = path.starts_with(common::root().join("tests/programs"));
        assert_eq!(counts[1], 0, "{path:?}: before its first rewrite\n{report}");
        assert!(
            !program || counts[5] == 0,
            "{path:?}: after its rewritten functions\n{report}"
        );
        for (sum, index) in checked.iter_mut().zip([0, 2, 4]) {
            *sum += counts[index];
        }
        inside += counts[3];
        after += counts[5];
        for line in report.lines().filter(|line| line.starts_with("off ")) {
            shown.push_str(&format!(
                "{}: {line}\n",
                path.file_name().unwrap().display()
            ));
        }
    }
    // Every fixture starts with its docstring, which the header once pushed to line 2.
    assert!(checked[0] >= 100, "only {checked:?} statements checked");
    assert!(
        inside <= OFF_INSIDE_AT_MOST && after <= OFF_AFTER_AT_MOST,
        "{inside} statements inside rewritten scopes and {after} after them are off their \
         lines, more than {OFF_INSIDE_AT_MOST} and {OFF_AFTER_AT_MOST}:\n{shown}"
    );
    println!("checked {checked:?} (before, inside, after); off: {inside} inside, {after} after");
}

/// A label followed by an `if` whose branches are gotos keeps its register reset before
/// the `if` when a dispatch loop reads the register between them: the label ends its loop
/// (the loop's post-check after it read the label's number as a jump under way), or the
/// `if` starts a loop the label is outside of (its guards skipped the `if`). The expected
/// lists are worked out by hand from the programs; PyPy runs the translations.
#[test]
fn a_label_keeps_its_reset_where_a_dispatch_loop_reads_the_register() {
    let programs = [
        (
            "translate_label_ends_loop.py",
            r#"from goto import goto, label


@goto
def f(xs):
    out = []
    for x in xs:
        if x == 0:
            goto .skip
        if x < 0:
            continue
        out.append(x)
        label .skip
        if x > 100:
            goto .end
        out.append("after")
    label .end
    return out


print(f([1, 0, -1, 2, 200, 3]))
"#,
            "[1, 'after', 'after', 2, 'after', 200]\n",
        ),
        (
            "translate_label_before_loop.py",
            r#"from goto import goto, label


@goto
def f(n):
    out = []
    if n == 0:
        goto .L
    out.append("start")
    if n >= 0:
        out.append("a")
        label .L
        if n == 1:
            goto .M
        out.append("x")
        label .M
        out.append("m")
    return out


print([f(n) for n in range(3)])
"#,
            "[['x', 'm'], ['start', 'a', 'm'], ['start', 'a', 'x', 'm']]\n",
        ),
    ];
    for (name, source, expected) in programs {
        let path = common::write(name, source);
        let out = path.with_extension("out.py");
        assert!(translate(&path, &out, false).status.success());
        let run = plain_run(&cpython::pypy(), &out);
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            expected,
            "{name}: {}",
            cpython::shown(&run)
        );
    }
}

/// A traceback of the translated program names the line of the source: the function that
/// raises is rewritten, its label's line is free for the dispatch loop, and the statement
/// that raises is found in the source text (not from gotopy). Run on CPython 3.9 where pyenv
/// has it, 3.13 and PyPy.
#[test]
fn a_traceback_of_translated_code_names_the_source_line() {
    let source = "\
\"\"\"Parses numbers, starting over after a retry mark.\"\"\"
from goto import with_goto
import sys
import traceback


@with_goto
def parse(items):
    label .again
    for item in items:
        if item == \"retry\":
            items = items[1:]
            goto .again
        int(item)
    return True


try:
    parse([\"retry\", \"1\", \"x\"])
except ValueError:
    print(traceback.extract_tb(sys.exc_info()[2])[-1].lineno)
";
    let expected = source
        .lines()
        .position(|line| line.trim() == "int(item)")
        .unwrap()
        + 1;
    let dir = common::Scratch::dir("translate-tb");
    let input = dir.join("numbers.py");
    std::fs::write(&input, source).unwrap();
    let output = dir.join("translated.py");
    assert!(translate(&input, &output, false).status.success());
    let mut ran = 0;
    for (version, python) in every_interpreter() {
        if !["3.9", "3.13", "pypy3.11"].contains(&version.as_str()) {
            continue;
        }
        let run = plain_run(&python, &output);
        assert!(
            run.status.success(),
            "{version}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&run.stdout).trim(),
            expected.to_string(),
            "{version}"
        );
        ran += 1;
    }
    assert!(ran >= 2, "CPython 3.13 and PyPy at least");
}

/// The programs in the shapes the old goto libraries' users write (`tests/programs/`,
/// written for `from goto import with_goto`) on the routes outside CPython's package:
/// `gotopy run` (RustPython), and `gotopy translate` run by CPython 3.9 where pyenv has it
/// and by PyPy. The oracle: the same program without goto (`NAME_plain.py`) run by
/// `python3`. The package's routes are `python/tests/test_programs.py`.
#[test]
fn the_old_libraries_programs_run_translated_and_on_rustpython() {
    let programs = common::root().join("tests/programs");
    let dir = common::Scratch::dir("translate-programs");
    let pythons: Vec<_> = every_interpreter()
        .into_iter()
        .filter(|(version, _)| version == "3.9" || version == "pypy3.11")
        .collect();
    let mut names: Vec<String> = common::python_files("tests/programs")
        .into_iter()
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with("_plain"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    let text = |output: &Output| String::from_utf8_lossy(&output.stdout).into_owned();
    for name in names {
        let source = programs.join(format!("{name}.py"));
        let plain = plain_run(
            Path::new("python3"),
            &programs.join(format!("{name}_plain.py")),
        );
        assert!(plain.status.success() && !plain.stdout.is_empty(), "{name}");
        let ran = Command::new(env!("CARGO_BIN_EXE_gotopy"))
            .arg("run")
            .arg(&source)
            .output()
            .unwrap();
        assert_eq!(
            text(&ran),
            text(&plain),
            "{name} on gotopy run: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let translated = dir.join(format!("{name}.py"));
        assert!(
            translate(&source, &translated, false).status.success(),
            "{name}"
        );
        for (version, python) in &pythons {
            let run = plain_run(python, &translated);
            assert_eq!(text(&run), text(&plain), "{name} translated, on {version}");
        }
    }
    assert!(pythons.iter().any(|(version, _)| version == "pypy3.11"));
}

/// A translation nests more deeply than its source (a dispatch loop around the statements
/// from a label to its gotos, a loop around each `with` body a jump leaves), and CPython
/// bounds nesting: 20 statically nested blocks (3.8 to 3.12) and 99 levels of indentation.
/// For each kind of compound statement, gotos out of ever more of them nested: the deepest
/// nest that translates runs on every plain Python and does what the program asserts; the
/// next is refused (`G200`, not a bug of gotopy's), and where the translation adds one block
/// or level only, CPython 3.12 refuses that source itself one statement deeper (so the
/// refusal comes no earlier than it must).
#[test]
fn translations_nest_no_deeper_than_cpython_compiles() {
    // Each kind: its header, what ends its body and what follows it, the depths to try, and
    // whether its translation adds one block or level only (a `with` left early gets a loop
    // of its own too).
    type Kind = (&'static str, &'static str, &'static str, &'static str);
    let kinds: [(Kind, std::ops::RangeInclusive<usize>, bool); 8] = [
        (("for", "for _ in range(1):", "", ""), 15..=22, true),
        (("while", "while True:", "break", ""), 15..=22, true),
        (
            ("try body", "try:", "", "finally:\n    pass"),
            15..=22,
            true,
        ),
        (
            ("try-except body", "try:", "", "except E:\n    pass"),
            15..=22,
            true,
        ),
        (
            ("handler", "try:\n    raise E\nexcept E:", "", ""),
            6..=12,
            true,
        ),
        (("with", "with CM():", "", ""), 15..=22, true),
        // Left by the goto and by a `return` each: each `with` gets a loop of its own.
        (
            (
                "with left twice",
                "with CM():",
                "if count > 5:\n    return count",
                "",
            ),
            6..=12,
            false,
        ),
        (("if", "if True:", "", ""), 94..=99, true),
    ];
    let pythons = interpreters();
    // The oracle of where CPython's own limit is, whichever interpreters the run targets.
    let cpython_312 = every_interpreter()
        .into_iter()
        .find(|(version, _)| version == "3.12")
        .expect("CPython 3.12")
        .1;
    common::on_threads(&kinds, |((kind, header, end, after), depths, one_more)| {
        let program = |depth: usize, goto: bool| {
            let mut body = String::from("count += 1\nif count < 3:\n    goto .top\n");
            if !goto {
                body = body.replace("goto .top", "pass");
            }
            for _ in 0..depth {
                let mut wrapped = format!("{header}\n");
                for line in body.lines().chain(end.lines()) {
                    wrapped.push_str(&format!("    {line}\n"));
                }
                for line in after.lines() {
                    wrapped.push_str(&format!("{line}\n"));
                }
                body = wrapped;
            }
            let body: String = body.lines().map(|line| format!("    {line}\n")).collect();
            let (imports, label) = if goto {
                ("from goto import goto, label\n", "    label .top\n")
            } else {
                ("goto = lambda f: f\n", "")
            };
            format!(
                "{imports}\n\nclass E(Exception):\n    pass\n\n\nclass CM:\n    def __enter__(self):\n        \
                 return self\n\n    def __exit__(self, *exc):\n        return False\n\n\n@goto\n\
                 def f():\n    count = 0\n{label}{body}    return count\n\n\nassert f() == 3\nprint(\"ok\")\n"
            )
        };
        let stem = kind.replace([' ', '-'], "_");
        let mut deepest = None;
        for depth in depths.clone() {
            let path = common::write(&format!("nest_{stem}_{depth}.py"), &program(depth, true));
            let out = path.with_extension("out.py");
            let output = translate(&path, &out, false);
            if output.status.success() {
                // The input's scratch directory holds the output too: kept with it.
                deepest = Some((depth, path, out));
                continue;
            }
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{kind} at {depth}: {stderr}");
            assert!(
                stderr.contains("error[G200]"),
                "{kind} at {depth}: {stderr}"
            );
            assert!(
                !stderr.contains("bug in gotopy"),
                "{kind} at {depth}: {stderr}"
            );
            let (last, _scratch, out) =
                deepest.unwrap_or_else(|| panic!("{kind}: none of {depths:?} translates"));
            for (version, python) in &pythons {
                let got = plain_run(python, &out);
                assert_eq!(
                    (
                        got.status.code(),
                        String::from_utf8_lossy(&got.stdout).trim()
                    ),
                    (Some(0), "ok"),
                    "{kind} at {last} on {version}: {}",
                    cpython::shown(&got)
                );
            }
            if *one_more {
                let plain = common::write(
                    &format!("nest_{stem}_{}_plain.py", depth + 1),
                    &program(depth + 1, false),
                );
                let compiled = Command::new(&cpython_312)
                    .args(["-I", "-S", "-m", "py_compile"])
                    .arg(&plain)
                    .output()
                    .unwrap();
                assert!(
                    !compiled.status.success(),
                    "{kind}: refused at {depth}, but CPython 3.12 compiles {} of them",
                    depth + 1
                );
            }
            return;
        }
        panic!("{kind}: every depth of {depths:?} translates");
    });
}

/// A register that only ever holds one label's number is named after the label (the
/// fixture also runs translated, in `every_fixture_translated_prints_what_gotopy_run_prints`),
/// and one that holds several is `_goto_k`.
#[test]
fn a_register_for_one_label_is_named_after_it() {
    let dir = common::Scratch::dir("translate-register");
    let named = |fixture: &str| {
        let path = common::root().join("fixtures/ok").join(fixture);
        std::fs::read_to_string(translated_into(&path, &dir).1).unwrap()
    };
    let one = named("goto_out_of_a_try_that_never_finishes.py");
    assert!(one.contains("_goto_again = 1; break"), "{one}");
    assert!(!one.contains("_goto_k"), "{one}");
    let several = named("goto_into_code_under_a_literal_test.py");
    assert!(several.contains("_goto_k = 2"), "{several}");
}

/// The passes leave alone a restarted loop followed by `continue` (which `while True:` would
/// take for its own), and a label that
/// shares its line with a statement (the exit shape would take the line out), and a `try`
/// whose handlers cannot have what follows as its `else` (a `finally` would run before it, a
/// handler falls through), which is left by `break` instead:
/// tests/translate/shapes_left_alone.py, against its plain twins on every CPython.
#[test]
fn shapes_the_passes_must_not_take_keep_their_register() {
    let dir = common::Scratch::dir("translate-left-alone");
    let source = common::root().join("tests/translate/shapes_left_alone.py");
    let translated = translated_and_ok(&source, &dir.join("shapes_left_alone.py"), true);
    assert!(
        translated.contains("_goto_again = 1; break"),
        "{translated}"
    );
    // Handlers whose `try` cannot take what follows as its `else`: left by `break` instead.
    for name in ["closing", "half_handled"] {
        let function = function_text(&translated, name);
        let left = function.contains("except ValueError:\n            break");
        let ok = left && !function.contains("else:") && !function.contains("_goto_");
        assert!(ok, "{function}");
    }
    assert!(
        translated.contains("if skip:\n                _goto_none = 1; continue"),
        "{translated}"
    );
}

/// The text of function `name` in `translated`, from its name to the next function's `def`.
fn function_text<'t>(translated: &'t str, name: &str) -> &'t str {
    let start = translated.find(&format!("def {name}(")).unwrap();
    let rest = &translated[start + 4..];
    &rest[..rest.find("\ndef ").unwrap_or(rest.len())]
}

/// Gotos out of two loops at once, to the label right after the outer one, in the shapes
/// tests/translate/escapes.py writes (200 functions, each beside a twin written with a
/// flag): translated, none jumps to its label through a register (each is `break`, `else:`
/// and `continue`, or the `return` after the label), and every pair agrees on every CPython
/// and PyPy (the module's assertions). The registers left are those of PyPy's `with`
/// statements left twice (docs/translate.md), which jump to no label.
#[test]
fn gotos_out_of_two_loops_become_break_else_and_continue() {
    let (_, translated) = twins_translated("escapes", 200);
    assert!(!translated.contains("_goto_done"), "{translated}");
    assert!(!translated.contains("_goto_k = 1;"), "{translated}");
}

/// The module `tests/translate/NAME.py` writes with `count` pairs of a goto function and its
/// twin (seed 7), and its translation, which prints "ok" on every CPython and PyPy (each pair
/// agrees).
fn twins_translated(name: &str, count: usize) -> (String, String) {
    let dir = common::Scratch::dir(&format!("translate-{name}"));
    let script = common::root().join(format!("tests/translate/{name}.py"));
    let written = Command::new("python3")
        .arg(&script)
        .args(["7".to_owned(), count.to_string()])
        .output()
        .expect("python3 runs the generator");
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let source = dir.join(format!("{name}_source.py"));
    std::fs::write(&source, &written.stdout).unwrap();
    let output = dir.join(format!("{name}.py"));
    let translated = translated_and_ok(&source, &output, false);
    let ran = plain_run(&cpython::pypy(), &output);
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "ok\n",
        "PyPy: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let source = String::from_utf8_lossy(&written.stdout).into_owned();
    (source, translated)
}

/// The goto functions of a module `tests/translate/twins.py` writes (or of its translation),
/// each from its name to the next function's `def`, their twins left out.
fn goto_functions(module: &str) -> Vec<&str> {
    (module.split("\ndef ").skip(1))
        .filter(|function| !function.contains("_plain("))
        .collect()
}

/// `try` statements whose handlers go past the statements after them to a label, in the
/// shapes tests/translate/handled.py writes (300 generated functions, each beside a twin
/// written with a flag): translated, each the shape takes (label `.done`) is the `try` with
/// those statements its `else:` and no register, each it must not take (label `.kept`: a
/// handler that falls through, a `finally`, a last handler that ends another way) keeps its
/// gotos or leaves a `while True:` by `break`, and every pair agrees on CPython and PyPy (the
/// module's assertions).
#[test]
fn handlers_that_go_past_what_follows_their_try_become_its_else() {
    let (source, translated) = twins_translated("handled", 300);
    let functions = |text: &str, label: &str| {
        (goto_functions(text).iter())
            .filter(|function| function.contains(label))
            .count()
    };
    let (taken, kept) = (
        functions(&source, "label .done"),
        functions(&source, "label .kept"),
    );
    assert!(taken > 150 && kept > 50, "{taken} taken, {kept} kept");
    let pairs = goto_functions(&source)
        .into_iter()
        .zip(goto_functions(&translated))
        .filter(|(goto, _)| goto.contains("label ."));
    for (goto, plain) in pairs {
        // Taken: no register, and no loop to leave (the source has no `while`).
        let register = plain.contains("_goto_");
        let looped = plain.contains("while True:");
        let ok = if goto.contains("label .done") {
            !register && !looped
        } else {
            register || looped
        };
        assert!(ok, "{goto}\ntranslated:\n{plain}");
    }
}

/// State machines made of gotos, in the shapes tests/translate/machines.py writes (300, each
/// beside a twin that dispatches on a state variable in a `while` loop): translated, every
/// pair agrees on CPython and PyPy (the module's assertions); every machine whose flow is
/// reducible (the generator marks the others) keeps no register, only flags set `True` or
/// `False` for jumps no `continue`, `break` or fall reaches; and the machines that add no
/// variable, and those that add flags, are counted here, so that a regression shows.
#[test]
fn state_machines_translate_as_their_dispatching_twins_run() {
    let (source, translated) = twins_translated("machines", 300);
    let machines = goto_functions(&translated);
    assert_eq!(machines.len(), 300);
    let name = |function: &str| function[..function.find('(').unwrap()].to_owned();
    let irreducible: std::collections::HashSet<String> = (source
        .split("# irreducible\n@goto\ndef "))
    .skip(1)
    .map(name)
    .collect();
    assert_eq!(irreducible.len(), 24);
    let flag = |line: &str| {
        line.ends_with("= False")
            || line.contains(" = True")
            || ["if _goto_", "if not _goto_", "if not (_goto_"]
                .iter()
                .any(|start| line.starts_with(start))
    };
    let mut flagged = 0;
    for machine in machines.iter().filter(|m| !irreducible.contains(&name(m))) {
        let added: Vec<&str> = (machine.lines())
            .map(str::trim)
            .filter(|line| line.contains("_goto_"))
            .collect();
        assert!(added.iter().all(|line| flag(line)), "{machine}");
        flagged += usize::from(!added.is_empty());
    }
    let structured = machines.iter().filter(|m| !m.contains("_goto_")).count();
    assert_eq!((structured, flagged), (256, 20), "{translated}");
}

/// Jumps of a reducible flow graph that no `continue`, `break` or fall reaches
/// (tests/translate/flags.py): out of two loops at once, and past a block that two places
/// enter. Each sets one flag named after its label, nothing else is added, and the
/// program's own assertions (each goto function against the same function written without
/// goto) pass on plain CPython.
#[test]
fn jumps_no_loop_reaches_set_a_flag_named_after_their_label() {
    let dir = common::Scratch::dir("translate-flags");
    let source = common::root().join("tests/translate/flags.py");
    let translated = translated_and_ok(&source, &dir.join("flags.py"), false);
    let flags = std::fs::read_to_string(&source).unwrap();
    assert_eq!(added_variables(&flags, &translated), 2, "{translated}");
    for (function, flag, jump) in [
        ("find", "_goto_done", "_goto_done = True; break"),
        ("ship", "_goto_stamp", "_goto_stamp = True  # no box"),
    ] {
        let text = function_text(&translated, function);
        assert!(text.contains(&format!("{flag} = False")), "{translated}");
        assert!(text.contains(jump), "{translated}");
    }
}

/// The state machines of tests/translate/graphs.py, whose gotos the passes leave, written
/// from their flow graphs: no name added, each loop a `while True:`, every comment kept
/// where it says something, gotos into an `if`'s clauses and a small block copied to its
/// jumps as `if`s, gotos between the cases of a `match` in the same `match`, and the
/// program's own assertions (each goto function against
/// the same function written without goto) pass on plain CPython.
#[test]
fn flow_graphs_become_loops_and_ifs() {
    let dir = common::Scratch::dir("translate-graphs");
    let source = common::root().join("tests/translate/graphs.py");
    let translated = translated_and_ok(&source, &dir.join("graphs.py"), false);
    assert!(!translated.contains("_goto_"), "{translated}");
    let function = |name: &str| function_text(&translated, name);
    // Two loops, the inner one left by `break` for the outer one's head.
    assert_eq!(
        function("toggle").matches("while True:").count(),
        2,
        "{translated}"
    );
    assert_eq!(
        function("toggle").matches("break").count(),
        2,
        "{translated}"
    );
    // A loop whose head leaves it on a test tests it in the `while`; the comments of a test
    // and of the statements, and statements that shared a line.
    let words = function("scan_words");
    for kept in [
        "while not (i >= len(text)):",
        "if text[i] == \" \":  # still blank",
        "words.reverse(); words.append(",
    ] {
        assert!(words.contains(kept), "{translated}");
    }
    // In a method, the comments of its label, a test, a statement and a line of its own.
    let flicker = function("flicker");
    for kept in [
        "while True:  # dim",
        "if v % 3 == 0:  # brighter?",
        "v))  # a pair",
        "# the dim state",
    ] {
        assert!(flicker.contains(kept), "{translated}");
    }
    // Gotos into the clauses of an `if`: one `if`/`elif` chain, no loop; a block of one
    // statement that two places enter, written in both.
    let admit = function("admit");
    assert!(!admit.contains("while"), "{translated}");
    assert_eq!(admit.matches("elif ").count(), 3, "{translated}");
    assert_eq!(
        function("classify").matches("out.append(\"tail\")").count(),
        2,
        "{translated}"
    );
    // Gotos between the cases of a `match`: the same `match`, each goto the code it reaches.
    let command = function("command");
    assert!(!command.contains("while"), "{translated}");
    assert_eq!(command.matches("case ").count(), 4, "{translated}");
    assert!(command.contains("match words:"), "{translated}");
}

/// Switches in the shapes of tests/translate/switches.py, each beside a twin written as an
/// `if`/`elif` chain, translated as a migration: every pair agrees on every CPython (the
/// module's assertions, on subjects of other types too), no function keeps the register or
/// a dispatch loop, and a switch whose cases return, `break` or go to a label after it reads
/// as an `if`/`elif` ladder on its case's number, named after its subject (or
/// `switch_case`), with the search reading a parameter that the function only reads; a
/// switch in a case of another, a ladder in a branch of the other's; a switch with no case,
/// its subject evaluated.
#[test]
fn switches_become_ladders_on_their_case_number() {
    let dir = common::Scratch::dir("translate-switches");
    let source = common::root().join("tests/translate/switches.py");
    let translated = translated_and_ok(&source, &dir.join("switches.py"), true);
    for register in ["_goto_k", "_goto_v"] {
        assert!(!translated.contains(register), "{translated}");
    }
    let function = |name: &str| function_text(&translated, name);
    assert!(!function("op_name").contains("_goto_"), "{translated}");
    assert!(
        function("op_name").contains("try: op_case = (((1 if op == 0 else 0)"),
        "{translated}"
    );
    let days = function("days_in");
    for kept in [
        "    if month_case == 1:\n        days = 30\n",
        "    elif month_case == 2:\n        days = 28\n        if leap:\n",
    ] {
        assert!(days.contains(kept), "{translated}");
    }
    let run = function("run");
    assert_eq!(run.matches("while True:").count(), 1, "{translated}");
    for kept in [
        "        switch_case = code[pc]\n",
        "        if switch_case == 1:\n",
        "        elif switch_case == 4:\n            return stack\n",
        "        else:\n            raise ValueError(code[pc])\n",
    ] {
        assert!(run.contains(kept), "{translated}");
    }
    assert!(!run.contains("_goto_"), "{translated}");
    // Switches inside the cases of another: a ladder in each branch of the outer one, the
    // two on `key` sharing its case number, which each reads right after its search.
    let moves = function("move");
    assert!(!moves.contains("_goto_"), "{translated}");
    assert!(
        moves.contains("        if key_case == 1:\n"),
        "{translated}"
    );
    assert!(!moves.contains("key_case_2"), "{translated}");
    // A switch with no case: its subject, a statement, and nothing of its body.
    let drop = function("drop_last");
    assert!(drop.contains("    items.pop()\n"), "{translated}");
    assert!(!drop.contains("append"), "{translated}");
}

/// Gotos that leave statements for the label after them, or start them again from the label
/// before them, from inside `with` and `try` statements, in the shapes
/// tests/translate/blocks.py writes (300 generated functions, each beside a twin written
/// with a flag): translated, every pair agrees on CPython and PyPy (the module's
/// assertions), no goto back is left to a register (each is `continue` of a `while True:`),
/// and the functions that add no variable are counted here, so that a regression shows.
/// The registers left are PyPy's `with` left twice (docs/translate.md), and gotos out of
/// statements that end in a compound one, where neither the label's line nor a blank one
/// after it can take the closing `break`.
#[test]
fn gotos_out_of_with_and_try_become_a_block_left_by_break() {
    let (_, translated) = twins_translated("blocks", 300);
    let functions = goto_functions(&translated);
    assert_eq!(functions.len(), 300);
    let restarted = functions.iter().filter(|f| f.contains("_goto_again"));
    assert_eq!(restarted.count(), 0, "{translated}");
    let structured = functions.iter().filter(|f| !f.contains("_goto_")).count();
    assert_eq!(structured, 217, "{translated}");
}

/// In a function with a computed goto, which may reach any label by value, the passes take a
/// goto loop as anywhere (a `while`), keep its label where a jump by value lands, and leave
/// the other shapes to the register: tests/translate/by_value.py, against its plain twins
/// on every CPython.
#[test]
fn labels_reached_by_value_stay_where_jumps_land() {
    let dir = common::Scratch::dir("translate-by-value");
    let source = common::root().join("tests/translate/by_value.py");
    let translated = translated_and_ok(&source, &dir.join("by_value.py"), true);
    let function = |name: &str| function_text(&translated, name);
    let spin = "            while i < acc:\n                total += i\n                i += 1\n";
    assert!(function("machine").contains(spin), "{translated}");
    // Only loops are taken there: the goto to the `return` keeps its jump.
    let halt = "            if pc >= len(program):\n                _goto_k = ";
    assert!(function("machine").contains(halt), "{translated}");
    assert!(
        function("route").contains("if skip:\n                _goto_k = "),
        "{translated}"
    );
}

/// The variables `translated` adds to `source`: the names it binds in a scope (a function,
/// a class, the module, by the names of the definitions around it; a lambda's or a
/// comprehension's own are not that scope's) that the source does not bind there, counted
/// in each scope and summed: two functions with a register each
/// add two, a switch's `n_case` one, a search function defined once (`_goto_...`, its own
/// body not counted) one however many functions call it.
fn added_variables(source: &str, translated: &str) -> usize {
    use rustpython_compiler::ast::visitor::{Visitor, walk_expr, walk_stmt};
    use rustpython_compiler::ast::{Expr, ExprContext, Stmt};
    use std::collections::{BTreeMap, BTreeSet};
    /// The names each scope binds, by the path of definitions to it.
    #[derive(Default)]
    struct Bound {
        path: Vec<String>,
        names: BTreeMap<Vec<String>, BTreeSet<String>>,
    }
    impl Bound {
        fn bind(&mut self, name: &str) {
            let names = self.names.entry(self.path.clone()).or_default();
            names.insert(name.to_owned());
        }
    }
    impl<'a> Visitor<'a> for Bound {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let name = match stmt {
                Stmt::FunctionDef(def) => Some(def.name.as_str()),
                Stmt::ClassDef(class) => Some(class.name.as_str()),
                _ => None,
            };
            let Some(name) = name else {
                return walk_stmt(self, stmt);
            };
            self.bind(name);
            // A function of the translation's own: its name alone.
            if !name.starts_with("_goto_") {
                self.path.push(name.to_owned());
                walk_stmt(self, stmt);
                self.path.pop();
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Name(name) if name.ctx == ExprContext::Store => self.bind(&name.id),
                // Scopes of their own, whose names are not the function's.
                Expr::Lambda(_)
                | Expr::ListComp(_)
                | Expr::SetComp(_)
                | Expr::DictComp(_)
                | Expr::Generator(_) => return,
                _ => {}
            }
            walk_expr(self, expr);
        }
    }
    let bound = |text: &str| {
        let parsed = rustpython_compiler::parser::parse_module(text).expect("a module parses");
        let mut bound = Bound::default();
        bound.visit_body(&parsed.syntax().body);
        bound.names
    };
    let (before, after) = (bound(source), bound(translated));
    let none = BTreeSet::new();
    (after.iter())
        .map(|(path, names)| names.difference(before.get(path).unwrap_or(&none)).count())
        .sum()
}

/// The variables each translation adds (`_goto_k`, `_goto_v`, ...: a register, a saved
/// value, a search; a switch's case number; [`added_variables`], counted per scope), for every `ok` fixture and
/// every program of tests/programs and the translate benchmarks' programs (generated at
/// 100 blocks), against the record `tests/translate/added.txt`
/// (`GOTOPY_BLESS=1` writes it again): a shape that went back to a dispatch loop shows as a
/// variable more. The oracle of what a person would
/// write is the reading of each file, done once; docs/translate.md has the sums.
#[test]
fn the_names_each_translation_adds_are_recorded() {
    let dir = common::Scratch::dir("translate-added");
    let named = |path: PathBuf| {
        let name = path
            .strip_prefix(common::root())
            .unwrap()
            .display()
            .to_string();
        (name, path)
    };
    let mut sources: Vec<(String, PathBuf)> =
        fixtures_and_programs().into_iter().map(named).collect();
    // The translate benchmarks: the program of benches/translate, and the generated ones at
    // 100 blocks (each a line of its command).
    sources.push(named(common::root().join("benches/translate/goto_code.py")));
    for (script, args) in [
        ("benches/translate/skips.py", &["100"][..]),
        ("benches/translate/skips.py", &["100", "--states"]),
        ("benches/big/gen.py", &["100"]),
        ("benches/big/gen.py", &["100", "--spin"]),
    ] {
        let written = Command::new("python3")
            .arg(common::root().join(script))
            .args(args)
            .output()
            .expect("python3 runs the benchmark's generator");
        assert!(written.status.success(), "{script}");
        // Beside the translations, not among them.
        let generated = dir.join("generated");
        std::fs::create_dir_all(&generated).unwrap();
        let path = generated.join(format!("generated_{}.py", sources.len()));
        std::fs::write(&path, &written.stdout).unwrap();
        sources.push((format!("{script} {}", args.join(" ")), path));
    }
    let mut table =
        String::from("# file: variables added, lines of the source, lines of the translation\n");
    let (mut files, mut without) = (0, 0);
    for (name, path) in &sources {
        let (text, output, _) = translated_into(path, &dir);
        let translated = std::fs::read_to_string(&output).unwrap();
        let added = added_variables(&text, &translated);
        files += 1;
        without += usize::from(added == 0);
        table.push_str(&format!(
            "{name}: {added} {} {}\n",
            text.lines().count(),
            translated.lines().count()
        ));
    }
    let record = common::root().join("tests/translate/added.txt");
    if std::env::var_os("GOTOPY_BLESS").is_some() {
        std::fs::write(&record, &table).unwrap();
    }
    let recorded = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(
        recorded == table,
        "the names translations add changed (GOTOPY_BLESS=1 records them):\n{}",
        table
            .lines()
            .filter(|line| !recorded.lines().any(|old| old == *line))
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!("{without} of {files} files translate without an added variable");
}

/// Forward skips become `if`s and `else`s, a loop with its test a `while` (at its head, a
/// test that leaves it: `while not (TEST):`, the exit after it), a loop that a
/// goto restarts `while True:` around it with an `else:`, a goto to a `return` or `raise`
/// that statement, and a loop left for the label after it `break` with an `else:`: the shapes of tests/translate/structured.py translate
/// without a name added and, migrated, without the lines of their markers; the program's own
/// assertions (each goto function against the same function written without goto) pass on
/// plain CPython.
#[test]
fn forward_skips_become_ifs_and_elses() {
    let dir = common::Scratch::dir("translate-structured");
    let source = common::root().join("tests/translate/structured.py");
    let output = dir.join("structured.py");
    let translated = translated_and_ok(&source, &output, true);
    assert!(!translated.contains("_goto_"), "{translated}");
    assert_eq!(translated.matches("while not (").count(), 6, "{translated}");
    assert_eq!(translated.matches("else:").count(), 40, "{translated}");
    // As a person writes it, with no line left where a marker was.
    let gcd = "def gcd(a, b):\n    while not (b == 0):\n        a, b = b, a % b\n    return a\n";
    assert!(translated.contains(gcd), "{translated}");
    // A goto to a label that a `return` or `raise` follows is that statement, and the label's
    // own copy goes where nothing else reaches it; a goto to a function's end is `return`.
    let function = |name: &str| function_text(&translated, name);
    let found = "            if cell == wanted:\n                return row_at, col_at\n";
    assert!(function("locate").contains(found), "{translated}");
    assert_eq!(
        function("locate").matches("return row_at, col_at").count(),
        1,
        "{translated}"
    );
    let malformed = "        if line.strip() == bad:\n            raise ValueError(";
    assert!(function("setting").contains(malformed), "{translated}");
    assert_eq!(
        function("setting").matches("raise ValueError(").count(),
        2,
        "{translated}"
    );
    assert!(
        function("add_up").contains("        if v < 0:\n            return\n"),
        "{translated}"
    );
    // A loop that a goto restarts: `while True:` on the label's line (its comment kept), a
    // `break` for each goto, and what follows the loop as its `else:`.
    let again =
        "    while True:  # after a skip or a new bin\n        for size in sizes[placed:]:\n";
    assert!(function("first_fit").contains(again), "{translated}");
    assert_eq!(
        function("first_fit").matches("break").count(),
        2,
        "{translated}"
    );
    assert!(
        function("first_fit").contains("        else: return bins\n"),
        "{translated}"
    );
    let drained = "        else: log.append(\"empty\"); break\n";
    assert!(function("drain").contains(drained), "{translated}");
    // A loop left for the label after it: `break`, and what came between the `else:`.
    let found = "            log.append(v)\n            break\n    else:\n        log.append(\"none\")\n    log.append(\"done\")\n";
    assert!(function("first_negative").contains(found), "{translated}");
    // From inside a `with` and a `try` handler, whose exits `break` runs as the goto did.
    let found = "                if line == word:\n                    break\n";
    assert!(function("first_word").contains(found), "{translated}");
    let none = "    else:\n        log.append(\"none\")\n    log.append(\"done\")\n";
    assert!(function("first_word").contains(none), "{translated}");
    // Out of two loops at once: the inner loop's `break`, its `else:` over the rest of the
    // outer body and `continue`, then the outer loop's `break` on the label's line.
    let pair = "                break\n        else:\n            log.append(\"end of row\"); continue\n        break\n    log.append(\"done\")\n";
    assert!(function("first_pair").contains(pair), "{translated}");
    let pair = "                break\n        else: continue\n        break  # the search's end\n";
    assert!(function("pair_sum").contains(pair), "{translated}");
    let zero =
        "        else:\n            i += 1\n            log.append(i); continue\n        break\n";
    assert!(function("find_zero").contains(zero), "{translated}");
    let out = "        if n == stop:\n            break\n";
    assert!(function("count_down_to").contains(out), "{translated}");
    // A ladder of conditional gotos: one `if` with its `elif`s, each block under its test.
    let ladder = "    if y < 0:\n        word = \"negative\"\n    elif y == 0:\n        word = \"zero\"\n    else:\n        word = \"positive\"\n    return word\n";
    assert!(function("sign_word").contains(ladder), "{translated}");
    let ladder = "    if k == 1:\n        log.append(\"first\")\n    elif k == 2:\n        log.append(\"second\")\n        log.append(k * 2)\n    else:\n        log.append(\"other\")\n    log.append(k)\n";
    assert!(function("grade").contains(ladder), "{translated}");
    let ladder = "    if n < 0:\n        raise ValueError(n)\n    elif n % 2:\n        kind = \"odd\"\n    else:\n        kind = \"even\"\n";
    assert!(function("parity").contains(ladder), "{translated}");
    // Handlers that go past the statements after their `try`: its `else:` on the last goto's
    // line, `pass` for a goto alone in its handler.
    let handled =
        "        log.append(\"not a number: \" + text)\n    else:\n        if count < 0:\n";
    assert!(function("parse_count").contains(handled), "{translated}");
    let handled = "    except KeyError:\n        pass\n";
    assert!(function("lookup").contains(handled), "{translated}");
    let handled = "        log.append(\"index\")\n    else:\n        log.append(\"found\")\n";
    assert!(function("lookup").contains(handled), "{translated}");
    let handled = "        except ValueError:\n            pass\n    return total\n";
    assert!(function("total_of").contains(handled), "{translated}");
    // A cleanup ladder: each skip's `if` tests what a person tests, `is not` for `is`.
    let ladder = "    if first is not None:\n        second = take(\"second\", oks[1], log)\n        if second is not None:\n";
    assert!(function("open_three").contains(ladder), "{translated}");
    let ladder = "            if third is None:\n                log.append(\"give \" + second)\n            else:\n                return first, second, third\n        log.append(\"give \" + first)\n    return None\n";
    assert!(function("open_three").contains(ladder), "{translated}");
    // A state machine: each state that one test enters moves under that test, and its loop
    // back to itself is a `while`.
    let space = "            if c == \" \":\n                while True:\n                    i += 1\n                    if not (i < len(text) and text[i] == \" \"):\n                        break\n                continue\n            if c.isalpha():\n                j = i\n";
    assert!(function("tokens").contains(space), "{translated}");
    // A goto into an `else` clause that runs as the statements after its statement: those
    // statements, the goto a skip.
    let into = "    if not skip:\n        while n > 0:\n            log.append(n)\n            n -= 1\n    log.append(\"counted\")\n";
    assert!(
        function("count_down_or_skip").contains(into),
        "{translated}"
    );
    let into = "    else:\n        try:\n            value = int(text)\n";
    assert!(function("parse_or_default").contains(into), "{translated}");
    // Loops made of gotos that test at their end, one inside the other: `while True:` on
    // each label's line, `break` on each goto's.
    let rows = "    while True:\n        j = 0\n        while True:\n            out.append(i * j)\n            j += 1\n            if not (j < m):\n                break\n        i += 1\n        if not (i < n):\n            break\n";
    assert!(function("table").contains(rows), "{translated}");
    let next = "        if i % 2 == 0:\n            continue\n";
    assert!(function("odd_squares").contains(next), "{translated}");
    // A loop whose head leaves it: `while not (TEST):` over the rest, the exit after it; a
    // goto back where the body ends anyway goes, one elsewhere is `continue`.
    let head = "    while not (i >= len(text)):\n        c = text[i]\n";
    assert!(function("words").contains(head), "{translated}");
    let exit = "        out.append(c)\n    return out\n";
    assert!(function("words").contains(exit), "{translated}");
    let head = "    while not (n < 2):\n        n //= 2\n";
    assert!(function("halvings").contains(head), "{translated}");
    let head = "        while not (i == len(batch)\n                or batch[i] is None):\n            total += batch[i]\n";
    assert!(function("batch_sums").contains(head), "{translated}");
    let exit = "                total = 0\n        log.append(total)\n        # the batch is done\n        continue\n";
    assert!(function("batch_sums").contains(exit), "{translated}");
    assert_eq!(
        function("batch_sums").matches("continue").count(),
        1,
        "{translated}"
    );
    // The block a computed GO TO falls into, one line, copied as its `else`.
    let ladder = "    if k == 1:\n        log.append(\"one or none\")\n    elif k == 2:\n        log.append(\"two\")\n    else:\n        log.append(\"one or none\")\n    return log\n";
    assert!(function("dial").contains(ladder), "{translated}");
}
