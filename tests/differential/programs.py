"""Random goto programs and an independent reference interpreter for them (issue 6).

`python3 programs.py SEED COUNT OUT_DIR [without-source]` writes `OUT_DIR/programs.json`,
the sources of COUNT random functions `f0`, `f1`, ... using goto in a small subset of
Python, `invalid.json` (the codes each rule-breaking one must be rejected with),
`driver.py` (compiles and runs them under `gotopy run`), `module.py` (the valid ones in one
module that calls them, for `gotopy translate`) and `expected.txt`, one JSON line
per call: its trace and outcome as this file's reference interpreter computes them. The
interpreter walks the syntax tree (`ast`) and gives goto its SPEC meaning directly: a goto
unwinds like an exception until it reaches the block list that can enter the label,
running each `finally` body and `__exit__` it passes, then resumes at the label (entering
`if`, `while` and `try` bodies on the way). It shares nothing with gotopy's lowering.

The subset: integer variables, `t.append(k)` to record a trace, `if`/`else`, `while` over a
counter that never resets (so loops are bounded), `for` over `range(2)`, `with R(k)` (a
manager recording enter and exit; by its `k` and the trace's length, one raises `E` as it
exits now and then, another swallows an `E`), `try`/`except E`/`finally`, `raise E(k)`, `break`,
`continue`, `return` (none of them leaving a `finally` body), `while switch` over small
integer cases with fallthrough, labels, and gotos guarded by a fuel counter (so every
program ends). One goto in six is computed, `goto *('La' if x % 2 else 'Lb')`, where no label it
may reach is past the end of a `try` statement with `finally` around it (gotopy refuses
that); not in the programs without switches, those of the decorator without source.
Switches nest, often: inside a switch body the generator favours further switches, loops and
`with` blocks (which hold switches in turn), one level deeper than elsewhere. Subjects vary
(`x % m`, `(x // 3) % m`, a counter `c`, an enclosing loop's counter or variable, `x - k`
with negative cases, a `bool`, sometimes `None`) so an inner switch dispatches differently
from the outer one. Case bodies may start with a label (gotos enter inner and outer case
bodies) and end in fallthrough, `break`, `return`, or a goto to the label just after an
enclosing switch (past its default code) or loop (what `break` cannot do from inside a
switch, where it leaves only the switch); such forward gotos also occur anywhere inside the
switch or loop they leave, outside `finally` bodies. One block in twelve holds a ladder: a
chain of conditional gotos (`if x % 3 == 1: goto .L4`), a default by goto or by falling into
the first block, and the blocks in any order, each but the last going to a label after
them all (a Fortran arithmetic IF or computed GO TO, ported line for line); one in twelve a
loop that tests at its end, a label and a conditional goto back to it, bounded by `c`; one
in twelve a loop that tests at its head, a label, an `if` on `c` whose body leaves the loop
(a goto past it, `return` or `break`), the body and a goto back.
Gotos only target labels SPEC section 4 allows from where they are, except in one program in
twelve, where one goto enters a frame or leaves a finally body on purpose: gotopy must reject
it with the matching code (`invalid.json`).
"""

import ast
import hashlib
import json
import os
import random
import sys

PRELUDE = '''from goto import goto, label, switch, case


class E(Exception):
    pass


class R:
    def __init__(self, t, k):
        self.t, self.k = t, k

    def __enter__(self):
        self.t.append(("enter", self.k))

    def __exit__(self, kind, value, tb):
        self.t.append(("exit", self.k, kind.__name__ if kind else None))
        # Some managers raise on the way out, now and then; some swallow an E: a jump that
        # leaves them ends there, and the code after the statement runs.
        if self.k % 4 == 1 and len(self.t) % 3 == 0:
            raise E(1000 + self.k)
        return kind is E and self.k % 3 == 2

'''

# --- Generation ---------------------------------------------------------------------------


class Generator:
    def __init__(self, rng, switches=True, finally_bodies=True):
        self.with_switches = switches
        self.with_finally = finally_bodies
        self.rng = rng
        self.ids = 0
        self.labels = []  # (name, frames, try bodies)
        self.gotos = []  # (placeholder, frames, try bodies)
        self.frames = []  # ids of enclosing frames; finally frames as ("finally", id)
        # The bodies of `try` statements with `finally` around (not frames: they may be
        # entered), which no computed goto leaves: gotopy refuses that.
        self.tries = []
        self.breakable = []  # "loop" or "switch", innermost last
        self.counters = 0
        self.in_finally = 0
        self.switches = 0  # enclosing switches
        self.nested = 0  # switches generated inside another switch's body
        # Labels just after enclosing switches and loops that gotos from inside may target
        # (leaving a switch past its default code, leaving a loop from inside a switch, where
        # `break` would only leave the switch): [name, used], innermost last. Reset inside a
        # finally body, as a goto may not leave one.
        self.exits = []
        self.loop_vars = []  # names usable as switch subjects: enclosing `for` variables
        self.loop_counters = []  # and enclosing `while` counters

    def fresh(self):
        self.ids += 1
        return self.ids

    def block(self, depth, size=None):
        size = size if size is not None else self.rng.randint(1, 4)
        statements = [self.statement(depth) for _ in range(size)]
        r = self.rng.random()
        if r < 1 / 4:
            shape = self.ladder() if r < 1 / 12 else self.repeat() if r < 1 / 6 else self.until()
            statements.insert(self.rng.randint(0, size), shape)
        return statements

    def repeat(self):
        """A loop made of a label and a conditional goto back to it at its end (a BASIC
        port's loop), bounded by the counter `c`, sometimes with a goto back to the label
        from inside (which translate writes as `while True:`, `continue` and `break`)."""
        rng = self.rng
        name = f"L{len(self.labels)}"
        self.labels.append((name, list(self.frames), list(self.tries)))
        m = rng.randint(2, 4)
        body = [["label", name], ["assign", "c = c + 1"], ["trace", self.fresh()]]
        if rng.random() < 0.4:
            body.insert(2, ["exit", name, f"c % {m} == 1"])
        body.append(["exit", name, f"c % {m} != 0"])
        return ["seq", body]

    def until(self):
        """A loop whose head leaves it: a label, an `if` on the counter `c` whose body goes
        past the loop (or returns, or breaks the loop around it), the body, and a goto back
        (which translate writes as `while not (TEST):` with the exit after it), sometimes
        with a goto back from inside (`continue`)."""
        rng = self.rng
        head, out = f"L{len(self.labels)}", f"L{len(self.labels) + 1}"
        for name in (head, out):
            self.labels.append((name, list(self.frames), list(self.tries)))
        ways = [["exit", out, None]]
        if not self.in_finally:
            ways.append(["return", self.fresh(), None])
        if self.breakable:
            ways.append(["break", None])
        m = rng.randint(2, 4)
        leave = [["trace", self.fresh()], rng.choice(ways)]
        body = [["label", head], ["if", f"c % {m} == {rng.randint(0, m - 1)}", leave, []],
                ["assign", "c = c + 1"], ["trace", self.fresh()]]
        if rng.random() < 0.4:
            again = [["trace", self.fresh()], ["exit", head, None]]
            body.append(["if", f"x % 2 == {rng.randint(0, 1)}", again, []])
        body += [["exit", head, None], ["label", out]]
        return ["seq", body]

    def ladder(self):
        """A chain of conditional gotos to blocks that meet at a label after them, as a
        Fortran arithmetic IF or computed GO TO ported line for line (which translate writes
        as one `if` with its `elif`s): a default by goto or by falling into the first block
        in the source, which may be a branch's too; the blocks in any order, each but the
        last going to the end."""
        rng = self.rng
        names = []
        for _ in range(rng.randint(3, 5)):
            names.append(f"L{len(self.labels)}")
            self.labels.append((names[-1], list(self.frames), list(self.tries)))
        blocks, end = names[:-1], names[-1]
        way = rng.random()
        branched = blocks if way >= 0.7 else blocks[:-1]
        chain = [["exit", name, f"x % {rng.randint(2, 5)} == {rng.randint(0, 1)}"] for name in branched]
        order = list(blocks)
        rng.shuffle(order)
        if way < 0.35:
            chain.append(["exit", blocks[-1], None])
        else:
            # Falling into the first block: the one no branch names, or (a computed GO TO
            # out of range) one a branch names too.
            fallen = blocks[-1] if way < 0.7 else rng.choice(blocks)
            order.remove(fallen)
            order.insert(0, fallen)
        statements = list(chain)
        for at, name in enumerate(order):
            statements.append(["label", name])
            statements.append(["trace", self.fresh()])
            if rng.random() < 0.3:
                statements.append(["assign", f"x = x + {rng.randint(1, 3)}"])
            if at < len(order) - 1 or rng.random() < 0.5:
                statements.append(["exit", end, None])
        statements.append(["label", end])
        return ["seq", statements]

    def statement(self, depth):
        r = self.rng.random()
        # Inside a switch body (directly or in a loop, `with` or `try` there) nesting goes one
        # level deeper and favours switches, loops and `with`.
        limit = 4 if self.switches else 3
        if depth >= limit or r < 0.30 + 0.08 * depth:
            return self.simple()
        if self.switches:
            weights = {"if": 1, "while": 2, "for": 2, "with": 2, "try_except": 1,
                       "try_finally": 1, "switch": 4}
        else:
            weights = {"if": 1, "while": 1, "for": 1, "with": 1, "try_except": 1,
                       "try_finally": 1, "switch": 2}
        # The decorator without source rewrites neither (a switch needs the source, and a
        # `finally` body compiled twice duplicates its labels): programs for it have none.
        if not self.with_switches:
            del weights["switch"]
        if not self.with_finally:
            del weights["try_finally"]
        choice = self.rng.choices(list(weights), list(weights.values()))[0]
        k = self.fresh()
        if choice == "if":
            return ["if", f"x % {self.rng.randint(2, 3)} == {self.rng.randint(0, 1)}",
                    self.block(depth + 1), self.block(depth + 1) if self.rng.random() < 0.5 else []]
        if choice == "while":
            self.counters += 1
            counter = f"w{self.counters}"
            self.breakable.append("loop")
            self.loop_counters.append(counter)
            exit = self.push_exit()
            body = self.block(depth + 1)
            self.exits.pop()
            self.loop_counters.pop()
            self.breakable.pop()
            return self.with_exit(["while", counter, self.rng.randint(1, 3), body], exit)
        if choice == "for":
            self.frames.append(("for", k))
            self.breakable.append("loop")
            self.loop_vars.append(f"i{k}")
            exit = self.push_exit(outside=self.frames[:-1])
            body = self.block(depth + 1)
            self.exits.pop()
            self.loop_vars.pop()
            self.breakable.pop()
            self.frames.pop()
            return self.with_exit(["for", f"i{k}", body], exit)
        if choice == "switch":
            return self.switch(depth)
        if choice == "with":
            self.frames.append(("with", k))
            body = self.block(depth + 1)
            self.frames.pop()
            return ["with", k, body]
        if choice == "try_except":
            body = self.block(depth + 1)
            self.frames.append(("except", k))
            handler = self.block(depth + 1)
            self.frames.pop()
            return ["try_except", body, handler]
        # try/finally: the try body is not a frame (it may be entered); the finally body is.
        self.tries.append(k)
        body = self.block(depth + 1)
        self.tries.pop()
        # No `return`, `break` or `continue` leaves a finally body (PEP 765 deprecates them;
        # RustPython 0.5.0 mis-executes `continue` in a finally during a pending return).
        self.frames.append(("finally", k))
        breakable, self.breakable = self.breakable, []
        exits, self.exits = self.exits, []
        self.in_finally += 1
        final = self.block(depth + 1)
        self.in_finally -= 1
        self.exits = exits
        self.breakable = breakable
        self.frames.pop()
        return ["try_finally", body, final]

    def push_exit(self, outside=None):
        """Reserves a label just after the statement being generated; `outside` are the
        frames there (default: the current ones)."""
        exit = [f"X{self.fresh()}", False, list(self.frames if outside is None else outside)]
        self.exits.append(exit)
        return exit

    def with_exit(self, statement, exit, default=()):
        """The statement, then its default code (for a switch), then its exit label if a
        goto uses it (any other goto may target it too)."""
        tail = list(default)
        if exit[1]:
            self.labels.append((exit[0], exit[2], list(self.tries)))
            tail.append(["label", exit[0]])
        return ["seq", [statement] + tail] if tail else statement

    def subject(self):
        """A switch subject and the range of integers it takes (bools as 0 and 1; some
        subjects are sometimes None, which matches no case)."""
        rng = self.rng
        m = rng.randint(2, 6)
        options = [
            (f"x % {m}", 0, m - 1),
            (f"(x // 3) % {m}", 0, m - 1),
            (f"(x + c) % {m}", 0, m - 1),
            (f"c % {m}", 0, m - 1),
            (f"x - {rng.randint(1, 4)}", -3, 4),
            (f"x > {rng.randint(0, 6)}", 0, 1),
            (f"(x % {m} if x % 4 != 1 else None)", 0, m - 1),
        ]
        if self.loop_counters:
            options.append((rng.choice(self.loop_counters), 0, 3))
        if self.loop_vars:
            var = rng.choice(self.loop_vars)
            options.append((f"{var} * 2 + x % 2", 0, 3))
            options.append((f"({var} + x + c) % {m}", 0, m - 1))
        return rng.choice(options)

    def switch(self, depth):
        # Not a frame: its body may be entered (gotos target labels at the top of case
        # bodies too). `break` leaves it; `continue` may not name it.
        rng = self.rng
        if self.switches:
            self.nested += 1
        subject, low, high = self.subject()
        pool = list(range(low, high + 2))  # one value the subject never takes
        values = rng.sample(pool, rng.randint(1, min(len(pool), 6)))
        self.breakable.append("switch")
        self.switches += 1
        exit = self.push_exit()
        cases = []
        while values:
            take = rng.randint(1, min(2, len(values)))
            body = []
            if rng.random() < 0.35:
                name = f"L{len(self.labels)}"
                self.labels.append((name, list(self.frames), list(self.tries)))
                body.append(["label", name])
            body += self.block(depth + 1, rng.randint(0, 2))
            end = rng.random()
            if end < 0.2:
                body.append(["break", None])
            elif end < 0.35:
                body.append(self.exit_goto(unconditional=True))
            elif end < 0.42 and not self.in_finally:
                body.append(["return", self.fresh(), None])
            # else: fall through into the next case (or leave the switch after the last)
            cases.append((values[:take], body))
            values = values[take:]
        self.exits.pop()
        self.switches -= 1
        self.breakable.pop()
        default = [["trace", self.fresh()]] if rng.random() < 0.6 else []
        return self.with_exit(["switch", subject, cases], exit, default)

    def exit_goto(self, unconditional=False):
        """A goto to the label after an enclosing switch (past its default code) or loop,
        often not the innermost one. It only jumps forward, so needs no fuel."""
        if self.rng.random() < 0.5:
            exit = self.exits[-1]
        else:
            exit = self.rng.choice(self.exits)
        exit[1] = True
        condition = None if unconditional else f"x % {self.rng.randint(2, 4)} == {self.rng.randint(0, 1)}"
        return ["exit", exit[0], condition]

    def simple(self):
        r = self.rng.random()
        if r < 0.22:
            return ["trace", self.fresh()]
        if r < 0.30:
            return ["assign", f"x = x + {self.rng.randint(1, 3)}"]
        if r < 0.36:
            return ["assign", "c = c + 1"]
        if r < 0.49:
            name = f"L{len(self.labels)}"
            self.labels.append((name, list(self.frames), list(self.tries)))
            return ["label", name]
        if r < 0.66:
            # One goto in six computed, choosing between two labels by `x` (with
            # switches: the programs of the decorator without source have none).
            computed = self.with_switches and self.rng.random() < 1 / 6
            placeholder = ["computed" if computed else "goto", None]
            self.gotos.append((placeholder, list(self.frames), list(self.tries)))
            return placeholder
        if r < 0.72 and self.exits:
            return self.exit_goto()
        if r < 0.79:
            return ["raise", self.fresh(), f"x % {self.rng.randint(2, 4)} == 0"]
        if r < 0.86 and not self.in_finally:
            return ["return", self.fresh(), f"x > {self.rng.randint(2, 9)}"]
        if r < 0.94 and self.breakable:
            kinds = ["break", "continue"] if self.breakable[-1] == "loop" else ["break"]
            return [self.rng.choice(kinds), f"x % {self.rng.randint(2, 5)} == 1"]
        return ["trace", self.fresh()]

    def resolve(self, invalid=False):
        """Points every goto at a label SPEC section 4 allows, or drops it. With `invalid`,
        one goto instead targets a label it may not reach; returns the codes `gotopy
        check` may report for it first (`G003` entering a frame, `G004` leaving a finally
        body), or None when no such label exists."""
        codes = None
        for placeholder, frames, tries in self.gotos:
            legal, illegal, leaving = [], [], False
            for name, label_frames, label_tries in self.labels:
                enters = frames[: len(label_frames)] != label_frames
                common = 0
                while (common < min(len(frames), len(label_frames))
                       and frames[common] == label_frames[common]):
                    common += 1
                leaves_finally = any(kind == "finally" for kind, _ in frames[common:])
                if enters or leaves_finally:
                    found = ({"G003"} if enters else set()) | ({"G004"} if leaves_finally else set())
                    illegal.append((name, found))
                else:
                    legal.append(name)
                    leaving |= not set(tries) <= set(label_tries)
            if placeholder[0] == "computed" and leaving:
                # It could reach a label by leaving a `try` statement with `finally`.
                placeholder[0] = "goto"
            if placeholder[0] == "computed":
                if legal:
                    placeholder[1] = [self.rng.choice(legal), self.rng.choice(legal)]
                else:
                    placeholder[0] = "pass"
            elif invalid and codes is None and illegal:
                name, codes = self.rng.choice(illegal)
                placeholder[1] = name
            elif legal:
                placeholder[1] = self.rng.choice(legal)
            else:
                placeholder[0] = "pass"
        return sorted(codes) if codes else None


def render(statements, indent, out):
    pad = "    " * indent
    for s in statements:
        kind = s[0]
        if kind == "seq":
            render(s[1], indent, out)
        elif kind == "trace":
            out.append(f"{pad}t.append({s[1]})")
        elif kind == "assign":
            out.append(f"{pad}{s[1]}")
        elif kind == "label":
            out.append(f"{pad}label .{s[1]}")
        elif kind == "goto":
            out.append(f"{pad}if fuel > 0:")
            out.append(f"{pad}    fuel -= 1")
            out.append(f"{pad}    goto .{s[1]}")
        elif kind == "computed":
            out.append(f"{pad}if fuel > 0:")
            out.append(f"{pad}    fuel -= 1")
            out.append(f"{pad}    goto *({s[1][0]!r} if x % 2 else {s[1][1]!r})")
        elif kind == "exit":
            if s[2] is None:
                out.append(f"{pad}goto .{s[1]}")
            else:
                out.append(f"{pad}if {s[2]}:")
                out.append(f"{pad}    goto .{s[1]}")
        elif kind == "pass":
            out.append(f"{pad}pass")
        elif kind == "raise":
            out.append(f"{pad}if {s[2]}:")
            out.append(f"{pad}    raise E({s[1]})")
        elif kind == "return":
            if s[2] is None:
                out.append(f"{pad}return {s[1]}")
            else:
                out.append(f"{pad}if {s[2]}:")
                out.append(f"{pad}    return {s[1]}")
        elif kind in ("break", "continue"):
            if s[1] is None:
                out.append(f"{pad}{kind}")
            else:
                out.append(f"{pad}if {s[1]}:")
                out.append(f"{pad}    {kind}")
        elif kind == "if":
            out.append(f"{pad}if {s[1]}:")
            render(s[2], indent + 1, out)
            if s[3]:
                out.append(f"{pad}else:")
                render(s[3], indent + 1, out)
        elif kind == "while":
            out.append(f"{pad}while {s[1]} < {s[2]}:")
            out.append(f"{pad}    {s[1]} += 1")
            render(s[3], indent + 1, out)
        elif kind == "switch":
            out.append(f"{pad}while switch *({s[1]}):")
            for values, body in s[2]:
                out.append(f"{pad}    case[{', '.join(map(str, values))}]")
                render(body, indent + 1, out)
        elif kind == "for":
            out.append(f"{pad}for {s[1]} in range(2):")
            render(s[2], indent + 1, out)
        elif kind == "with":
            out.append(f"{pad}with R(t, {s[1]}):")
            render(s[2], indent + 1, out)
        elif kind == "try_except":
            out.append(f"{pad}try:")
            render(s[1], indent + 1, out)
            out.append(f"{pad}except E:")
            render(s[2], indent + 1, out)
        elif kind == "try_finally":
            out.append(f"{pad}try:")
            render(s[1], indent + 1, out)
            out.append(f"{pad}finally:")
            render(s[2], indent + 1, out)


def generate(seed, count, switches=True, finally_bodies=True):
    """COUNT function definitions, each `@goto def fN(t, x): ...`, as source strings, and
    for the one in twelve that break SPEC section 4 on purpose, the codes expected;
    without `while switch` or `try`/`finally` statements if asked."""
    rng = random.Random(seed)
    programs, invalid = [], {}
    for index in range(count):
        g = Generator(rng, switches, finally_bodies)
        body = g.block(0, rng.randint(3, 8))
        codes = g.resolve(invalid=rng.random() < 1 / 12)
        if codes:
            invalid[index] = codes
        lines = ["@goto", f"def f{index}(t, x):", "    fuel = 6", "    c = 0"]
        lines += [f"    w{counter} = 0" for counter in range(1, g.counters + 1)]
        render(body, 1, lines)
        programs.append("\n".join(lines) + "\n")
    return programs, invalid


# Run by `gotopy run`: compiles each program with gotopy inside the interpreter (so one
# program that cannot be compiled does not stop the others) and prints what it does.
DRIVER = PRELUDE + '''
import json, sys
import _gotopy

programs = json.load(open(sys.argv[1]))
# `driver.py programs.json K N` runs the K-th of N shards: every N-th program from the K-th.
shard, shards = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 2 else (0, 1)
for index, source in enumerate(programs):
    if index % shards != shard:
        continue
    try:
        code = _gotopy.compile(source, f"<program {index}>")
    except SyntaxError as error:
        try:
            _gotopy.compile(source.replace("@goto\\n", "", 1), f"<plain {index}>")
            plain = True
        except SyntaxError:
            plain = False
        print(json.dumps([index, "refused", error.msg, plain]))
        continue
    namespace = {"E": E, "R": R, "goto": goto, "label": label, "switch": switch, "case": case}
    exec(code, namespace)
    for x in (0, 1, 5):
        t = []
        try:
            outcome = ["return", namespace[f"f{index}"](t, x)]
        except E as e:
            outcome = ["raise", e.args[0]]
        print(json.dumps([index, x, t, outcome]))
'''


# For `gotopy translate`: every valid program in one module, each called as the driver
# calls it; translated, it runs under any plain Python.
def translation_module(programs, invalid):
    lines = [PRELUDE, "import json", ""]
    for index, source in enumerate(programs):
        if index not in invalid:
            lines.append(source)
    lines.append('''
for index in %r:
    for x in (0, 1, 5):
        t = []
        try:
            outcome = ["return", globals()[f"f{index}"](t, x)]
        except E as e:
            outcome = ["raise", e.args[0]]
        print(json.dumps([index, x, t, outcome]))
''' % [index for index in range(len(programs)) if index not in invalid])
    return "\n".join(lines)


# --- The reference interpreter ------------------------------------------------------------


class Goto(Exception):
    def __init__(self, name):
        self.name = name


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value):
        self.value = value


def marker(stmt):
    """('goto' | 'label', name) for a marker statement, ('computed', expression) for a
    computed goto, ('case', values) for a case marker, else None."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Mult) and isinstance(stmt.value.left, ast.Name)
            and stmt.value.left.id == "goto"):
        return "computed", stmt.value.right
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Attribute):
        value = stmt.value.value
        if isinstance(value, ast.Name) and value.id in ("goto", "label"):
            return value.id, stmt.value.attr
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Subscript):
        value = stmt.value.value
        if isinstance(value, ast.Name) and value.id == "case":
            key = stmt.value.slice
            keys = key.elts if isinstance(key, ast.Tuple) else [key]
            return "case", [ast.literal_eval(k) for k in keys]
    return None


def switch_subject(stmt):
    """The subject of `while switch *subject:`, else None."""
    test = stmt.test
    if (isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mult)
            and isinstance(test.left, ast.Name) and test.left.id == "switch"):
        return test.right
    return None


def enterable(stmt, name):
    """Whether label `name` is in `stmt` where a goto may enter: the label itself, or inside
    `if`/`else`, `while` and `try` bodies (not `for`, `with`, handlers or `finally`)."""
    if marker(stmt) == ("label", name):
        return True
    if isinstance(stmt, ast.If):
        return any(enterable(s, name) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, (ast.While, ast.Try)):
        return any(enterable(s, name) for s in stmt.body)
    return False


class Interpreter:
    def __init__(self, namespace):
        self.ns = namespace
        # Each statement and expression compiled, and each statement's shape read, once
        # per program, on first use: a loop runs its body many times, and doing it again
        # each time was most of the reference's time.
        self.compiled = {}
        self.markers = {}
        self.entries = {}

    def marker(self, stmt):
        if stmt not in self.markers:
            self.markers[stmt] = marker(stmt)
        return self.markers[stmt]

    def enterable(self, stmt, name):
        if (stmt, name) not in self.entries:
            self.entries[stmt, name] = enterable(stmt, name)
        return self.entries[stmt, name]

    def code(self, node, mode):
        code = self.compiled.get(node)
        if code is None:
            tree = ast.Expression(node) if mode == "eval" else ast.Module([node], [])
            code = self.compiled[node] = compile(tree, "<ref>", mode)
        return code

    def eval(self, node, env):
        return eval(self.code(node, "eval"), self.ns, env)

    def block(self, statements, env, enter=None, start=0):
        i = start
        if enter is not None:
            i = next(j for j, s in enumerate(statements) if self.enterable(s, enter))
        while i < len(statements):
            try:
                self.statement(statements[i], env, enter)
                enter = None
                i += 1
            except Goto as g:
                found = [j for j, s in enumerate(statements) if self.enterable(s, g.name)]
                if not found:
                    raise
                i, enter = found[0], g.name

    def statement(self, s, env, enter=None):
        m = self.marker(s)
        if m is not None:
            if m[0] == "goto":
                raise Goto(m[1])
            if m[0] == "computed":
                # SPEC 4: the label its value names (the generator names only labels it
                # may reach).
                raise Goto(self.eval(m[1], env))
            return  # a label or a case: nothing
        if isinstance(s, (ast.Expr, ast.Assign, ast.AugAssign, ast.Pass)):
            exec(self.code(s, "exec"), self.ns, env)
        elif isinstance(s, ast.If):
            if enter is not None:
                branch = s.body if any(self.enterable(x, enter) for x in s.body) else s.orelse
                self.block(branch, env, enter)
            elif self.eval(s.test, env):
                self.block(s.body, env)
            else:
                self.block(s.orelse, env)
        elif isinstance(s, ast.While) and switch_subject(s) is not None:
            # SPEC 5. A switch evaluates its subject once and runs its body once, from the
            # statement after the matching case marker (or from where a goto enters it),
            # falling through later case markers; no match runs nothing (the default is the
            # code after it). `break` leaves it, even inside an enclosing loop; a `break` in a
            # loop inside a case body leaves that loop. A nested switch is a statement of a
            # case body like any other: its subject is evaluated when control reaches it, its
            # `break` leaves only it, and gotos enter and leave any level freely (a switch is
            # not a frame). A goto from the body to a label earlier in the same body is found
            # in this block, without evaluating the subject again.
            start = 0
            if enter is None:
                value = self.eval(switch_subject(s), env)
                start = next(
                    (i + 1 for i, x in enumerate(s.body)
                     if (self.marker(x) or ("",))[0] == "case" and value in self.marker(x)[1]),
                    None,
                )
                if start is None:
                    return
            try:
                self.block(s.body, env, enter, start)
            except Break:
                pass
        elif isinstance(s, ast.While):
            while enter is not None or self.eval(s.test, env):
                try:
                    self.block(s.body, env, enter)
                except Break:
                    break
                except Continue:
                    pass
                finally:
                    enter = None
        elif isinstance(s, ast.For):
            for value in self.eval(s.iter, env):
                env[s.target.id] = value
                try:
                    self.block(s.body, env)
                except Break:
                    break
                except Continue:
                    continue
        elif isinstance(s, ast.With):
            manager = self.eval(s.items[0].context_expr, env)
            manager.__enter__()
            try:
                self.block(s.body, env)
            except (Goto, Break, Continue, Return):
                manager.__exit__(None, None, None)
                raise
            except BaseException as error:
                if not manager.__exit__(type(error), error, None):
                    raise
            else:
                manager.__exit__(None, None, None)
        elif isinstance(s, ast.Try):
            if s.finalbody:
                try:
                    self.block(s.body, env, enter)
                finally:
                    self.block(s.finalbody, env)
            else:
                kind = self.eval(s.handlers[0].type, env)
                try:
                    self.block(s.body, env, enter)
                except kind:
                    self.block(s.handlers[0].body, env)
        elif isinstance(s, ast.Raise):
            raise self.eval(s.exc, env)
        elif isinstance(s, ast.Return):
            raise Return(self.eval(s.value, env))
        elif isinstance(s, ast.Break):
            raise Break()
        elif isinstance(s, ast.Continue):
            raise Continue()
        else:
            raise NotImplementedError(ast.dump(s))

    def call(self, function, t, x):
        env = {"t": t, "x": x}
        try:
            self.block(function.body, env)
        except Return as r:
            return r.value
        return None


def reference(programs, invalid):
    """What each valid program does, one JSON line per call, as the driver prints it."""
    namespace = {}
    prelude = ast.parse(PRELUDE.replace("from goto import goto, label, switch, case\n", ""))
    exec(compile(prelude, "<prelude>", "exec"), namespace)
    lines = []
    for index, source in enumerate(programs):
        if index in invalid:
            continue
        interpreter = Interpreter(namespace)
        function = ast.parse(source).body[0]
        for x in (0, 1, 5):
            t = []
            try:
                outcome = ["return", interpreter.call(function, t, x)]
            except namespace["E"] as e:
                outcome = ["raise", e.args[0]]
            lines.append(json.dumps([index, x, t, outcome]))
    return lines


def generated(seed, count, full=True, cache=None):
    """`generate` and `reference` for `seed` and `count` (`full`: with switches and `finally`
    bodies): the programs, the invalid ones and the reference's lines. With `cache` (a
    directory), the three are kept there as one JSON file named after the arguments and a
    digest of this file's text, and read back by the next caller with the same arguments
    (the tests of the Python package on five interpreters): the result depends on nothing
    else. Written whole under another name, then renamed, so that a reader never sees half
    a file, whoever wrote it."""
    if cache is None:
        programs, invalid = generate(seed, count, switches=full, finally_bodies=full)
        return programs, invalid, reference(programs, invalid)
    with open(__file__, "rb") as file:
        digest = hashlib.sha256(file.read()).hexdigest()[:16]
    variant = "full" if full else "without-source"
    path = os.path.join(cache, f"{variant}-{seed}-{count}-{digest}.json")
    try:
        with open(path, encoding="utf-8") as file:
            kept = json.load(file)
        invalid = {int(index): codes for index, codes in kept["invalid"].items()}
        return kept["programs"], invalid, kept["expected"]
    except FileNotFoundError:
        pass
    programs, invalid, expected = generated(seed, count, full)
    os.makedirs(cache, exist_ok=True)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "w", encoding="utf-8") as file:
        json.dump({"programs": programs, "invalid": invalid, "expected": expected}, file)
    os.replace(partial, path)
    return programs, invalid, expected


if __name__ == "__main__":
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    # A fourth argument `without-source` leaves out what the decorator without source
    # never rewrites: `while switch` and `try`/`finally`.
    full = sys.argv[4:] != ["without-source"]
    programs, invalid, expected = generated(seed, count, full)
    with open(f"{out}/programs.json", "w") as f:
        json.dump(programs, f)
    with open(f"{out}/invalid.json", "w") as f:
        json.dump({str(index): codes for index, codes in invalid.items()}, f)
    with open(f"{out}/driver.py", "w") as f:
        f.write(DRIVER)
    with open(f"{out}/expected.txt", "w") as f:
        f.write("\n".join(expected) + "\n")
    with open(f"{out}/module.py", "w") as f:
        f.write(translation_module(programs, invalid))
