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
from gotopy._bytecode import code_objects
from gotopy._versions import exception_entries


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
        code = gotopy.compile_source(file.read(), path)
    found = [c for c in code_objects(code) if c.co_qualname == qualname]
    if len(found) != 1:
        sys.exit(f"{path}: {len(found)} code objects named {qualname}")
    sys.stdout.write(listing(found[0]))


if __name__ == "__main__":
    main()
