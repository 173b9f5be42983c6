"""A Fortran 66 routine ported line by line for goto-statement: numbered labels, an
arithmetic IF as a three-way goto, a computed GO TO as an if-chain on its index, and the
counters of a COMMON block kept by helpers that say `nonlocal`."""
from goto import with_goto


@with_goto
def tabulate(lo, hi, out):
    calls = 0
    kinds = [0, 0, 0]

    def count(kind):
        nonlocal calls
        calls += 1
        kinds[kind - 1] += 1

    def poly(x):
        nonlocal calls
        calls += 1
        return ((x - 6) * x + 11) * x - 6

    i = lo
    label .L10
    y = poly(i)
    if y < 0:
        goto .L20
    if y == 0:
        goto .L30
    goto .L40
    label .L20
    k = 1
    goto .L50
    label .L30
    k = 2
    goto .L50
    label .L40
    k = 3
    label .L50
    count(k)
    if k == 1:
        goto .L60
    elif k == 2:
        goto .L70
    elif k == 3:
        goto .L80
    label .L60
    out.append("%3d %6d  below" % (i, y))
    goto .L90
    label .L70
    out.append("%3d %6d  ROOT" % (i, y))
    goto .L90
    label .L80
    out.append("%3d %6d  above" % (i, y))
    label .L90
    i = i + 1
    if i <= hi:
        goto .L10
    return calls, kinds


lines = []
calls, kinds = tabulate(-1, 5, lines)
print("\n".join(lines))
print(calls, kinds)
