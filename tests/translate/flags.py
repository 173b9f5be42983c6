"""Functions whose flow graph is reducible but has a jump that no `continue`, `break` or
fall of Python reaches: out of two loops at once to code that is not a lone `return`
(`find`), and past a block that two places enter to the one after it (`ship`). Written
from the graph, each such jump sets a flag named after its label. Each goto function is
checked against the same function written without goto, on many inputs."""

from goto import goto, label


@goto
def find(grid, want):
    r, steps = 0, 0
    label .row
    if r == len(grid):
        goto .missing
    c = 0
    label .col
    steps += 1
    if c == len(grid[r]):
        r += 1
        goto .row
    if grid[r][c] == want:
        goto .found  # out of both loops
    c += 1
    goto .col
    label .missing
    where = None
    goto .done
    label .found
    where = (r, c)
    label .done
    steps = -steps if where is None else steps
    return where, steps


def find_plain(grid, want):
    steps = 0
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            steps += 1
            if cell == want:
                return (r, c), steps
        steps += 1
    return None, -steps


@goto
def ship(order):
    log = []
    if order.get("express"):
        goto .fast
    log.append("queue")
    if order.get("held"):
        return log
    goto .pack
    label .fast
    log.append("fast")
    if order.get("light"):
        goto .stamp  # no box
    goto .pack
    label .pack
    log.append("box")
    if order.get("fragile"):
        log.append("foam")
    label .stamp
    log.append("stamp")
    return log


def ship_plain(order):
    log = []
    if order.get("express"):
        log.append("fast")
    else:
        log.append("queue")
        if order.get("held"):
            return log
    if not (order.get("express") and order.get("light")):
        log.append("box")
        if order.get("fragile"):
            log.append("foam")
    log.append("stamp")
    return log


for grid in ([], [[]], [[1, 2], [3, 4]], [[5], [], [6, 7, 8]], [[9] * 3] * 3):
    for want in range(10):
        assert find(grid, want) == find_plain(grid, want), (grid, want)
for bits in range(16):
    order = {
        key: bool(bits >> at & 1)
        for at, key in enumerate(("express", "held", "light", "fragile"))
    }
    assert ship(order) == ship_plain(order), order
print("ok")
