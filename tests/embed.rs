//! Embedding (issue 5, SPEC section 6): the run-time decorator on code compiled without
//! gotopy, the import hook, and the two examples.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;

use std::process::Command;

use common::{assert_same_as_cpython, gotopy_run, write};

/// `goto(f)` on functions `exec` compiled: rewritten in place, identity and attributes kept,
/// idempotent; on a code object it returns the rewritten code object.
#[test]
fn decorator_rewrites_exec_compiled_code() {
    let script = r#"
import functools, sys
from goto import goto

source = '''
def countdown(n, *, step=1) -> list:
    "Counts down."
    out = []
    label .top
    out.append(n)
    n -= step
    if n > 0:
        goto .top
    return out

def make_counter(limit):
    seen = []
    def counter():
        i = 0
        label .again
        seen.append(i)
        i += 1
        if i < limit:
            goto .again
        return len(seen)
    return counter

class Tree:
    def walk(self, n):
        label .down
        if n > 1:
            n //= 2
            goto .down
        return n

    @staticmethod
    def fixed(n):
        label .l
        n -= 1
        if n:
            goto .l
        return "static"

    @classmethod
    def klass(cls, n):
        label .l
        n -= 1
        if n:
            goto .l
        return cls.__name__

def evens(limit):
    n = 0
    label .next
    if n < limit:
        yield n
        n += 2
        goto .next

def pair(grid, total):
    for row in grid:
        for a in row:
            for b in row:
                if a + b == total:
                    goto .found
    a = b = None
    label .found
    return a, b
'''
ns = {}
exec(compile(source, "<user code>", "exec"), ns)
countdown = ns["countdown"]
countdown.note = "kept"
countdown.__wrapped__ = len
before = (countdown.__name__, countdown.__qualname__, countdown.__doc__, countdown.__defaults__,
          countdown.__kwdefaults__, countdown.__annotations__, countdown.__dict__.copy(),
          countdown.__code__.co_varnames, countdown.__code__.co_firstlineno)
same = goto(countdown)
after = (countdown.__name__, countdown.__qualname__, countdown.__doc__, countdown.__defaults__,
         countdown.__kwdefaults__, countdown.__annotations__, countdown.__dict__.copy(),
         countdown.__code__.co_varnames, countdown.__code__.co_firstlineno)
print(same is countdown, before == after, countdown(5, step=2))
code = countdown.__code__
print(goto(countdown) is countdown and countdown.__code__ is code)

counter = goto(ns["make_counter"](4))
print(counter(), counter.__closure__ is not None)
Tree = ns["Tree"]
goto(Tree.walk)
goto(Tree.__dict__["fixed"].__func__)
goto(Tree.__dict__["klass"].__func__)
print(Tree().walk(40), Tree.fixed(3), Tree.klass(2))
print(list(goto(ns["evens"])(7)))
pair = goto(ns["pair"])
print(pair([[1, 2], [3, 4, 5]], 9), pair([[1]], 5), [pair([[i, 1]], i + 1) for i in range(20000)][-1])

module = compile("total = 0\nlabel .more\ntotal += 5\nif total < 20:\n    goto .more\n", "<mod>", "exec")
rewritten = goto(module)
scope = {}
exec(rewritten, scope)
print(type(rewritten).__name__, rewritten is not module, scope["total"], goto(rewritten) is rewritten)
"#;
    // The same computations without goto; identity and attribute checks print True.
    let structured = r#"
def countdown(n, *, step=1):
    out = [n]
    n -= step
    while n > 0:
        out.append(n)
        n -= step
    return out
print(True, True, countdown(5, step=2))
print(True)
def make_counter(limit):
    seen = []
    def counter():
        seen.extend(range(limit))
        return len(seen)
    return counter
print(make_counter(4)(), True)
def walk(n):
    while n > 1:
        n //= 2
    return n
print(walk(40), "static", "Tree")
print(list(range(0, 7, 2)))
def pair(grid, total):
    for row in grid:
        for a in row:
            for b in row:
                if a + b == total:
                    return a, b
    return None, None
print(pair([[1, 2], [3, 4, 5]], 9), pair([[1]], 5), [pair([[i, 1]], i + 1) for i in range(20000)][-1])
total = 0
while True:
    total += 5
    if total >= 20:
        break
print("code", True, total, True)
"#;
    assert_same_as_cpython("decorator", script, structured);
}

/// What the decorator cannot do raises `SyntaxError` with the file and the line.
#[test]
fn decorator_errors_name_file_and_line() {
    let path = write(
        "decorator_errors.py",
        r#"
from goto import goto
cases = {
    "missing": "def f():\n    x = 1\n    goto .nowhere\n",
    "removed": "def f():\n    goto .end\n    return 1\n    label .end\n",
    "leaves": "def f(m):\n    with m:\n        goto .out\n    label .out\n",
    "duplicate": "def f():\n    label .a\n    label .a\n",
    "switch": "def f(x):\n    while switch *x:\n        case[1]\n        pass\n",
}
for name, source in cases.items():
    ns = {}
    exec(compile(source, f"<{name}>", "exec"), ns)
    try:
        goto(ns["f"])
        print(name, "accepted")
    except SyntaxError as e:
        print(name, e.filename, e.lineno, e.msg)
"#,
    );
    let output = gotopy_run(&path, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        5,
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(lines[0].starts_with("missing <missing> 3 label `.nowhere` not found in `f`"));
    assert!(lines[1].starts_with("removed <removed> 2 label `.end` not found"));
    assert!(lines[1].contains("removed it as unreachable") && lines[1].contains("through gotopy"));
    assert!(lines[2].starts_with("leaves <leaves> 3 cannot rewrite `goto .out`"));
    assert!(lines[2].contains("it leaves the `with` body at line 2"));
    assert!(lines[3].starts_with("duplicate <duplicate> 3 duplicate label `.a`"));
    assert!(
        lines[4].starts_with("switch <switch> 2 `while switch`"),
        "{}",
        lines[4]
    );
}

/// A package with submodules using goto, imported by a script `gotopy run` runs: the import
/// hook compiles them with gotopy (the label follows a `return`, which only the full rewrite
/// keeps: the decorator alone refuses it).
#[test]
fn import_hook_compiles_imported_modules() {
    let dir = common::Scratch::dir("hook");
    let package = dir.join("shapes");
    std::fs::create_dir_all(package.join("inner")).unwrap();
    let search = "from goto import goto, label\n@goto\ndef find(grid, wanted):\n    for r, row in enumerate(grid):\n        for c, cell in enumerate(row):\n            if cell == wanted:\n                goto .found\n    return None\n    label .found\n    return (r, c)\n";
    std::fs::write(package.join("__init__.py"), "from .search import find\n").unwrap();
    std::fs::write(package.join("search.py"), search).unwrap();
    std::fs::write(package.join("inner/__init__.py"), "").unwrap();
    std::fs::write(
        package.join("inner/count.py"),
        "from goto import goto, label\n@goto\ndef count(n):\n    total = 0\n    label .top\n    if n:\n        total += n\n        n -= 1\n        goto .top\n    return total\n",
    )
    .unwrap();
    let script = dir.join("main.py");
    std::fs::write(
        &script,
        "import shapes, shapes.inner.count\nimport sys\nprint(shapes.find([[1, 2], [3, 4]], 4), shapes.inner.count.count(4))\nprint(shapes.search.__file__.endswith('search.py'))\n",
    )
    .unwrap();
    let output = gotopy_run(&script, &[]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "(1, 1) 10\nTrue\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // No bytecode cache was written for them.
    assert!(!package.join("__pycache__").exists());
    // A module gotopy rejects fails to import with its diagnostic as a SyntaxError.
    std::fs::write(
        dir.join("broken.py"),
        "from goto import goto\n@goto\ndef f():\n    goto .nowhere\n",
    )
    .unwrap();
    std::fs::write(
        &script,
        "try:\n    import broken\nexcept SyntaxError as e:\n    print(e.msg, e.lineno, e.offset)\n",
    )
    .unwrap();
    let output = gotopy_run(&script, &[]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "unknown label `.nowhere` [G002] 4 11\n"
    );
}

/// The example programs build with the tests; run them.
fn example(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = target.join("examples").join(name);
    let output = Command::new(&path)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn examples_run() {
    let embedded = example("embed");
    // The same computations in CPython, without goto.
    let plain = format!(
        "{}print(\"refused: label `.nowhere` not found in `broken` at line 2\")\n",
        common::EMBED_EXAMPLES_WITHOUT_GOTO
    );
    let expected = Command::new("python3")
        .args(["-c", &plain])
        .output()
        .unwrap();
    assert_eq!(embedded, String::from_utf8_lossy(&expected.stdout));
    let api = example("compile_api");
    assert!(api.starts_with("Disassembly of find"), "{api}");
    // The goto out of two loops: two iterators dropped, then the jump.
    let lines: Vec<&str> = api.lines().collect();
    assert!(
        lines.windows(3).any(|w| w[0].ends_with("POP_ITER")
            && w[1].ends_with("POP_ITER")
            && w[2].contains("JUMP_FORWARD")),
        "{api}"
    );
    assert!(api.contains("error[G003]"), "{api}");
}
