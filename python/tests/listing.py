"""Prints the code object of one function of a module compiled through gotopy as ``dis``
shows it, without offsets, so that a snapshot of it documents the lowering on one version:
jump targets, handlers and the bounds of exception-table ranges are labels ``L1``, ``L2``
... in code order, each instruction is its line, opcode and argument, and the exception
table names labels.

Usage: ``python listing.py FILE FUNCTION`` (``FUNCTION`` is a qualified name).
"""

from __future__ import annotations

import dis
import sys
import types

import gotopy
from gotopy._runtime import code_objects


def exception_entries(data: bytes) -> list[tuple[int, int, int, int, bool]]:
    """The exception table's ``(start, end, target, depth, lasti)`` in bytes, ``end``
    exclusive, read here rather than by gotopy: entries of four varints of 6-bit groups,
    most significant first, 64 = more follow."""
    values = []
    value = 0
    for byte in data:
        value = value << 6 | byte & 63
        if not byte & 64:
            values.append(value)
            value = 0
    entries = []
    for at in range(0, len(values) - 3, 4):
        start, length, target, packed = values[at : at + 4]
        entries.append((2 * start, 2 * (start + length), 2 * target, packed >> 1, bool(packed & 1)))
    return entries


def listing(code: types.CodeType) -> str:
    instructions = list(dis.get_instructions(code))
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    entries = list(exception_entries(code.co_exceptiontable))
    places = {i.argval for i in instructions if i.opcode in jumps}
    for start, end, target, _, _ in entries:
        places |= {start, end, target}
    names = {offset: f"L{number}" for number, offset in enumerate(sorted(places), 1)}
    lines = []
    for instruction in instructions:
        if instruction.offset in names:
            lines.append(f"{names[instruction.offset]}:")
        argument = instruction.argrepr or ("" if instruction.arg is None else str(instruction.arg))
        if instruction.opcode in jumps:
            argument = f"to {names[instruction.argval]}"
        line = instruction.positions.lineno if instruction.positions else None
        lines.append(f"  {line if line is not None else '--':>4}  {instruction.opname:<26} {argument}".rstrip())
    if entries:
        lines.append("exception table:")
    for start, end, target, depth, lasti in entries:
        flag = " lasti" if lasti else ""
        lines.append(f"  {names[start]} to {names.get(end, 'the end')} -> {names[target]} [{depth}]{flag}")
    return "\n".join(lines) + "\n"


def main() -> None:
    path, qualname = sys.argv[1:3]
    with open(path, "rb") as file:
        code = gotopy.compile(file.read(), path)
    found = [c for c in code_objects(code) if c.co_qualname == qualname]
    if len(found) != 1:
        sys.exit(f"{path}: {len(found)} code objects named {qualname}")
    sys.stdout.write(listing(found[0]))


if __name__ == "__main__":
    main()
