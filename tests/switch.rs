//! `while switch` and computed `goto *expr` (SPEC section 5), run by `gotopy run` and, on
//! each of CPython 3.11 to 3.15, by `python -m gotopy run`.
//!
//! - Property test: random switches (1 to 5,000 case values; integers small, negative and
//!   big, `str` with non-ASCII characters, `bytes`; cases of one to three values; bodies that
//!   fall through, `break` or `goto` out) called with every case value and with subjects of
//!   every kind, each result compared in the same interpreter run with the same logic written
//!   as a chain of `if` tests with `==` and type checks. The seed is printed; set
//!   `GOTOPY_SWITCH_SEED` to replay one and `GOTOPY_SWITCH_PROGRAMS` for more switches.
//! - The rules of SPEC section 5 against equivalent structured code run by CPython.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

use std::fmt::Write;
use std::process::{Command, Output};

use common::write;
use cpython::{assert_same_everywhere as assert_same_as_cpython, run_everywhere};

/// splitmix64: small, seedable, and enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Str,
    Bytes,
}

/// A random case value of `kind`, as a Python literal.
fn value(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Int => match rng.below(4) {
            0 => (rng.below(101) as i64 - 50).to_string(),
            1 => (rng.next() as i64).to_string(),
            2 => format!("{}{}", rng.pick(&["", "-"]), rng.next() as u128 * 1_000_003),
            _ => format!("-{}", rng.below(1_000_000)),
        },
        Kind::Str => {
            let alphabet = [
                'a', 'b', 'z', 'A', ' ', '\'', '\\', 'é', 'ß', '中', '😀', '\u{7f}',
            ];
            let text: String = (0..rng.below(7)).map(|_| *rng.pick(&alphabet)).collect();
            let mut literal = String::from("\"");
            for c in text.chars() {
                if c.is_ascii_alphanumeric() || c == ' ' {
                    literal.push(c);
                } else {
                    let _ = write!(literal, "\\U{:08x}", c as u32);
                }
            }
            literal.push('"');
            literal
        }
        Kind::Bytes => {
            let mut literal = String::from("b\"");
            for _ in 0..rng.below(7) {
                let byte = *rng.pick(&[0u8, 1, 0x41, 0x61, 0x7f, 0x80, 0xff]);
                let _ = write!(literal, "\\x{byte:02x}");
            }
            literal.push('"');
            literal
        }
    }
}

/// One random switch of `kind` (a random one for `None`), its reference and the subjects to
/// try, as Python source.
fn switch_function(rng: &mut Rng, index: usize, size: usize, kind: Option<Kind>, out: &mut String) {
    let kind = kind.unwrap_or_else(|| *rng.pick(&[Kind::Int, Kind::Str, Kind::Bytes]));
    let mut values: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut attempts = 0;
    while values.len() < size && attempts < size * 20 {
        attempts += 1;
        let literal = value(rng, kind);
        if seen.insert(literal.clone()) {
            values.push(literal);
        }
    }
    // Cases of one to three values, each body ending in fallthrough, `break` or a goto.
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    let mut rest = values.as_slice();
    while !rest.is_empty() {
        let take = (1 + rng.below(3) as usize).min(rest.len());
        let end = *rng.pick(&["", "break", "goto"]);
        cases.push((rest[..take].to_vec(), end));
        rest = &rest[take..];
    }
    let _ = writeln!(
        out,
        "@goto\ndef switch_{index}(s):\n    out = []\n    while switch *s:"
    );
    for (number, (values, end)) in cases.iter().enumerate() {
        let _ = writeln!(
            out,
            "        case[{}]\n        out.append({number})",
            values.join(", ")
        );
        match *end {
            "break" => out.push_str("        break\n"),
            "goto" => out.push_str("        goto .done\n"),
            _ => {}
        }
    }
    let _ = writeln!(
        out,
        "    out.append('default')\n    label .done\n    return out\n"
    );
    let types = match kind {
        Kind::Int => "(int, float)",
        Kind::Str => "(str,)",
        Kind::Bytes => "(bytes, bytearray)",
    };
    let _ = writeln!(
        out,
        "def reference_{index}(s):\n    start = None\n    if isinstance(s, {types}):"
    );
    for (number, (values, _)) in cases.iter().enumerate() {
        let tests: Vec<String> = values.iter().map(|v| format!("s == {v}")).collect();
        let _ = writeln!(
            out,
            "        if start is None and ({}):\n            start = {number}",
            tests.join(" or ")
        );
    }
    let ends: Vec<String> = cases.iter().map(|(_, end)| format!("{end:?}")).collect();
    let _ = writeln!(
        out,
        "    out = []\n    if start is not None:\n        for number, end in enumerate([{}][start:], start):\n            out.append(number)\n            if end == 'break':\n                break\n            if end == 'goto':\n                return out\n    out.append('default')\n    return out\n",
        ends.join(", ")
    );
    let others = match kind {
        Kind::Int => {
            "[0, 1, -1, True, False, 1.0, 2.5, float('nan'), None, '1', b'1', (1,), 10**40, -10**40]"
        }
        Kind::Str => "['', 'a', 'zz', '\\u00e9', 1, None, b'a', ('a',)]",
        Kind::Bytes => "[b'', b'A', bytearray(b'A'), b'\\xff', 'A', 0, None]",
    };
    let _ = writeln!(
        out,
        "checks.append((switch_{index}, reference_{index}, [{}] + {others}))\n",
        values.join(", ")
    );
}

fn property_program(seed: u64, programs: usize) -> String {
    let mut rng = Rng(seed);
    let mut out = String::from("from goto import goto, label, switch, case\nchecks = []\n\n");
    // Small sizes of a random kind, then the largest of each kind, then random ones.
    let small = [1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 64, 100, 257];
    let largest = [Kind::Int, Kind::Str, Kind::Bytes].map(|kind| (5000, Some(kind)));
    let fixed: Vec<(usize, Option<Kind>)> = small
        .into_iter()
        .map(|size| (size, None))
        .chain(largest)
        .collect();
    for index in 0..programs {
        let (size, kind) = match fixed.get(index) {
            Some(&planned) => planned,
            None => (1 + rng.below(300) as usize, None),
        };
        switch_function(&mut rng, index, size, kind, &mut out);
    }
    out.push_str(
        "count = 0\nfor switch_f, reference_f, subjects in checks:\n    for s in subjects:\n        got, want = switch_f(s), reference_f(s)\n        count += 1\n        if got != want:\n            print('MISMATCH', switch_f.__name__, repr(s), got, want)\nprint('checked', count)\n",
    );
    out
}

#[test]
fn switches_agree_with_if_chains() {
    let (seed, programs) = common::seed_and_size("GOTOPY_SWITCH", 24);
    let path = write("property.py", &property_program(seed, programs));
    for (target, output) in run_everywhere(&path) {
        assert_all_agree(seed, &path, &target, output);
    }
}

/// The property program ran and found no mismatch.
fn assert_all_agree(seed: u64, path: &std::path::Path, target: &str, output: Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{target}, seed {seed}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with("checked ") && stdout.lines().count() == 1,
        "{target}, seed {seed} ({}):\n{stdout}",
        path.display()
    );
    let checked: usize = stdout["checked ".len()..].trim().parse().unwrap();
    assert!(checked > 5000, "{target}: {checked}");
}

/// What both versions of the `switch_rules` program do with their functions.
const SWITCH_CALLS: &str = r#"
def drive(coroutine):
    yielded, value = [], None
    try:
        while True:
            yielded.append(coroutine.send(value))
            value = len(yielded)
    except StopIteration as stop:
        return stop.value, yielded

for n in [0, 1, 3, 10, 11, 12, None, "0", 1.0, True]:
    print(repr(n), classify(n))
print(calls)
for a, b in [("x", 1), ("x", 2), ("x", 3), ("y", 2), ("z", 0), ("w", 0), (1, 1)]:
    print(a, b, nested(a, b))
print(enter(1, False), enter(2, False), enter(1, True), enter(9, True))
print(list(numbers(7)))
print(drive(pick(b"a")), drive(pick(b"b")), drive(pick("a")))
"#;

#[test]
fn switch_rules() {
    assert_same_as_cpython(
        "switch_rules",
        &(r#"
from goto import goto, label, switch, case
calls = []
def subject(x):
    calls.append(x)
    return x

@goto
def classify(n):
    while switch *subject(n):
        case[0]
        return "zero"
        case[1, 2, 3]
        kind = "small"
        goto .done
        case[10]
        print("ten, falls through")
        case[11]
        kind = "ten or eleven"
        goto .done
    kind = "other"
    label .done
    return kind

@goto
def nested(a, b):
    out = []
    for i in range(3):
        with open(__file__) as f:
            try:
                while switch *a:
                    case["x"]
                    out.append("x")
                    while switch *b:
                        case[1]
                        out.append("x1")
                        break
                        case[2]
                        out.append(("x2 leaves", i))
                        goto .out
                    out.append("after inner")
                    case["y"]
                    out.append("y")
                    break
                    case["z"]
                    out.append("z")
                out.append("after outer")
            finally:
                out.append(("finally", i))
    out.append("loop done")
    label .out
    out.append(("closed", f.closed))
    return out

@goto
def enter(n, jump):
    out = []
    if jump:
        goto .inside
    while switch *n:
        case[1]
        out.append(1)
        label .inside
        out.append("inside")
        case[2]
        out.append(2)
    return out

@goto
def numbers(n):
    i = 0
    label .next
    while switch *(i % 3):
        case[0]
        yield "fizz"
        break
        case[1]
        yield i
    i += 1
    if i < n:
        goto .next

class Pause:
    def __await__(self):
        return (yield "paused")

@goto
async def pick(x):
    out = []
    label .again
    while switch *x:
        case[b"a"]
        out.append(await Pause())
        case[b"b"]
        out.append("b")
        if len(out) < 4:
            x = b"a"
            goto .again
        return out
    out.append(await Pause())
    return out

"#
        .to_owned()
            + SWITCH_CALLS),
        &(r#"
calls = []
def subject(x):
    calls.append(x)
    return x

def classify(n):
    s = subject(n)
    if isinstance(s, (int, float)) and s == 0:
        return "zero"
    if isinstance(s, (int, float)) and s in (1, 2, 3):
        return "small"
    if isinstance(s, (int, float)) and s == 10:
        print("ten, falls through")
        return "ten or eleven"
    if isinstance(s, (int, float)) and s == 11:
        return "ten or eleven"
    return "other"

def inner(b, out, i):
    if type(b) in (int, float) and b == 1:
        out.append("x1")
    elif type(b) in (int, float) and b == 2:
        out.append(("x2 leaves", i))
        return True
    return False

def nested(a, b):
    out = []
    for i in range(3):
        with open(__file__) as f:
            try:
                if type(a) is str and a == "x":
                    out.append("x")
                    if inner(b, out, i):
                        break
                    out.append("after inner")
                    out.append("y")
                elif type(a) is str and a == "y":
                    out.append("y")
                elif type(a) is str and a == "z":
                    out.append("z")
                out.append("after outer")
            finally:
                out.append(("finally", i))
    else:
        out.append("loop done")
    out.append(("closed", f.closed))
    return out

def enter(n, jump):
    out = []
    if jump:
        out.extend(["inside", 2])
    elif n == 1:
        out.extend([1, "inside", 2])
    elif n == 2:
        out.append(2)
    return out

def numbers(n):
    for i in range(n):
        if i % 3 == 0:
            yield "fizz"
        elif i % 3 == 1:
            yield i

class Pause:
    def __await__(self):
        return (yield "paused")

async def pick(x):
    out = []
    while True:
        if type(x) is bytes and x in (b"a", b"b"):
            if x == b"a":
                out.append(await Pause())
            out.append("b")
            if len(out) < 4:
                x = b"a"
                continue
            return out
        out.append(await Pause())
        return out

"#
        .to_owned()
            + SWITCH_CALLS),
    );
}

/// What both versions of the `computed_goto_rules` program share: a recording manager, and
/// the calls.
const COMPUTED_MANAGER: &str = r#"
log = []
class Managed:
    def __enter__(self):
        log.append("enter")
    def __exit__(self, *exc):
        log.append(("exit", exc[0]))
"#;
const COMPUTED_CALLS: &str = r#"
print(run([("add", 2), ("mul", 5), ("add", 1)]), log)
log.clear()
try:
    run([("div", 1)])
except ValueError as e:
    print("ValueError:", "run" in str(e), "'op_div'" in str(e), log)
"#;

#[test]
fn computed_goto_rules() {
    let with_goto = r#"
from goto import goto, label

@goto
def run(program):
    acc = pc = 0
    label .fetch
    if pc == len(program):
        return acc
    op, arg = program[pc]
    pc += 1
    for attempt in range(2):
        with Managed():
            try:
                raise KeyError(op)
            except KeyError:
                goto *("op_" + op)
    label .op_add
    acc += arg
    goto .fetch
    label .op_mul
    acc *= arg
    goto .fetch
"#;
    let structured = r#"
def run(program):
    acc = 0
    for op, arg in program:
        with Managed():
            try:
                raise KeyError(op)
            except KeyError:
                if op not in ("add", "mul"):
                    raise ValueError(f"{'op_' + op!r} in run")
        if op == "add":
            acc += arg
        else:
            acc *= arg
    return acc
"#;
    assert_same_as_cpython(
        "computed",
        &[COMPUTED_MANAGER, with_goto, COMPUTED_CALLS].concat(),
        &[COMPUTED_MANAGER, structured, COMPUTED_CALLS].concat(),
    );
}

/// The dispatch is a balanced search tree: over 1,024 cases, 1,023 distinct `<` pivots in a
/// tree of height 10 (so a value is found with at most 11 comparisons), on RustPython and on
/// every CPython.
#[test]
fn dispatch_is_a_balanced_search() {
    let mut source = String::from(
        "from goto import goto, switch, case\n@goto\ndef f(n):\n    while switch *n:\n",
    );
    for value in 0..1024 {
        let _ = writeln!(source, "        case[{value}]\n        return {value}");
    }
    source.push_str("    return None\n");
    let path = write("tree.py", &source);
    let output = Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .args(["dis", "--function", "f"])
        .arg(&path)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    let compares = listing.matches("COMPARE_OP").count();
    // A tree over n values has n - 1 `<` nodes and n `==` leaves.
    assert_eq!(compares, 2 * 1024 - 1, "{listing}");
    // Each `<` splits in halves: its constants are the tree's pivots, none repeated.
    let less: Vec<&str> = listing
        .lines()
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|pair| pair[1].contains("COMPARE_OP(Less)"))
        .map(|pair| pair[0])
        .collect();
    assert_eq!(less.len(), 1023);
    assert!(less[0].ends_with("LOAD_CONST(512)"), "{}", less[0]);
    let pivots: Vec<i64> = less
        .iter()
        .map(|line| {
            let constant = line.rsplit_once("LOAD_CONST(").map(|(_, rest)| rest);
            let number = constant.and_then(|rest| rest.strip_suffix(')'));
            number
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{line}"))
        })
        .collect();
    assert_eq!(search_height(&pivots), Some(10), "RustPython");
    // The same tree on every CPython, as its own `dis` reads it: the `<` comparisons with the
    // constants they compare against, and the `==` leaves.
    let shape = "import dis, sys, gotopy\n\
        code = gotopy.compile(open(sys.argv[1], 'rb').read(), sys.argv[1])\n\
        f = next(c for c in code.co_consts if getattr(c, 'co_name', '') == 'f')\n\
        ins = list(dis.get_instructions(f))\n\
        less = [ins[i - 1].argval for i, x in enumerate(ins) if x.opname == 'COMPARE_OP' and x.argval == '<']\n\
        equal = [x for x in ins if x.opname == 'COMPARE_OP' and x.argval == '==']\n\
        print(len(equal), *less)\n";
    for (version, python) in cpython::installed() {
        let output = cpython::run(
            "the tree's shape",
            Command::new(python).args(["-c", shape]).arg(&path),
        );
        let numbers: Vec<i64> = String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(numbers[0], 1024, "CPython {version}: `==` leaves");
        assert_eq!(numbers.len(), 1 + 1023, "CPython {version}: `<` pivots");
        assert_eq!(numbers[1], 512, "CPython {version}: the root");
        assert_eq!(search_height(&numbers[1..]), Some(10), "CPython {version}");
    }
    let path = write(
        "tree_run.py",
        &format!("{source}print([f(n) for n in (0, 511, 512, 1023, 1024, -1, None)])\n"),
    );
    for (target, output) in run_everywhere(&path) {
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "[0, 511, 512, 1023, None, None, None]\n",
            "{target}"
        );
    }
}

/// The height of the binary search tree whose pivots `pivots` lists in code order, where
/// each comparison comes before those of its subtrees (the dispatch jumps forward only), or
/// `None` when a pivot repeats. A new pivot's parent is whichever of its neighbours in value
/// order is deeper.
fn search_height(pivots: &[i64]) -> Option<usize> {
    let mut depths = std::collections::BTreeMap::new();
    for &pivot in pivots {
        let below = depths.range(..pivot).next_back().map_or(0, |(_, d)| *d);
        let above = depths.range(pivot + 1..).next().map_or(0, |(_, d)| *d);
        if depths.insert(pivot, 1 + below.max(above)).is_some() {
            return None;
        }
    }
    depths.values().copied().max()
}

/// Tracebacks from a case body and from the subject name their own lines.
#[test]
fn switch_keeps_line_numbers() {
    let path = write(
        "switch_lines.py",
        "from goto import goto, switch, case\n\
         @goto\n\
         def f(x):\n    \
             while switch *(1 // x):\n        \
                 case[1]\n        \
                 [][0]\n    \
             return 0\n\
         for x in (1, 0):\n    \
             try:\n        \
                 f(x)\n    \
             except Exception as e:\n        \
                 print(type(e).__name__, e.__traceback__.tb_next.tb_lineno)\n",
    );
    for (target, output) in run_everywhere(&path) {
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "IndexError 6\nZeroDivisionError 4\n",
            "{target}"
        );
    }
}
