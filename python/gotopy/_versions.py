"""What differs between CPython versions and is not in ``opcode`` or ``dis``: the two
tables of a code object that hold offsets, and the instructions that leave a frame.

The exception-table and location-table formats are the same from 3.11 to 3.15
(``Objects/exception_handling_notes.txt``, ``Objects/locations.md``); the slots a ``for``
loop keeps on the stack are not (one before 3.14, two from 3.14). Each fact is checked on
that version's own compiler output by the class ``Versions`` of ``python/tests/test_run.py``;
nothing else in gotopy compares version numbers.
"""

from __future__ import annotations

import dis
import opcode
import sys
from collections.abc import Iterator

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


# Exception table: entries of (start, length, target, depth << 1 | lasti) in code units,
# each field a varint of 6-bit groups, most significant first, 64 = more follow, and 128
# set on the first byte of an entry.


def _read(data: bytes, at: int) -> tuple[int, int]:
    byte = data[at]
    value = byte & 63
    while byte & 64:
        at += 1
        byte = data[at]
        value = value << 6 | byte & 63
    return value, at + 1


def exception_entries(data: bytes) -> Iterator[tuple[int, int, int, int, bool]]:
    """``(start, end, target, depth, lasti)`` in bytes, ``end`` exclusive."""
    at = 0
    while at < len(data):
        start, at = _read(data, at)
        length, at = _read(data, at)
        target, at = _read(data, at)
        packed, at = _read(data, at)
        yield 2 * start, 2 * (start + length), 2 * target, packed >> 1, bool(packed & 1)


def _write(out: bytearray, value: int, first: int) -> None:
    groups = []
    while True:
        groups.append(value & 63)
        value >>= 6
        if not value:
            break
    groups.reverse()
    for index, group in enumerate(groups):
        more = 64 if index < len(groups) - 1 else 0
        out.append(group | more | (first if index == 0 else 0))


def encode_exceptions(runs: list[tuple[int, int, int, int, bool]]) -> bytes:
    """The table for per-instruction ``(start, end, target, depth, lasti)`` in code units,
    consecutive instructions under the same handler merged into one entry."""
    merged: list[list[int]] = []  # start, end, target, depth, lasti
    for start, end, target, depth, lasti in runs:
        last = merged[-1] if merged else None
        if last and last[1] == start and last[2:] == [target, depth, int(lasti)]:
            last[1] = end
        else:
            merged.append([start, end, target, depth, int(lasti)])
    out = bytearray()
    for start, end, target, depth, lasti_bit in merged:
        _write(out, start, 128)
        _write(out, end - start, 0)
        _write(out, target, 0)
        _write(out, depth << 1 | lasti_bit, 0)
    return bytes(out)


# Location table: entries of 1 to 8 code units, a first byte 128 | code << 3 | (units - 1),
# lines relative to the previous entry's line, starting at co_firstlineno.


def _varint(out: bytearray, value: int) -> None:
    while value >= 64:
        out.append(64 | value & 63)
        value >>= 6
    out.append(value)


def _svarint(out: bytearray, value: int) -> None:
    _varint(out, (-value) << 1 | 1 if value < 0 else value << 1)


Position = tuple[int | None, int | None, int | None, int | None]


def encode_locations(instrs: list[tuple[Position, int]], first_line: int) -> bytes:
    """The table for ``(position, code units)`` per instruction, as CPython's assembler
    writes it: the shortest form that holds each position."""
    runs: list[list] = []
    for position, units in instrs:
        # 3.12's assembler writes one run per location, 3.11's one per instruction.
        if runs and runs[-1][0] == position and VERSION >= (3, 12):
            runs[-1][1] += units
        else:
            runs.append([position, units])
    out = bytearray()
    line = first_line
    for position, units in runs:
        while units:
            size = min(units, 8)
            units -= size
            line = _entry(out, position, size, line)
    return bytes(out)


def _entry(out: bytearray, position: Position, size: int, line: int) -> int:
    start, end_line, column, end_column = position
    head = 128 | (size - 1)
    if start is None:
        out.append(head | 15 << 3)
        return line
    delta = start - line
    if column is None or end_column is None:
        if end_line in (start, None):
            out.append(head | 13 << 3)
            _svarint(out, delta)
            return start
    elif end_line == start:
        if delta == 0 and column < 80 and 0 <= end_column - column < 16:
            out.append(head | (column // 8) << 3)
            out.append((column % 8) << 4 | (end_column - column))
            return start
        if 0 <= delta < 3 and column < 128 and end_column < 128:
            out.append(head | (10 + delta) << 3)
            out += bytes((column, end_column))
            return start
    out.append(head | 14 << 3)
    _svarint(out, delta)
    _varint(out, (end_line if end_line is not None else start) - start)
    _varint(out, column + 1 if column is not None else 0)
    _varint(out, end_column + 1 if end_column is not None else 0)
    return start


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
