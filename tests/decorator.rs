//! The run-time decorator (`goto(f)` on code compiled without gotopy, SPEC section 6) against
//! the jump rules of SPEC section 4: a goto that would enter a `for`, `with` or `except`
//! body is refused with `SyntaxError`, however equal the stack depths look; what the rules
//! allow and the bytecode proves still runs as CPython runs the same program without goto.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use common::{assert_same_as_cpython, gotopy_run, write};

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
