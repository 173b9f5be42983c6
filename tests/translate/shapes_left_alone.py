"""Shapes near a label that translate's passes must not take (a loop the restart or leave
shape would get wrong, a label that shares its line with a statement, loops whose edits
would meet, a ladder test over two lines, a jump that a `finally` ends, an `else` a loop's
`break` skips): their goto functions keep a register; handlers whose statements after the
`try` cannot be its `else` leave a `while True:` by `break` instead, and statements nothing
reaches that decide their function's scope stay. Each is checked against the same function
written without goto, or against what Python does."""

from goto import goto, label


@goto
def compact_each(batches, log):
    """A restart whose loop is followed by `continue`: under `while True:` it would continue
    the new loop, not the `for` around it."""
    for batch in batches:
        label .again
        for x in batch:
            if x == 0:
                batch = [v for v in batch if v]
                log.append("compacted")
                goto .again
        continue
    return log


def compact_each_plain(batches, log):
    for batch in batches:
        while 0 in batch:
            batch = [v for v in batch if v]
            log.append("compacted")
    return log


@goto
def sign_trace(y, t):
    """A label after a statement on its line, before a `return`: the exit shape would take
    out the label's line, and the statement with it."""
    if y < 0:
        goto .negative
    if y == 0:
        goto .zero
    goto .positive
    label .negative
    t.append(1); goto .done
    label .zero
    t.append(2)
    goto .done
    label .positive
    t.append(3); label .done
    return t


def sign_trace_plain(y, t):
    t.append(1 if y < 0 else 2 if y == 0 else 3)
    return t


@goto
def tangled(stop):
    """Two loops that test at their end, one inside the other, and a goto to the outer one's
    label inside the inner one: as `continue` it would restart the inner loop."""
    out = []
    i = 0
    label .a
    out.append("A")
    label .b
    i += 1
    if i == 2:
        goto .a
    if i < 3:
        goto .b
    if i < stop:
        goto .a
    return out


def tangled_plain(stop):
    return ["A"] * (2 + max(stop - 3, 0))


@goto
def retry_pairs(xs, log):
    """A restarted loop inside another, whose restart is the statement after the inner
    loop: both restarts would edit that goto."""
    label .again
    for x in xs:
        if x and len(log) < 4:
            label .inner
            for y in xs:
                log.append((x, y))
                if y and len(log) == 2:
                    goto .inner
            goto .again
    return log


def retry_pairs_plain(xs, log):
    while True:
        for x in xs:
            if x and len(log) < 4:
                while True:
                    for y in xs:
                        log.append((x, y))
                        if y and len(log) == 2:
                            break
                    else:
                        break
                break
        else:
            return log


@goto
def tall(a, b):
    """A ladder whose test spans two lines: its header would take one."""
    if (a and
            b):
        goto .both
    goto .not_both
    label .both
    r = 1
    goto .known
    label .not_both
    r = 2
    label .known
    return r


def tall_plain(a, b):
    return 1 if a and b else 2


for batches in ([], [[1, 0, 2], [0]], [[3]]):
    assert compact_each(batches, []) == compact_each_plain(batches, []), batches
for y in (-2, 0, 5):
    assert sign_trace(y, []) == sign_trace_plain(y, []), y
for stop in range(6):
    assert tangled(stop) == tangled_plain(stop), stop
for xs in ([], [0], [0, 1], [1, 0], [1, 1], [2, 0, 3]):
    assert retry_pairs(xs, []) == retry_pairs_plain(xs, []), xs
@goto
def cancelled(skip, stop):
    """A goto out of a `try` whose `finally` continues the loop: the `continue` ends the
    jump, as it ends a `break` (the register goes back to 0 with it)."""
    log = []
    if skip:
        goto .out
    for i in range(3):
        try:
            if i == stop:
                goto .out
        finally:
            log.append(i)
            continue
    log.append("loop ended")
    label .out
    log.append("out")
    return log


def cancelled_plain(skip, stop):
    log = []
    if not skip:
        log += [0, 1, 2]
        log.append("loop ended")
    log.append("out")
    return log


@goto
def closing(text, log):
    """Handlers that go past the statements after a `try` with a `finally`: as its `else`,
    those statements would run before the `finally` body."""
    try:
        n = int(text)
    except ValueError:
        goto .bad
    finally:
        log.append("finally")
    log.append(n)
    return n
    label .bad
    log.append("bad")


def closing_plain(text, log):
    try:
        n = int(text)
    except ValueError:
        n = None
    log.append("finally")
    if n is None:
        log.append("bad")
        return None
    log.append(n)
    return n


@goto
def half_handled(value, log):
    """A handler that falls through beside one that goes past the statements after the
    `try`: in its `else`, the first would skip them."""
    try:
        n = int(value)
    except ValueError:
        goto .bad
    except TypeError:
        n = 0
    log.append(n)
    label .bad
    return log


def half_handled_plain(value, log):
    try:
        n = int(value)
    except ValueError:
        return log
    except TypeError:
        n = 0
    log.append(n)
    return log


@goto
def scan_or_skip(values, skip, log):
    """A goto into the `else` of a loop with a `break`: after the loop, its statements would
    run when the loop breaks too."""
    if skip:
        goto .none
    for v in values:
        if v < 0:
            break
        log.append(v)
    else:
        label .none
        log.append("none")
    log.append("end")
    return log


def scan_or_skip_plain(values, skip, log):
    if not skip:
        for v in values:
            if v < 0:
                break
            log.append(v)
        else:
            log.append("none")
    else:
        log.append("none")
    log.append("end")
    return log


# Code that nothing reaches still decides its function's scope; without it, each of these
# would be another function.
x = "global"


@goto
def bound_only_there():
    """`x` is a local because a statement nothing reaches binds it: reading it raises."""
    goto .read
    x = "never"  # the only binding
    label .read
    return x


@goto
def bound_only_in_unreached_states():
    """Two states that only each other enter bind `total`, which nothing else binds: it is
    a local, and reading it raises, so they stay."""
    return total
    label .ping
    total = 1
    goto .pong
    label .pong
    total = 2
    goto .ping


@goto
def into_dead_code(route, log):
    """Code after a goto that nothing falls into holds a label a goto enters: the block after
    it is reached by falling out of that `if`, so it stays."""
    if route:
        goto .inner
    log.append("start")
    goto .end
    if route:
        label .inner
        log.append("inner")
    label .after
    log.append("after")
    label .end
    return log


@goto
def generator_by_dead_yield():
    """A `yield` nothing reaches makes a generator, which returns at once."""
    goto .end
    yield "never"
    label .end
    return "done"


def enclosing():
    v = "enclosing"

    @goto
    def closure():
        """The only load of `v` makes it a free variable, which `eval` then sees."""
        goto .end
        print(v)
        label .end
        return eval("v")

    return closure()


@goto
def neutral(n):
    """Nothing here binds or loads a name of its own: the statements go, the comment stays."""
    goto .after
    # a note about what follows
    assert n > 100, "never checked"
    n += 1
    label .after
    return n


@goto
def bound_in_two_dead_stretches():
    """Each stretch binds `x` where the other does: the first goes, the second must stay."""
    try:
        return x
    except UnboundLocalError:
        pass
    goto .a
    x = 1
    label .a
    goto .b
    x = 2
    label .b
    return "unbound"


@goto
def retry_into_else(k, log):
    """A `try` whose body ends with a goto into its own `else`: the `else` falls through,
    so the loop the block pass writes around it needs its closing `break`."""
    label .top
    k += 1
    try:
        if k < 3:
            goto .top
        goto .inside
    except KeyError:  # pragma: no cover
        return "handled"
    else:
        log.append("never")  # pragma: no cover
        label .inside
        log.append(k)
    return k


try:
    bound_only_there()
except UnboundLocalError:
    pass
else:
    raise AssertionError("x read as a global")
assert into_dead_code(0, []) == ["start"]
assert into_dead_code(1, []) == ["inner", "after"]
total = "global"
try:
    bound_only_in_unreached_states()
except UnboundLocalError:
    pass
else:
    raise AssertionError("total read as a global")
assert next(generator_by_dead_yield(), "empty") == "empty"
assert enclosing() == "enclosing"
assert neutral(1) == 1
assert bound_in_two_dead_stretches() == "unbound"
log = []
assert retry_into_else(0, log) == 3 and log == [3], log

for a, b in ((0, 0), (0, 1), (1, 0), (1, 1)):
    assert tall(a, b) == tall_plain(a, b), (a, b)
for skip in (False, True):
    for stop in range(4):
        assert cancelled(skip, stop) == cancelled_plain(skip, stop), (skip, stop)
for text in ("4", "x"):
    log, plain = [], []
    assert closing(text, log) == closing_plain(text, plain) and log == plain, (text, log)
for value in ("4", "x", None):
    assert half_handled(value, []) == half_handled_plain(value, []), value
for values in ([], [1, 2], [1, -1, 2]):
    for skip in (False, True):
        assert scan_or_skip(values, skip, []) == scan_or_skip_plain(values, skip, []), values
print("ok")
