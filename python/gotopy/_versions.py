"""What differs between CPython versions and is not in ``opcode`` or ``dis``: how the
location table groups instructions, and the instructions that leave a frame.

The exception-table and location-table formats are the same from 3.11 to 3.15
(``Objects/exception_handling_notes.txt``, ``Objects/locations.md``; the native module reads
and writes both, ``python/src/bytecode.rs``); the slots a ``for`` loop keeps on the stack are
not (one before 3.14, two from 3.14). Each fact is checked on
that version's own compiler output by the class ``Versions`` of ``python/tests/test_run.py``;
nothing else in gotopy compares version numbers.
"""

from __future__ import annotations

import dis
import opcode
import sys

VERSION = sys.version_info[:2]
SUPPORTED = (3, 11) <= VERSION <= (3, 15)


def stack_effect_fix(name: str, effect: int) -> int:
    """``dis.stack_effect``, where it says what the compiler does not count:
    ``RETURN_GENERATOR`` (3.11, 3.12) leaves the value that the ``POP_TOP`` after it drops
    when the generator first resumes."""
    if name == "RETURN_GENERATOR" and effect == 0:
        return 1
    return effect


# Where a `with` statement's exit call is: at the statement's position (3.11, 3.12), or at
# the position of its item's context expression (3.13 and later).
WITH_EXIT_AT_ITEM = VERSION >= (3, 13)

# From 3.12, `LOAD_FAST` does not check that the local is bound: the compiler uses it where
# its own flow graph proves the local bound, and `LOAD_FAST_CHECK` elsewhere. A goto adds
# paths that graph did not have, so the lowering checks every such load again.
UNCHECKED_LOCAL_LOADS = VERSION >= (3, 12)

# What formats a computed goto's value for its error message: `FORMAT_VALUE` (3.11, 3.12)
# or `CONVERT_VALUE` (3.13 and later).
CONVERSIONS = ("FORMAT_VALUE", "CONVERT_VALUE")


def attribute_name_index(arg: int) -> int:
    """The index in ``co_names`` of the name a ``LOAD_ATTR`` loads: from 3.12 the low bit of
    its argument says whether it loads a method."""
    return arg >> 1 if VERSION >= (3, 12) else arg


def common_constants() -> list[object]:
    """The constants ``LOAD_COMMON_CONSTANT`` (3.15) loads, by argument."""
    return list(getattr(opcode, "_common_constants", ()))


def slots(frame: str) -> int:
    """The stack slots a frame's body runs above, which a goto out of it drops: ``for``
    (its iterator, and from 3.14 the index or ``NULL`` beside it), ``async for`` (its
    iterator), ``with``/``async with`` (the bound ``__exit__``, and from 3.14 its
    ``self``), ``except`` (the exception it replaced)."""
    if frame == "for":
        return for_slots()
    if frame in ("with", "async with"):
        return 2 if VERSION >= (3, 14) else 1
    return 1


def for_slots() -> int:
    """The stack slots a ``for`` loop's body runs above: the iterator, and from 3.14 the
    index or ``NULL`` beside it (what ``POP_ITER`` pops)."""
    pop_iter = opcode.opmap.get("POP_ITER")
    return 1 if pop_iter is None else -dis.stack_effect(pop_iter)


# How the location table lays out instructions at one position: one entry (or as many of
# 8 code units as it needs) per run of them (3.12 and later), or per instruction (3.11).
MERGED_LOCATION_RUNS = VERSION >= (3, 12)


# The conditional jump taken when the value on top is true: forward only, which is the only
# direction gotopy's searches jump in (3.11 names the direction).
JUMP_IF_TRUE = "POP_JUMP_FORWARD_IF_TRUE" if "POP_JUMP_FORWARD_IF_TRUE" in opcode.opmap else "POP_JUMP_IF_TRUE"

_COMPARISONS: dict[str, list[tuple[str, int]]] = {}


def comparison(operator: str) -> list[tuple[str, int]]:
    """What compares the two values on top of the stack with ``operator`` (``<`` or
    ``==``) and leaves what ``JUMP_IF_TRUE`` tests, as this version's compiler writes
    ``if a < b:``: ``COMPARE_OP`` with this version's argument (3.12 adds a mask, 3.13 a
    bit that makes the result a ``bool``), then ``TO_BOOL`` where it is needed."""
    if operator not in _COMPARISONS:
        template = compile(f"def f(a, b):\n    if a {operator} b:\n        return 1\n", "", "exec")
        function = next(c for c in template.co_consts if hasattr(c, "co_code"))
        found: list[tuple[str, int]] = []
        for instr in dis.get_instructions(function):
            if instr.opname == "COMPARE_OP" or found and instr.opname == "TO_BOOL":
                found.append((instr.opname, instr.arg or 0))
            elif found:
                break
        _COMPARISONS[operator] = found
    return _COMPARISONS[operator]
