"""Every marker form, for the type checkers (tests/test_run.py runs mypy on it)."""

from goto import case, goto, label, switch, with_goto

import gotopy


@goto
def every_form(n: int, name: str) -> int:
    label .top
    if n > 10:
        goto .done
    while switch *n:
        case[0]
        n += 1
        case[1, 2]
        n += 2
    if name:
        goto *name
    goto .top
    label .done
    return n


@with_goto
def other(n: int) -> int:
    return n


@gotopy.goto
def dotted() -> None:
    label .x
