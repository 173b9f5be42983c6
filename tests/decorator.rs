//! The run-time decorator (`goto(f)` on code compiled without gotopy, SPEC section 6) against
//! the jump rules of SPEC section 4: a goto that would enter a `for`, `with` or `except`
//! body is refused with `SyntaxError`, however equal the stack depths look; what the rules
//! allow and the bytecode proves still runs as CPython runs the same program without goto.
//! Then the decorator against gotopy's own paths: over every fixture, what `gotopy check`
//! rejects as a jump into a frame the decorator rejects too, and it never panics; over the
//! differential test's random programs, what it accepts does what the reference
//! interpreter says.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::Command;

use common::{assert_same_as_cpython, gotopy_run, write};
use gotopy::bytecode::code_objects;
use gotopy::rewrite::rewrite_code;
use gotopy::{Code, Source, check_source};
use ruff_text_size::{Ranged, TextSize};
use rustpython_compiler::ast::statement_visitor::{StatementVisitor, walk_stmt};
use rustpython_compiler::ast::{self, Stmt};
use rustpython_compiler::core::bytecode::ConstantData;
use rustpython_compiler::{CodeObject, CompileOpts, Mode, compile};

/// Runs `goto(f)` on each `(name, source)` pair's `f`, compiled by `exec`, through `gotopy
/// run`; returns one line per case: `name refused LINE MESSAGE` or `name accepted`.
fn decorate_each(file: &str, cases: &[(&str, &str)]) -> Vec<String> {
    let mut script = String::from("from goto import goto\ncases = {\n");
    for (name, source) in cases {
        script.push_str(&format!("    {name:?}: {source:?},\n"));
    }
    script.push_str(
        "}\nfor name, source in cases.items():\n    ns = {}\n    \
         exec(compile(source, name, 'exec'), ns)\n    try:\n        goto(ns['f'])\n        \
         print(name, 'accepted')\n    except SyntaxError as e:\n        \
         print(name, 'refused', e.lineno, e.msg)\n",
    );
    let output = gotopy_run(&write(file, &script), &[]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), cases.len(), "{stdout}");
    lines
}

/// Jumps into a `for` body from another `for` body (or from before it), between `except`
/// clauses and between `with` bodies: the stack depth and handler are the same at the goto
/// and the label in most of them, yet each enters a frame (SPEC section 4) and must be
/// refused with the line of the frame it would enter.
#[test]
fn jumps_into_frames_are_refused() {
    let cases = [
        // The brief's example: two loops of equal depth.
        (
            "sibling_loops",
            "def f():\n    trace = []\n    for i in range(10):\n        trace.append(('first', i))\n        goto .other\n    for j in 'ab':\n        label .other\n        trace.append(('second', j if 'j' in locals() else None))\n    return trace\n",
            "it would enter the `for` body at line 6",
        ),
        // Each loop inside its own `try` body.
        (
            "loops_in_different_try_bodies",
            "def f():\n    try:\n        for i in range(3):\n            goto .x\n    except ValueError:\n        pass\n    try:\n        for j in range(3):\n            label .x\n            return j\n    except ValueError:\n        pass\n",
            "it would enter the `for` body at line 8",
        ),
        // Out of two nested loops into a later loop at depth one.
        (
            "label_in_loop_after_the_loops_left",
            "def f():\n    for i in range(3):\n        for k in range(2):\n            goto .x\n    for j in range(3):\n        label .x\n        return j\n",
            "it would enter the `for` body at line 5",
        ),
        // From one loop's body into the body of a loop nested in another loop.
        (
            "into_nested_loop_of_another_loop",
            "def f():\n    for i in range(3):\n        goto .x\n    for j in range(3):\n        for k in range(2):\n            label .x\n            return k\n",
            "it would enter the `for` body at line 4",
        ),
        // From an outer loop's body into its own inner loop's body.
        (
            "into_inner_loop_of_same_loop",
            "def f(rows):\n    for row in rows:\n        if not row:\n            goto .cell\n        for cell in row:\n            label .cell\n            print(cell)\n",
            "it would enter the `for` body at line 5",
        ),
        // From before a loop into its body.
        (
            "into_loop_from_before",
            "def f(items, resume):\n    if resume:\n        goto .body\n    for item in items:\n        label .body\n        print(item)\n",
            "it would enter the `for` body at line 4",
        ),
        // Between two unnamed `except` clauses of one `try`: same saved-exception slot, same
        // cleanup handler, but a different handler body.
        (
            "between_except_clauses",
            "def f():\n    try:\n        raise KeyError\n    except KeyError:\n        goto .x\n    except ValueError:\n        label .x\n        return 1\n",
            "it would enter the `except` handler at line 6",
        ),
        // Into the bare `except:` after a typed clause.
        (
            "into_bare_except",
            "def f():\n    try:\n        raise KeyError\n    except KeyError:\n        goto .x\n    except:\n        label .x\n        return 1\n",
            "it would enter the `except` handler",
        ),
        // Between two `with` bodies.
        (
            "between_with_bodies",
            "def f(m):\n    with m:\n        goto .x\n    with m:\n        label .x\n        return 1\n",
            "it would enter the `with` body at line 4",
        ),
        // With other markers between the goto and the block: the block is still named by
        // its own line.
        (
            "into_with_past_other_markers",
            "def f(m):\n    goto .x\n    label .y\n    with m:\n        label .x\n    label .z\n",
            "it would enter the `with` body at line 4",
        ),
    ];
    let lines = decorate_each(
        "refused_frames.py",
        &cases
            .iter()
            .map(|(name, source, _)| (*name, *source))
            .collect::<Vec<_>>(),
    );
    for ((name, source, expected), line) in cases.iter().zip(&lines) {
        let goto_line = source
            .lines()
            .position(|l| l.trim_start().starts_with("goto ."))
            .map(|index| index + 1)
            .unwrap();
        let prefix = format!("{name} refused {goto_line} cannot rewrite `goto .");
        assert!(line.starts_with(&prefix), "{line}\nwanted {prefix}");
        assert!(line.contains(expected), "{line}\nwanted {expected}");
        assert!(line.contains("through gotopy"), "{line}");
    }
}

/// A goto and label in code no path reaches (the handler of a `try` whose body cannot
/// raise): legal in the source, but nothing about their blocks can be proved from the
/// bytecode, so they are refused rather than guessed.
#[test]
fn unreachable_markers_are_refused() {
    let lines = decorate_each(
        "refused_unreachable.py",
        &[(
            "in_dead_handler",
            "def f():\n    try:\n        pass\n    except ValueError:\n        label .x\n        goto .x\n",
        )],
    );
    assert!(
        lines[0].starts_with("in_dead_handler refused 6 cannot rewrite `goto .x`")
            && lines[0].contains("cannot be told from the bytecode"),
        "{}",
        lines[0]
    );
}

/// Gotos the rules allow and the bytecode proves: out of nested `for` loops (also inside a
/// `with` and an `except` body that stay open), within one `for` body forwards and back to
/// its top, from an inner loop back to the top of the outer loop's body, and into `if` and
/// `while` bodies. They are rewritten and behave as CPython runs the same program written
/// without goto.
#[test]
fn legal_jumps_still_run() {
    let script = r#"
import contextlib
from goto import goto

source = '''
def out_of_nested(grid, wanted):
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            for k in range(2):
                if cell == wanted and k == 1:
                    goto .found
    r = c = k = None
    label .found
    return (r, c, k)

def out_of_loop_inside_with(log, items):
    with contextlib.nullcontext():
        for x in items:
            if x < 0:
                goto .negative
            log.append(x)
        log.append("all")
        label .negative
        log.append("inside")
    log.append("after")
    return log

def out_of_loop_inside_except(items):
    try:
        raise KeyError("k")
    except KeyError:
        for x in items:
            if x:
                goto .seen
        x = None
        label .seen
        result = ("handled", x)
    return result

def within_body(items):
    out = []
    for x in items:
        if x % 2:
            goto .skip
        out.append(x)
        label .skip
        out.append(-x)
    return out

def retry_top(items):
    out = []
    for x in items:
        tries = 0
        label .again
        tries += 1
        if tries < x:
            goto .again
        out.append(tries)
    return out

def restart_outer(rows):
    out = []
    for row in rows:
        n = 0
        label .restart
        for cell in row:
            n += 1
            if n == 2:
                goto .restart
        out.append(n)
    return out

def into_if_and_while(n, jump):
    out = []
    if jump:
        goto .in_while
    if n > 100:
        out.append("big")
        label .in_if
        out.append("if")
    while n > 0:
        label .in_while
        out.append(n)
        n -= 1
    if jump == 1:
        jump = 2
        goto .in_if
    return out

def within_except(tries):
    try:
        raise ValueError
    except ValueError:
        n = 0
        label .again
        n += 1
        if n < tries:
            goto .again
    return n
'''
ns = {"contextlib": contextlib}
exec(compile(source, "<user code>", "exec"), ns)
for name in ["out_of_nested", "out_of_loop_inside_with", "out_of_loop_inside_except",
             "within_body", "retry_top", "restart_outer", "into_if_and_while", "within_except"]:
    goto(ns[name])
g = ns
print(g["out_of_nested"]([[1, 2], [3, 4]], 3), g["out_of_nested"]([[1]], 9),
      [g["out_of_nested"]([[i]], i) for i in range(3000)][-1])
print(g["out_of_loop_inside_with"]([], [1, 2, -1, 3]), g["out_of_loop_inside_with"]([], [1]))
print(g["out_of_loop_inside_except"]([0, 0, 5, 6]), g["out_of_loop_inside_except"]([0]))
print(g["within_body"](range(6)))
print(g["retry_top"]([1, 3, 2]))
print(g["restart_outer"]([[1, 1, 1], [1], []]))
print(g["into_if_and_while"](3, 0), g["into_if_and_while"](3, 1), g["into_if_and_while"](101, 0))
print(g["within_except"](4))
"#;
    let structured = r#"
def out_of_nested(grid, wanted):
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            for k in range(2):
                if cell == wanted and k == 1:
                    return (r, c, k)
    return (None, None, None)
print(out_of_nested([[1, 2], [3, 4]], 3), out_of_nested([[1]], 9),
      [out_of_nested([[i]], i) for i in range(3000)][-1])
def out_of_loop_inside_with(log, items):
    for x in items:
        if x < 0:
            break
        log.append(x)
    else:
        log.append("all")
    log.append("inside")
    log.append("after")
    return log
print(out_of_loop_inside_with([], [1, 2, -1, 3]), out_of_loop_inside_with([], [1]))
def out_of_loop_inside_except(items):
    x = next((x for x in items if x), None)
    return ("handled", x)
print(out_of_loop_inside_except([0, 0, 5, 6]), out_of_loop_inside_except([0]))
print([v for x in range(6) for v in ([-x] if x % 2 else [x, -x])])
print([max(x, 1) for x in [1, 3, 2]])
print([5, 1, 0])
def into_if_and_while(n, jump):
    out = []
    if jump:
        out.append(n)
        n -= 1
    elif n > 100:
        out += ["big", "if"]
    while n > 0:
        out.append(n)
        n -= 1
    if jump == 1:
        out.append("if")
        while n > 0:
            out.append(n)
            n -= 1
    return out
print(into_if_and_while(3, 0), into_if_and_while(3, 1), into_if_and_while(101, 0))
print(4)
"#;
    assert_same_as_cpython("decorator_legal", script, structured);
}

/// The code after a `with` whose body never finishes normally runs when `__exit__`
/// suppresses the exception; RustPython 0.5 covers it with the `with` cleanup's handler,
/// deeper than the stack there, and its VM panicked when that code raised. The decorator
/// gives a function it rewrites the handler around the `with` there: the `NameError`
/// reaches the `except`, as in CPython.
#[test]
fn code_after_a_with_that_never_finishes_raises_into_the_enclosing_handler() {
    let script = r#"
from goto import goto

class Suppress:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return True

source = '''
def after_with(n):
    try:
        with Suppress():
            raise KeyError
        label .again
        n -= 1
        if n:
            goto .again
        undefined_name
    except NameError as error:
        return (n, str(error))
'''
ns = {"Suppress": Suppress}
exec(compile(source, "<user code>", "exec"), ns)
goto(ns["after_with"])
print(ns["after_with"](3))
"#;
    let structured = r#"
class Suppress:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return True

def after_with(n):
    try:
        with Suppress():
            raise KeyError
        while True:
            n -= 1
            if not n:
                break
        undefined_name
    except NameError as error:
        return (n, str(error))
print(after_with(3))
"#;
    assert_same_as_cpython("decorator_after_with", script, structured);
}

/// The decorator's rewrite reports labels as lines as the compile path does (its `NOP`
/// folded into the next instruction where that one cannot raise), and an unbound local
/// after a label at the statement reading it, not at the label. The lines are written by
/// hand from the source: one event per statement that runs, in order.
#[test]
fn decorated_functions_report_label_lines_and_errors_at_their_statements() {
    let script = r#"
import sys
from goto import goto

source = '''
def total(n):
    s = 0
    label .loop
    if n <= 0:
        return s
    s += n; n -= 1
    goto .loop

def skip(flag):
    if flag:
        goto .use
    x = 1
    label .use
    return x
'''
ns = {}
exec(compile(source, "<user code>", "exec"), ns)
total, skip = goto(ns["total"]), goto(ns["skip"])
lines = []
def tracer(frame, event, arg):
    if event == "line" and frame.f_code.co_name == "total":
        lines.append(frame.f_lineno)
    return tracer
sys.settrace(tracer)
total(2)
sys.settrace(None)
print(lines)
try:
    skip(True)
except UnboundLocalError as error:
    print(error.__traceback__.tb_next.tb_lineno)
"#;
    let output = gotopy_run(&write("decorated_lines.py", script), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "[3, 4, 5, 7, 8, 4, 5, 7, 8, 4, 5, 6]\n15\n",
        "{stderr}"
    );
}

/// Every `fixtures/{ok,err}/*.py`, read from disk now: each code object of the plainly
/// compiled module is given to the decorator's rewrite on its own (its nested code objects
/// stripped), which must rewrite it or refuse it with the line of a marker, never panic or
/// fail inside; and each function, class or module body in which `gotopy check` finds a
/// jump into a frame (G003) must be refused.
#[test]
fn decorator_refuses_whatever_check_calls_a_jump_into_a_frame() {
    let mut fixtures: Vec<PathBuf> = ["fixtures/ok", "fixtures/err"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(common::root().join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 20, "fixtures not found");
    let mut failures = Vec::new();
    let mut refusals_checked = 0;
    for path in &fixtures {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let shown = common::shown(path);
        let diagnostics = check_source(
            &Source::new(shown.clone(), text.clone()),
            common::fixture_options(&text),
        );
        // What RustPython itself cannot compile, no decorator ever sees.
        let Ok(module) = compile(&text, Mode::Exec, &shown, CompileOpts::default()) else {
            continue;
        };
        let mut outcomes = Vec::new();
        for code in code_objects(&module) {
            let mut alone = without_nested_code(code);
            let outcome = catch_unwind(AssertUnwindSafe(|| rewrite_code(&mut alone)));
            match outcome {
                Err(_) => failures.push(format!("{shown}: `{}`: rewrite panicked", code.qualname)),
                // A refusal names the line of the marker it is about; one without a line is a
                // failure inside gotopy (decoding, the stack analysis, assembling).
                Ok(Err(error)) if error.line.is_none() => failures.push(format!(
                    "{shown}: `{}`: rewrite failed inside gotopy: {error}",
                    code.qualname
                )),
                Ok(result) => outcomes.push((code, result)),
            }
        }
        let source = Source::new(shown.clone(), text.clone());
        for diagnostic in diagnostics.iter().filter(|d| d.code == Code::JumpIntoFrame) {
            let line = source.location(diagnostic.range.start()).line;
            let scope = enclosing_scope(&text, diagnostic.range.start());
            let matching: Vec<_> = outcomes
                .iter()
                .filter(|(code, _)| scope.matches(code, &source))
                .collect();
            if matching.len() != 1 {
                failures.push(format!(
                    "{shown}:{line}: G003 in {scope:?}, found in {} code objects",
                    matching.len()
                ));
                continue;
            }
            refusals_checked += 1;
            if let (code, Ok(_)) = matching[0] {
                failures.push(format!(
                    "{shown}:{line}: check says {:?}; the decorator accepted `{}`",
                    diagnostic.message, code.qualname
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        refusals_checked >= 5,
        "only {refusals_checked} G003 compared"
    );
}

/// `code` with each nested code object replaced by `None`, so that rewriting it rewrites it
/// alone.
fn without_nested_code(code: &CodeObject) -> CodeObject {
    let mut alone = code.clone();
    alone.constants = code
        .constants
        .iter()
        .map(|constant| match constant {
            ConstantData::Code { .. } => ConstantData::None,
            other => other.clone(),
        })
        .collect();
    alone
}

/// The scope a statement is in: the innermost `def` or `class` around it, or the module.
#[derive(Debug)]
enum Scope {
    Module,
    /// The name and the range of the whole statement (decorators included).
    Def(String, ruff_text_size::TextRange),
}

impl Scope {
    /// Whether `code` is this scope's code object: the module's has no `def` line; a
    /// function's or class's has its name and starts on a line of its statement's header
    /// (the first decorator's or the `def`'s).
    fn matches(&self, code: &CodeObject, source: &Source) -> bool {
        let is_module = code.obj_name.as_str() == "<module>";
        match self {
            Scope::Module => is_module,
            Scope::Def(name, range) => {
                let first = code.first_line_number.map_or(0, |line| line.get() as u32);
                let from = source.location(range.start()).line as u32;
                let to = source.location(range.end()).line as u32;
                !is_module && code.obj_name.as_str() == name && (from..=to).contains(&first)
            }
        }
    }
}

fn enclosing_scope(text: &str, offset: TextSize) -> Scope {
    struct Finder {
        offset: TextSize,
        found: Option<(String, ruff_text_size::TextRange)>,
    }
    impl<'a> StatementVisitor<'a> for Finder {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !stmt.range().contains(self.offset) {
                return;
            }
            match stmt {
                Stmt::FunctionDef(ast::StmtFunctionDef { name, .. })
                | Stmt::ClassDef(ast::StmtClassDef { name, .. }) => {
                    self.found = Some((name.to_string(), stmt.range()));
                }
                _ => {}
            }
            walk_stmt(self, stmt);
        }
    }
    let parsed = rustpython_compiler::parser::parse_module(text).unwrap();
    let mut finder = Finder {
        offset,
        found: None,
    };
    finder.visit_body(&parsed.syntax().body);
    match finder.found {
        Some((name, range)) => Scope::Def(name, range),
        None => Scope::Module,
    }
}

/// The random programs of the differential test (`tests/differential/programs.py`, without
/// `while switch` and `try`/`finally`), taken through the decorator's path instead of
/// gotopy's compiler: each module is compiled plainly by the interpreter's `compile`, then
/// rewritten by `_gotopy.rewrite` (what `goto(f)` does to `f.__code__`). Every program that
/// breaks SPEC section 4 on purpose must be refused; every other one is refused or does
/// exactly what the reference interpreter says, trace and outcome.
///
/// `GOTOPY_DECORATOR_DIFF_SEED` replays a run, `GOTOPY_DECORATOR_DIFF_PROGRAMS` sets how
/// many (default 600).
#[test]
fn decorator_on_random_programs_matches_the_reference_or_refuses() {
    let (seed, count) = common::seed_and_size("GOTOPY_DECORATOR_DIFF", 600);
    let dir = common::Scratch::dir("decorator-diff");
    succeed(
        Command::new("python3")
            .arg(common::root().join("tests/differential/programs.py"))
            .args([seed.to_string(), count.to_string()])
            .arg(&dir)
            .arg("without-source"),
        seed,
    );
    // The generator's own driver, with its compile step swapped for the decorator's path.
    std::fs::write(
        dir.join("decorator_driver.py"),
        "import builtins, sys, _gotopy\n\
         rewrite = _gotopy.rewrite\n\
         _gotopy.compile = lambda source, name: rewrite(builtins.compile(source, name, 'exec'))\n\
         sys.argv = ['driver.py', 'programs.json']\n\
         exec(builtins.compile(open('driver.py').read(), 'driver.py', 'exec'), {'__name__': '__main__'})\n",
    )
    .unwrap();
    let output = succeed(
        Command::new(env!("CARGO_BIN_EXE_gotopy"))
            .args(["run", "decorator_driver.py"])
            .current_dir(&dir),
        seed,
    );
    let invalid: std::collections::HashMap<String, Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("invalid.json")).unwrap()).unwrap();
    let expected: std::collections::HashSet<String> =
        std::fs::read_to_string(dir.join("expected.txt"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
    let sources: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("programs.json")).unwrap()).unwrap();
    let (mut rewritten, mut refused, mut failures) =
        (std::collections::BTreeSet::new(), 0, Vec::new());
    for line in output.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let number = value[0].as_u64().unwrap() as usize;
        let index = number.to_string();
        if value[1] == "refused" {
            refused += 1;
            let message = value[2].as_str().unwrap_or_default();
            // A refusal is about a marker (`cannot rewrite `goto .x` in ...`); an internal
            // error, or a message about the whole code object, is a failure inside gotopy.
            if message.contains("bug in gotopy")
                || (message.starts_with("cannot rewrite `")
                    && !message.starts_with("cannot rewrite `goto ."))
            {
                failures.push(format!("program {index}: failed inside gotopy: {message}"));
            }
        } else if let Some(codes) = invalid.get(&index) {
            failures.push(format!("program {index} breaks {codes:?} but ran: {line}"));
        } else {
            // Programs without a goto (labels only, or no marker) run unchanged.
            if sources[number].contains("goto .") {
                rewritten.insert(index.clone());
            }
            if !expected.contains(line) {
                failures.push(format!("program {index}: the reference disagrees: {line}"));
            }
        }
    }
    eprintln!(
        "{count} programs through the decorator: {} with a goto rewritten and run, {refused} \
         refused ({} of them break the rules on purpose)",
        rewritten.len(),
        invalid.len()
    );
    assert!(
        failures.is_empty(),
        "seed {seed} ({}):\n{}",
        dir.display(),
        failures.join("\n")
    );
    assert!(!rewritten.is_empty(), "seed {seed}: no goto was rewritten");
}

/// What `command` prints, once it has succeeded.
fn succeed(command: &mut Command, seed: u64) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "seed {seed}: {command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
