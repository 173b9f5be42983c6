"""A countdown and a search, written with goto: the bundled example that `gotopy check` checks."""

from goto import goto, label


@goto
def total(n):
    """Sum 1..n with a goto loop."""
    s = 0
    label .loop
    if n <= 0:
        return s
    s += n
    n -= 1
    goto .loop


@goto
def find(grid, wanted):
    """Leave two nested `for` loops at once: no flags, no exceptions."""
    for row, cells in enumerate(grid):
        for column, cell in enumerate(cells):
            if cell == wanted:
                found = (row, column)
                goto .done
    return None
    label .done
    return found


@goto
def classify(n):
    while switch *n:
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


print(total(100))
print(find([[1, 2], [3, 4]], 4))
print([classify(n) for n in (0, 2, 10, 11, 99)])
