"""Shapes near a label that translate's passes must not take (a loop the restart or leave
shape would get wrong, a label that shares its line with a statement): their goto functions
keep a register, and each is checked against the same function written without goto."""

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
def scan(rows, log):
    """A leave whose statements between hold a label another goto reaches."""
    for row in rows:
        if row is None:
            goto .stop
    log.append("all rows")
    for x in rows[-1] if rows else ():
        if x < 0:
            goto .negative
    log.append("no negative")
    label .negative
    log.append("after")
    label .stop
    log.append("end")
    return log


def scan_plain(rows, log):
    if None not in rows:
        log.append("all rows")
        if not any(x < 0 for x in (rows[-1] if rows else ())):
            log.append("no negative")
        log.append("after")
    log.append("end")
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


for batches in ([], [[1, 0, 2], [0]], [[3]]):
    assert compact_each(batches, []) == compact_each_plain(batches, []), batches
for rows in ([], [[1, 2]], [[1, -2]], [None], [[3], None]):
    assert scan(rows, []) == scan_plain(rows, []), rows
for y in (-2, 0, 5):
    assert sign_trace(y, []) == sign_trace_plain(y, []), y
print("ok")
