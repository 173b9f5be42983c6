"""Functions with a computed goto, which may reach any of their labels by value: the passes
take their loops as in any other function, keep each label where a jump by value lands, and
leave every other shape (a skip over a label, a goto to a `return`) to the register. Each
goto function is checked against the same function written without goto, on many inputs."""

from goto import goto, label


@goto
def machine(program, acc):
    """A tiny machine whose operations are labels: `goto *op` runs the next one. `count`
    sums 0 to acc - 1 in a tight loop; `spin` goes on summing from where it stopped."""
    pc = 0
    label .next
    if pc >= len(program):
        goto .halt
    op = program[pc]
    pc += 1
    goto *op
    label .double
    acc *= 2
    goto .next
    label .dec
    acc -= 1
    goto .next
    label .count
    i = 0
    total = 0
    label .spin
    if i < acc:
        total += i
        i += 1
        goto .spin
    acc = total
    goto .next
    label .halt
    return acc


def machine_plain(program, acc):
    pc = 0
    while True:
        if pc >= len(program):
            return acc
        op = program[pc]
        pc += 1
        if op == "next":
            continue
        if op == "double":
            acc *= 2
        elif op == "dec":
            acc -= 1
        elif op in ("count", "spin"):
            if op == "count":
                i = 0
                total = 0
            while i < acc:
                total += i
                i += 1
            acc = total
        elif op == "halt":
            return acc
        else:
            raise ValueError(op)


@goto
def route(start, skip, log):
    """A forward skip over a label that a jump by value may land on."""
    if start != "top":
        goto *start
    label .top
    if skip:
        goto .after
    log.append("a")
    label .middle
    log.append("b")
    label .after
    log.append("c")
    return log


def route_plain(start, skip, log):
    if start not in ("top", "middle", "after"):
        raise ValueError(start)
    if start == "top" and not skip:
        log.append("a")
    if start == "middle" or start == "top" and not skip:
        log.append("b")
    log.append("c")
    return log


def outcome(function, *args):
    try:
        return function(*args)
    except (ValueError, NameError) as error:
        return type(error).__name__


programs = [
    [],
    ["halt", "double"],
    ["double", "dec", "count"],
    ["count", "spin"],
    ["count", "double", "spin", "next", "dec"],
    ["spin"],
    ["double", "nowhere"],
]
for program in programs:
    for acc in range(6):
        assert outcome(machine, program, acc) == outcome(machine_plain, program, acc), (
            program,
            acc,
        )
for start in ("top", "middle", "after", "elsewhere"):
    for skip in (False, True):
        assert outcome(route, start, skip, []) == outcome(route_plain, start, skip, []), (
            start,
            skip,
        )
print("ok")
