//! `gotopy run` against CPython: each program is written twice, with goto and as the
//! equivalent structured code; the goto version run by gotopy in RustPython must print what
//! `python3` prints for the structured one, and run by `python -m gotopy run` on each of
//! CPython 3.11 to 3.15 what that same CPython prints for it. Also `sys.argv`, `SystemExit`
//! codes and tracebacks, and the programs `run -c`, `run -m` and `run -` name.

#[allow(dead_code)] // shared helpers; this file uses only some of them
mod common;
#[allow(dead_code)]
#[path = "common/cpython.rs"]
mod cpython;

use std::process::Command;

use common::{gotopy_run, output_with_stdin, write};

use cpython::{assert_same_everywhere as assert_same_as_cpython, run_everywhere};

#[test]
fn leaving_one_two_and_eleven_for_loops() {
    assert_same_as_cpython(
        "loops",
        r#"
from goto import goto, label
import sys

@goto
def first_pair(items, target):
    for a in items:
        for b in items:
            if a + b == target:
                goto .found
    return None
    label .found
    return (a, b)

@goto
def first_negative(items):
    for x in items:
        if x < 0:
            goto .out
    x = None
    label .out
    return x

@goto
def deep(limit):
    r = range(2)
    n = 0
    for a in r:
     for b in r:
      for c in r:
       for d in r:
        for e in r:
         for f in r:
          for g in r:
           for h in r:
            for i in r:
             for j in r:
              for k in r:
                n += 1
                if n == limit:
                    goto .done
    label .done
    return n

print(first_pair([1, 2, 3, 4], 7), first_pair([1], 5))
print(first_negative([3, -1, -2]), first_negative([1]))
print([deep(t) for t in (1, 700, 5000)])
# 100,000 jumps out of a loop leave nothing behind.
print(sum(first_negative([1, 2, -3]) for _ in range(100000)))
"#,
        r#"
def first_pair(items, target):
    for a in items:
        for b in items:
            if a + b == target:
                return (a, b)
    return None

def first_negative(items):
    for x in items:
        if x < 0:
            return x
    return None

def deep(limit):
    return min(limit, 2 ** 11)

print(first_pair([1, 2, 3, 4], 7), first_pair([1], 5))
print(first_negative([3, -1, -2]), first_negative([1]))
print([deep(t) for t in (1, 700, 5000)])
print(sum(first_negative([1, 2, -3]) for _ in range(100000)))
"#,
    );
}

#[test]
fn loops_built_from_labels_and_generators() {
    assert_same_as_cpython(
        "labels",
        r#"
from goto import goto, label

@goto
def collatz(n):
    steps = 0
    label .top
    if n == 1:
        return steps
    steps += 1
    if n % 2:
        n = 3 * n + 1
        goto .top
    n //= 2
    goto .top

@goto
def evens(limit):
    n = 0
    label .again
    if n >= limit:
        return
    yield n
    n += 2
    goto .again

print([collatz(n) for n in range(1, 30)])
print(list(evens(11)))
"#,
        r#"
def collatz(n):
    steps = 0
    while n != 1:
        steps += 1
        n = 3 * n + 1 if n % 2 else n // 2
    return steps

def evens(limit):
    n = 0
    while n < limit:
        yield n
        n += 2

print([collatz(n) for n in range(1, 30)])
print(list(evens(11)))
"#,
    );
}

#[test]
fn argv_exit_codes_and_tracebacks() {
    let path = write(
        "argv.py",
        "import sys, collections, itertools, math, re, time\nprint(sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n",
    );
    let output = gotopy_run(&path, &["3", "-x"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "['3', '-x']\n");
    assert_eq!(output.status.code(), Some(3));

    let path = write("boom.py", "def f():\n    return 1 / 0\n\nf()\n");
    let output = gotopy_run(&path, &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 2, in f"), "{stderr}");
    assert!(
        stderr.contains(&format!("File \"{}\", line 4", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("ZeroDivisionError"), "{stderr}");
}

#[test]
fn refused_programs_do_not_run() {
    let path = write(
        "refused.py",
        "from goto import goto, label\n@goto\ndef f(m):\n    try:\n        m()\n    except* ValueError:\n        goto .out\n    label .out\nprint('ran')\n",
    );
    let output = gotopy_run(&path, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("G014"));
}

#[test]
fn leaving_except_handlers() {
    assert_same_as_cpython(
        "handlers",
        r#"
from goto import goto, label
import sys

@goto
def parse(text):
    try:
        value = int(text)
    except ValueError as problem:
        goto .bad
    return value
    label .bad
    return ("bad", sys.exc_info()[0], "problem" in locals())

@goto
def nested(n):
    for i in range(n):
        try:
            raise KeyError(i)
        except KeyError:
            try:
                raise IndexError(i)
            except IndexError as inner:
                if i == 2:
                    goto .out
    return "finished"
    label .out
    return ("left at", i, sys.exc_info()[0])

print(parse("12"), parse("x"))
print(nested(1), nested(5))
# 100,000 jumps out of a handler leave no exception behind.
print(sum(parse("?")[2] for _ in range(100000)), sys.exc_info())
"#,
        r#"
import sys

def parse(text):
    try:
        value = int(text)
    except ValueError as problem:
        pass
    else:
        return value
    return ("bad", sys.exc_info()[0], "problem" in locals())

def nested(n):
    for i in range(n):
        try:
            raise KeyError(i)
        except KeyError:
            try:
                raise IndexError(i)
            except IndexError as inner:
                if i == 2:
                    break
    else:
        return "finished"
    return ("left at", i, sys.exc_info()[0])

print(parse("12"), parse("x"))
print(nested(1), nested(5))
print(sum(parse("?")[2] for _ in range(100000)), sys.exc_info())
"#,
    );
}

#[test]
fn leaving_with_bodies() {
    let manager = r#"
import sys
log = []
class Manager:
    def __init__(self, name, fail=False):
        self.name, self.fail = name, fail
    def __enter__(self):
        log.append("enter " + self.name)
        return self
    def __exit__(self, *exc):
        log.append(f"exit {self.name} {exc[:2]}")
        if self.fail:
            raise RuntimeError("exit of " + self.name)
        return False
"#;
    assert_same_as_cpython(
        "with",
        &format!(
            r#"{manager}
from goto import goto, label

@goto
def leave(fail):
    try:
        with Manager("outer"):
            for i in range(3):
                with Manager("inner", fail) as m:
                    if i == 1:
                        goto .out
    except RuntimeError as e:
        log.append("caught " + str(e))
        return "caught"
    return "never"
    label .out
    return "left"

@goto
def count():
    n = 0
    label .top
    with Manager("m"):
        n += 1
        if n < 100000:
            goto .top
    return n

@goto
def pair():
    with Manager("a") as a, Manager("b") as b:
        for i in range(2):
            with Manager(f"c{{i}}"):
                if i == 1:
                    goto .out
    label .out
    return "pair"

print(leave(False), leave(True), pair())
print(log)
log.clear()
print(count(), len(log), log[-1])
"#
        ),
        &format!(
            r#"{manager}
def pair():
    with Manager("a") as a, Manager("b") as b:
        for i in range(2):
            with Manager(f"c{{i}}"):
                if i == 1:
                    break
    return "pair"

def leave(fail):
    try:
        with Manager("outer"):
            for i in range(3):
                with Manager("inner", fail) as m:
                    if i == 1:
                        break
            else:
                return "never"
    except RuntimeError as e:
        log.append("caught " + str(e))
        return "caught"
    return "left"

def count():
    n = 0
    while True:
        with Manager("m"):
            n += 1
            if n < 100000:
                continue
        return n

print(leave(False), leave(True), pair())
print(log)
log.clear()
print(count(), len(log), log[-1])
"#
        ),
    );
}

/// Jumps across more than 65,536 code units need two `EXTENDED_ARG` prefixes, on RustPython
/// and on every CPython.
#[test]
fn long_jumps_both_ways() {
    let filler = "        x += 1\n".repeat(40_000);
    let program = format!(
        "from goto import goto, label\n\
         @goto\n\
         def f(n):\n\
         \x20   x = 0\n\
         \x20   label .top\n\
         \x20   if n > 0:\n\
         \x20       n -= 1\n\
         \x20       goto .end\n\
         {filler}\
         \x20       goto .top\n\
         \x20   label .end\n\
         \x20   if n > 0:\n\
         \x20       goto .top\n\
         \x20   return x\n\
         print(f(3), f(0))\n"
    );
    let path = write("long.py", &program);
    let listing = Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .args(["dis", "--function", "f"])
        .arg(&path)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    let longest = listing
        .lines()
        .filter_map(|line| line.split_once("JUMP_FORWARD -> "))
        .filter_map(|(_, target)| target.trim().parse::<usize>().ok())
        .max()
        .expect("a forward goto");
    assert!(longest > 65_536, "the goto jumps only to {longest}");
    let output = gotopy_run(&path, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Every goto skips the filler: x stays 0.
    assert_eq!(String::from_utf8_lossy(&output.stdout), "0 0\n");
    // On CPython: the longest jump of the rewritten `f`, in code units, as `dis` reads it,
    // and what the program prints.
    let longest_jump = "import dis, sys, gotopy\n\
        code = gotopy.compile(open(sys.argv[1], 'rb').read(), sys.argv[1])\n\
        f = next(c for c in code.co_consts if getattr(c, 'co_name', '') == 'f')\n\
        jumps = set(dis.hasjrel) | set(getattr(dis, 'hasjabs', []))\n\
        print(max(abs(i.argval - i.offset) // 2 for i in dis.get_instructions(f)\n\
                  if i.opcode in jumps))\n";
    for (version, python) in cpython::installed() {
        let distance = cpython::run(
            "the longest jump",
            Command::new(python).args(["-c", longest_jump]).arg(&path),
        );
        let distance: usize = String::from_utf8_lossy(&distance.stdout)
            .trim()
            .parse()
            .unwrap();
        assert!(distance > 65_536, "CPython {version}: {distance}");
        let output = cpython::run(
            "python -m gotopy run",
            Command::new(python)
                .args(["-m", "gotopy", "run"])
                .arg(&path),
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "0 0\n",
            "CPython {version}"
        );
    }
}

/// Rewriting keeps everything else about functions: names, defaults, keyword-only defaults,
/// docstrings, closures, argument counts, variable names, first lines and method kinds.
/// (`co_flags` is left out: RustPython sets flags CPython does not.)
#[test]
fn rewritten_functions_keep_their_attributes() {
    let body = |marker: &str, target: &str| {
        format!(
            r#"
import inspect
def make(k):
    @goto
    def inner(a, b=2, *args, c=3, d, **kw):
        """Adds things."""
        {marker}
        {target}
        return a + b + c + d + k
    return inner

class C:
    @goto
    @staticmethod
    def s(x=1):
        {marker}
        {target}
        return x
    @classmethod
    @goto
    def c(cls, y=2):
        {marker}
        {target}
        return cls.__name__, y

@goto
def gen(n):
    "Counts."
    {marker}
    {target}
    yield from range(n)

f = make(10)
for g in (f, C.s, C.c, gen):
    code = g.__code__
    print(g.__name__, g.__qualname__, g.__doc__, g.__defaults__, g.__kwdefaults__,
          code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount,
          code.co_varnames, code.co_freevars, code.co_firstlineno)
print(f(1, d=4), [c.cell_contents for c in f.__closure__], C.s(), C.c(), list(gen(3)),
      inspect.isgeneratorfunction(gen))
"#
        )
    };
    let with_goto = format!(
        "from goto import goto, label\n{}",
        body("goto .go", "label .go")
    );
    let plain = format!("goto = lambda f: f\n{}", body("pass", "pass"));
    assert_same_as_cpython("attributes", &with_goto, &plain);
}

#[test]
fn leaving_try_finally() {
    assert_same_as_cpython(
        "finally",
        r#"
from goto import goto, label
import sys
log = []

@goto
def nested(n):
    try:
        for i in range(n):
            try:
                with open(__file__) as f:
                    try:
                        if i == 2:
                            goto .out
                    finally:
                        log.append(("innermost", i, f.closed))
            finally:
                log.append(("inner", i, f.closed))
    finally:
        log.append(("outer", n))
    return "finished"
    label .out
    return ("left at", i, f.closed)

@goto
def finally_return_wins():
    try:
        goto .out
    finally:
        return "finally won"
    label .out
    return "goto won"

@goto
def finally_raise_wins():
    try:
        try:
            goto .out
        finally:
            raise KeyError("from finally")
    except KeyError as e:
        return "caught " + str(e)
    label .out
    return "goto won"

@goto
def finally_break_wins():
    for i in range(3):
        try:
            goto .out
        finally:
            log.append(("break at", i))
            break
    return "break won"
    label .out
    return "goto won"

@goto
def in_handler(x):
    try:
        try:
            1 / x
        except ZeroDivisionError as e:
            goto .out
        else:
            goto .out
    finally:
        log.append(("cleanup", x, sys.exc_info()[0]))
    return "not reached"
    label .out
    return ("out", x, sys.exc_info()[0], "e" in locals())

@goto
def retry(limit):
    cleanups = attempt = 0
    label .again
    attempt += 1
    try:
        if attempt < limit:
            goto .again
    finally:
        cleanups += 1
    return attempt, cleanups

@goto
def within_finally(resources):
    try:
        seen = []
    finally:
        i = 0
        label .next
        if i < len(resources):
            seen.append(resources[i])
            i += 1
            goto .next
    return seen

print(nested(1), nested(5))
print(finally_return_wins(), finally_raise_wins(), finally_break_wins())
print(in_handler(0), in_handler(1))
print(log)
log.clear()
# 100,000 jumps out of a try/finally: the finally body runs each time, nothing is left.
print(retry(100000), sys.exc_info())
print(within_finally(["a", "b"]), within_finally([]))
"#,
        r#"
import sys
log = []

def nested(n):
    try:
        for i in range(n):
            try:
                with open(__file__) as f:
                    try:
                        if i == 2:
                            break
                    finally:
                        log.append(("innermost", i, f.closed))
            finally:
                log.append(("inner", i, f.closed))
            if i == 2:
                break
        else:
            return "finished"
    finally:
        log.append(("outer", n))
    return ("left at", i, f.closed)

def finally_return_wins():
    try:
        pass
    finally:
        return "finally won"

def finally_raise_wins():
    try:
        try:
            pass
        finally:
            raise KeyError("from finally")
    except KeyError as e:
        return "caught " + str(e)

def finally_break_wins():
    for i in range(3):
        try:
            pass
        finally:
            log.append(("break at", i))
            break
    return "break won"

def in_handler(x):
    try:
        try:
            1 / x
        except ZeroDivisionError as e:
            pass
    finally:
        log.append(("cleanup", x, sys.exc_info()[0]))
    return ("out", x, sys.exc_info()[0], "e" in locals())

def retry(limit):
    cleanups = attempt = 0
    while True:
        attempt += 1
        try:
            if attempt < limit:
                continue
        finally:
            cleanups += 1
        return attempt, cleanups

def within_finally(resources):
    try:
        seen = []
    finally:
        i = 0
        while i < len(resources):
            seen.append(resources[i])
            i += 1
    return seen

print(nested(1), nested(5))
print(finally_return_wins(), finally_raise_wins(), finally_break_wins())
print(in_handler(0), in_handler(1))
print(log)
log.clear()
print(retry(100000), sys.exc_info())
print(within_finally(["a", "b"]), within_finally([]))
"#,
    );
}

#[test]
fn coroutines_and_async_generators() {
    let helpers = r#"
log = []

class Yielder:
    def __await__(self):
        log.append("suspend")
        yield "tick"

class Manager:
    def __init__(self, name):
        self.name = name
    async def __aenter__(self):
        log.append("aenter " + self.name)
        await Yielder()
        return self
    async def __aexit__(self, *exc):
        log.append(f"aexit {self.name} {exc[:2]}")
        await Yielder()
        return False

class Counter:
    def __init__(self, n):
        self.i, self.n = 0, n
    def __aiter__(self):
        return self
    async def __anext__(self):
        await Yielder()
        if self.i >= self.n:
            raise StopAsyncIteration
        self.i += 1
        return self.i

def drive(coroutine):
    ticks = 0
    try:
        while True:
            coroutine.send(None)
            ticks += 1
    except StopIteration as stop:
        return stop.value, ticks

async def collect(n):
    return [v async for v in numbers(n)]
"#;
    let calls = r#"
print(drive(total(2)), drive(total(5)))
print(drive(collect(3)))
print(log)
log.clear()
# 20,000 jumps out of an `async with` leave nothing behind.
print(drive(collect(20000))[1], len(log))
# An exception thrown in while `__aexit__` is suspended reaches the enclosing handler.
c = leave()
c.send(None)
c.send(None)
try:
    c.throw(ValueError("thrown"))
except StopIteration as stop:
    print(stop.value, log[-2:])
"#;
    assert_same_as_cpython(
        "coroutines",
        &format!(
            r#"from goto import goto, label
{helpers}
@goto
async def total(n):
    total = 0
    async with Manager("outer"):
        async for x in Counter(n):
            async with Manager(f"inner{{x}}"):
                for y in range(3):
                    total += x * y
                    if total > 10:
                        goto .out
    label .out
    await Yielder()
    return total

@goto
async def numbers(n):
    i = 0
    label .top
    async with Manager(f"g{{i}}"):
        yield i
        i += 1
        if i < n:
            goto .top

@goto
async def leave():
    try:
        async with Manager("t"):
            goto .out
    except ValueError as e:
        return "caught " + str(e)
    label .out
    return "left"
{calls}"#
        ),
        &format!(
            r#"{helpers}
async def total(n):
    total = 0
    async with Manager("outer"):
        done = False
        async for x in Counter(n):
            async with Manager(f"inner{{x}}"):
                for y in range(3):
                    total += x * y
                    if total > 10:
                        done = True
                        break
            if done:
                break
    await Yielder()
    return total

async def numbers(n):
    i = 0
    while True:
        async with Manager(f"g{{i}}"):
            yield i
            i += 1
            if i < n:
                continue
        break

async def leave():
    try:
        async with Manager("t"):
            pass
    except ValueError as e:
        return "caught " + str(e)
    return "left"
{calls}"#
        ),
    );
}

/// Tracebacks from rewritten code name the true lines: in a finally body run by a goto, and
/// after a label reached by a backward goto, on RustPython and on every CPython.
#[test]
fn tracebacks_in_rewritten_code_point_at_source_lines() {
    let path = write(
        "trace.py",
        "from goto import goto, label\n\
         @goto\n\
         def leave(x):\n    \
             try:\n        \
                 goto .out\n    \
             finally:\n        \
                 1 / x\n    \
             label .out\n\
         @goto\n\
         def again(items):\n    \
             label .top\n    \
             items.pop()\n    \
             goto .top\n\
         try:\n    \
             leave(0)\n\
         except ZeroDivisionError as e:\n    \
             print(e.__traceback__.tb_next.tb_lineno)\n\
         again([1, 2])\n",
    );
    for (target, output) in run_everywhere(&path) {
        assert_eq!(String::from_utf8_lossy(&output.stdout), "7\n", "{target}");
        assert_eq!(output.status.code(), Some(1), "{target}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("line 18, in <module>"),
            "{target}: {stderr}"
        );
        assert!(stderr.contains("line 12, in again"), "{target}: {stderr}");
        assert!(stderr.contains("IndexError"), "{target}: {stderr}");
    }
}

/// A goto past an assignment leaves the local unbound at the label: the error names the
/// statement that reads it, not the label before it, on RustPython (where the label's line
/// event rides on the next instruction only when that one cannot fail) and on every CPython.
#[test]
fn an_unbound_local_after_a_label_is_reported_at_the_statement_reading_it() {
    let path = write(
        "unbound.py",
        "from goto import goto, label\n\
         @goto\n\
         def skip(flag):\n    \
             if flag:\n        \
                 goto .use\n    \
             x = 1\n    \
             label .use\n    \
             return x\n\
         print(skip(False))\n\
         try:\n    \
             skip(True)\n\
         except UnboundLocalError as e:\n    \
             print(e.__traceback__.tb_next.tb_lineno)\n",
    );
    for (target, output) in run_everywhere(&path) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "1\n8\n",
            "{target}: {stderr}"
        );
    }
}

/// A computed goto that leaves a `for` loop to reach more labels than a search in line
/// takes calls a search function (file `<gotopy>`). What its comparisons raise is no match
/// (`computed_gotos_leaving_loops_over_many_labels.py`); an interrupt during the call, here
/// raised by a tracer at its `call` event, goes on from the goto as from any call, once:
/// taken for no match, it became the goto's `ValueError` (which a program's own `except
/// ValueError` swallows), or, with the tracer still set, a second call for its message.
#[test]
fn an_interrupt_in_the_search_function_goes_on_from_the_goto() {
    let mut source = String::from(
        "import sys\nfrom goto import goto, label\n@goto\ndef pick(name):\n    \
         for _ in range(1):\n        goto *name\n",
    );
    for k in 0..70 {
        source.push_str(&format!("    label .l{k}\n    return {k}\n"));
    }
    source.push_str(
        "calls = []\n\
         def interrupting(frame, event, arg):\n    \
             if event == 'call' and frame.f_code.co_filename == '<gotopy>':\n        \
                 calls.append(frame.f_code.co_name)\n        \
                 raise KeyboardInterrupt\n\
         print(pick('l42'))\n\
         sys.settrace(interrupting)\n\
         try:\n    \
             pick('l42')\n\
         except KeyboardInterrupt:\n    \
             print('interrupted', calls)\n\
         finally:\n    \
             sys.settrace(None)\n\
         print(pick('l7'))\n",
    );
    let path = write("interrupted.py", &source);
    for (target, output) in run_everywhere(&path) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "42\ninterrupted ['search']\n7\n",
            "{target}: {stderr}"
        );
    }
}

/// A tracer sees every statement that runs, labels and cases included (a line event where
/// control reaches them, as for `pass`), in the same order on RustPython and on every
/// CPython, under `sys.settrace` and under `sys.monitoring`: what a debugger steps through
/// and coverage counts.
#[test]
fn line_events_name_labels_and_cases() {
    let path = write(
        "lines.py",
        "from goto import goto, label, switch, case\n\
         import sys\n\
         @goto\n\
         def total(n):\n    \
             s = 0\n    \
             label .loop\n    \
             if n <= 0:\n        \
                 return s\n    \
             s += n; n -= 1\n    \
             goto .loop\n\
         @goto\n\
         def pick(n):\n    \
             while switch *n:\n        \
                 case[0]\n        \
                 return 'zero'\n        \
                 case[1]\n        \
                 n = 'one'\n    \
             return n\n\
         lines = []\n\
         def tracer(frame, event, arg):\n    \
             if event == 'line' and frame.f_code.co_name in ('total', 'pick'):\n        \
                 lines.append(frame.f_lineno)\n    \
             return tracer\n\
         sys.settrace(tracer)\n\
         total(2); pick(0); pick(1); pick(2)\n\
         sys.settrace(None)\n\
         print(lines)\n\
         if hasattr(sys, 'monitoring'):\n    \
             lines = []\n    \
             def on_line(code, line):\n        \
                 if code.co_name in ('total', 'pick'):\n            \
                     lines.append(line)\n    \
             sys.monitoring.use_tool_id(3, 'test')\n    \
             sys.monitoring.register_callback(3, sys.monitoring.events.LINE, on_line)\n    \
             sys.monitoring.set_events(3, sys.monitoring.events.LINE)\n    \
             total(2); pick(0); pick(1); pick(2)\n    \
             sys.monitoring.set_events(3, 0)\n    \
             print(lines)\n",
    );
    // Lines 6 and 14/16 are the label and the cases; the same again under `sys.monitoring`
    // (3.12 and later, and RustPython).
    let lines = "[5, 6, 7, 9, 10, 6, 7, 9, 10, 6, 7, 8, 13, 14, 15, 13, 16, 17, 18, 13, 18]\n";
    for (target, output) in run_everywhere(&path) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let expected = if target == "CPython 3.11" {
            lines.to_owned()
        } else {
            lines.repeat(2)
        };
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{target}: {stderr}"
        );
    }
}

/// `gotopy` run in `dir`, colour off, UTF-8 output.
fn gotopy_in(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gotopy"));
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("PYTHONIOENCODING", "utf-8");
    command
}

/// `python3` run in `dir`, writing no bytecode cache beside the scratch files.
fn python3_in(dir: &std::path::Path) -> Command {
    let mut command = Command::new("python3");
    command
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONIOENCODING", "utf-8");
    command
}

/// A fresh directory holding `files` (paths relative to it, parents created).
fn tree(name: &str, files: &[(&str, &str)]) -> common::Scratch {
    let dir = common::Scratch::dir(&format!("run-{name}"));
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Both ran without error and printed the same, non-empty output.
fn assert_same_output(ours: &std::process::Output, python: &std::process::Output) {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    assert!(python.status.success(), "{}", text(&python.stderr));
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout), text(&python.stdout));
    assert!(!python.stdout.is_empty());
}

/// A package whose modules use goto: `search` (imported through the import hook: its label
/// follows a `return`, so the decorator alone would refuse it), `mod` and `__main__` (run
/// with `-m`); and the same package written without goto for python3.
fn packages() -> (common::Scratch, common::Scratch) {
    const SEARCH: &str = "\
from goto import goto, label

@goto
def find(grid, target):
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value == target:
                goto .found
    return None
    label .found
    return (i, j)
";
    const SEARCH_PLAIN: &str = "\
def find(grid, target):
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value == target:
                return (i, j)
    return None
";
    const MAIN: &str = "\
import sys
from goto import goto, label
from pkg.search import find

@goto
def countdown(n):
    out = []
    label .top
    out.append(n)
    n -= 1
    if n:
        goto .top
    return out

print(__name__, __package__, __spec__.name, sys.argv[1:])
print(find([[1, 2], [3, 4]], 3), find([[1]], 5), countdown(3))
";
    const MAIN_PLAIN: &str = "\
import sys
from pkg.search import find

def countdown(n):
    return list(range(n, 0, -1))

print(__name__, __package__, __spec__.name, sys.argv[1:])
print(find([[1, 2], [3, 4]], 3), find([[1]], 5), countdown(3))
";
    let init = "print('init', __name__)\n";
    let with_goto = tree(
        "package-goto",
        &[
            ("pkg/__init__.py", init),
            ("pkg/search.py", SEARCH),
            ("pkg/mod.py", MAIN),
            ("pkg/__main__.py", MAIN),
        ],
    );
    let plain = tree(
        "package-plain",
        &[
            ("pkg/__init__.py", init),
            ("pkg/search.py", SEARCH_PLAIN),
            ("pkg/mod.py", MAIN_PLAIN),
            ("pkg/__main__.py", MAIN_PLAIN),
        ],
    );
    (with_goto, plain)
}

/// `run -m pkg.mod` runs a module found on `sys.path` as `__main__`, compiled with goto, after
/// importing its package; `-m pkg` runs `pkg/__main__.py`. Both print what python3 prints
/// for the same package written without goto.
#[test]
fn modules_run_with_dash_m_as_under_python() {
    let (with_goto, plain) = packages();
    for module in ["pkg.mod", "pkg"] {
        let ours = gotopy_in(&with_goto)
            .args(["run", "-m", module, "a", "-b"])
            .output()
            .unwrap();
        let python = python3_in(&plain)
            .args(["-m", module, "a", "-b"])
            .output()
            .unwrap();
        assert_same_output(&ours, &python);
    }
}

/// `run -c CODE` compiles CODE with goto: it prints what python3 prints for the code
/// written without goto.
#[test]
fn code_run_with_dash_c_as_under_python() {
    let with_goto = "\
from goto import goto, label
import sys

@goto
def total(n):
    result = 0
    label .again
    result += n
    n -= 1
    if n:
        goto .again
    return result

print(total(int(sys.argv[1])), sys.argv[2:])
";
    let plain = "import sys\nprint(sum(range(int(sys.argv[1]) + 1)), sys.argv[2:])\n";
    let dir = tree("dash-c", &[]);
    let ours = gotopy_in(&dir)
        .args(["run", "-c", with_goto, "4", "-x"])
        .output()
        .unwrap();
    let python = python3_in(&dir)
        .args(["-c", plain, "4", "-x"])
        .output()
        .unwrap();
    assert_same_output(&ours, &python);
    assert_eq!(String::from_utf8_lossy(&ours.stdout), "10 ['-x']\n");
}

/// `run -` reads the program from standard input and compiles it with goto.
#[test]
fn program_from_standard_input_as_under_python() {
    let with_goto = "\
from goto import goto, label

@goto
def first_negative(items):
    for item in items:
        if item < 0:
            goto .found
    return None
    label .found
    return item

print(first_negative([3, -1, -2]), first_negative([]))
";
    let plain = "print(next((i for i in [3, -1, -2] if i < 0), None), None)\n";
    let dir = tree("dash", &[]);
    let ours = output_with_stdin(gotopy_in(&dir).args(["run", "-"]), with_goto.as_bytes());
    let python = output_with_stdin(python3_in(&dir).arg("-"), plain.as_bytes());
    assert_same_output(&ours, &python);
}

/// A main module named by `-m` that gotopy refuses does not run: its diagnostics are shown
/// as `run FILE` shows them (errors only), exit status 1; its package was imported first,
/// as python imports it.
#[test]
fn refused_modules_do_not_run() {
    let dir = tree(
        "refused-module",
        &[
            ("pkg/__init__.py", "print('init')\n"),
            (
                "pkg/bad.py",
                "from goto import goto, label\n@goto\ndef f():\n    goto .nowhere\n    label .unused\nprint('ran')\n",
            ),
        ],
    );
    let output = gotopy_in(&dir)
        .args(["run", "-m", "pkg.bad"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "init\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error[G002]"), "{stderr}");
    assert!(stderr.contains("pkg/bad.py:4:11"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `gotopy run` takes from the environment what `python` takes: `PYTHONPATH`'s directories
/// (relative, repeated, empty, with `..`) on `sys.path` after the script's, in `python3`'s
/// order and spelling, and a module imported from one of them; `PYTHONSAFEPATH` leaves the
/// script's directory off; `PYTHONDONTWRITEBYTECODE` sets `sys.dont_write_bytecode`.
#[test]
fn environment_variables_as_under_python() {
    let dir = tree(
        "environment",
        &[
            ("lib/helpers.py", "def twice(n):\n    return 2 * n\n"),
            ("other/nothing.py", ""),
            (
                "main.py",
                "\
import sys
import helpers
outside = [p for p in sys.path if not p.startswith((sys.prefix, sys.base_prefix))]
print(outside, helpers.twice(21), sys.dont_write_bytecode, sys.flags.safe_path)
",
            ),
        ],
    );
    let path = format!("lib::other/../lib:{}/other:", dir.display());
    let run = |mut command: Command, safe: &str| {
        command
            .env("PYTHONPATH", &path)
            .env("PYTHONSAFEPATH", safe)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap()
    };
    for safe in ["", "1"] {
        let mut ours = gotopy_in(&dir);
        ours.args(["run", "main.py"]);
        let mut python = python3_in(&dir);
        python.arg("main.py");
        let (ours, python) = (run(ours, safe), run(python, safe));
        assert_same_output(&ours, &python);
        let shown = String::from_utf8_lossy(&python.stdout).into_owned();
        let lib = dir.join("lib").display().to_string();
        assert!(shown.contains(&format!("'{lib}'")), "{shown}");
        assert!(shown.contains(&format!("'{}'", dir.display())), "{shown}");
    }
}

/// The markers are objects to Python's own protocols, as on CPython: `hasattr` and `copy`
/// ask for dunder names and get `AttributeError` (a marker's own name that runs is an error
/// that says so); the structured program shows what plain objects answer.
#[test]
fn markers_answer_pythons_protocols_as_plain_objects_do() {
    assert_same_as_cpython(
        "protocols",
        r#"
import copy
from goto import goto, label

print(hasattr(goto, "__wrapped__"), type(copy.copy(label)) is type(label))
try:
    label.x
except RuntimeError as error:
    print("ran:", "`label .x` ran as plain Python" in str(error))
"#,
        r#"
import copy

class Marker:
    pass

goto, label = Marker(), Marker()
print(hasattr(goto, "__wrapped__"), type(copy.copy(label)) is type(label))
print("ran:", True)
"#,
    );
}
