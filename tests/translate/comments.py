"""Comments after labels that stay targets of the register, and between the statements the
dispatch loop enters: the translation keeps them. Checked against the function written
without goto."""

from goto import goto, label


@goto
def zigzag(n, start_odd):
    out = []
    if start_odd:
        goto .odd
    label .even  # even steps
    out.append(("e", n))
    n -= 1
    if n <= 0:
        goto .done
    label .odd  # odd steps
    out.append(("o", n))
    n -= 1
    if n > 0:
        goto .even
    label .done  # finished
    return out


def zigzag_plain(n, odd):
    out = []
    while n > 0:
        out.append(("o" if odd else "e", n))
        n, odd = n - 1, not odd
    return out


for n in range(1, 9):
    for odd in (False, True):
        assert zigzag(n, odd) == zigzag_plain(n, odd), (n, odd)
print("ok")
