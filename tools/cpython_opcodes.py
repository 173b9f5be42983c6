"""Prints the opcode table of the CPython that runs it, as `src/cpython/opcodes/3.X.txt` holds
it: what the interpreter itself says of each opcode (`opcode.opmap`, the inline cache sizes,
`opcode.hasarg`, `opcode.hasjrel`, `dis.stack_effect`), nothing gotopy adds.

    tools/pythons | while read -r version python; do
        "$python" tools/cpython_opcodes.py > "src/cpython/opcodes/$version.txt"
    done

One line per opcode below 256: number, name, inline cache units, flags (`a` takes an
argument, `j` a relative jump), then its stack effect without and with the jump. An effect
is a formula in the argument that the table is checked against, for every argument up to
1,024 and for thousands of larger ones: a constant, plus terms `K*S:W` (K times the W bits
of the argument from bit S), plus exceptions `=A:E` (argument A has effect E); `?` when the
interpreter gives none (instrumented opcodes, which no code object holds). The unit test of
`gotopy::cpython::opcodes` runs this on every version and compares with the committed files.
"""

from __future__ import annotations

import dis
import opcode
import random
import sys

BITS = 32
SMALL = 1024


def effect(op: int, arg: int | None, jump: bool) -> int | None:
    try:
        return dis.stack_effect(op, arg, jump=jump)
    except (ValueError, TypeError):
        return None


def formula(op: int, takes_arg: bool, jump: bool) -> str:
    """The stack effect of ``op`` as a formula in its argument (see the module's doc)."""
    if not takes_arg:
        value = effect(op, None, jump)
        return "?" if value is None else str(value)
    base = effect(op, 0, jump)
    if base is None:
        return "?"
    weights = []
    for bit in range(BITS):
        value = effect(op, 1 << bit, jump)
        # A bit whose effect the interpreter does not give (it overflows a C int) counts
        # nothing: such arguments never occur.
        weights.append(0 if value is None else value - base)
    # Runs of bits whose weights double are one field of the argument.
    terms: list[tuple[int, int, int]] = []
    bit = 0
    while bit < BITS:
        if weights[bit] == 0:
            bit += 1
            continue
        start = bit
        while bit + 1 < BITS and weights[bit + 1] == 2 * weights[bit]:
            bit += 1
        terms.append((weights[start], start, bit + 1 - start))
        bit += 1

    def predicted(arg: int) -> int:
        return base + sum(k * ((arg >> s) & ((1 << w) - 1)) for k, s, w in terms)

    exceptions = []
    for arg in range(SMALL):
        value = effect(op, arg, jump)
        if value is not None and value != predicted(arg):
            exceptions.append((arg, value))
    rng = random.Random(op * 2 + jump)
    for _ in range(4000):
        arg = rng.randrange(SMALL, 1 << 28)
        value = effect(op, arg, jump)
        if value is not None and value != predicted(arg):
            sys.exit(f"{opcode.opname[op]}: no formula fits the effect of argument {arg}")
    text = str(base)
    text += "".join(f" {k}*{s}:{w}" for k, s, w in terms)
    text += "".join(f" ={a}:{e}" for a, e in exceptions)
    return text


def cache_sizes() -> dict[int, int]:
    entries = opcode._inline_cache_entries  # type: ignore[attr-defined]
    if isinstance(entries, list):
        return {op: size for op, size in enumerate(entries)}
    return {opcode.opmap[name]: size for name, size in entries.items() if name in opcode.opmap}


def main() -> None:
    version = "{}.{}".format(*sys.version_info[:2])
    takes_arg = set(getattr(opcode, "hasarg", range(opcode.HAVE_ARGUMENT, 256)))
    jumps = set(opcode.hasjrel)
    caches = cache_sizes()
    print(f"# CPython {version}: tools/cpython_opcodes.py wrote this from the interpreter; do not edit")
    print("# number name caches flags effect | effect when jumping")
    for name, op in sorted(opcode.opmap.items(), key=lambda item: item[1]):
        if op >= 256:
            continue
        flags = ("a" if op in takes_arg else "") + ("j" if op in jumps else "")
        fall = formula(op, op in takes_arg, False)
        taken = formula(op, op in takes_arg, True)
        print(f"{op} {name} {caches.get(op, 0)} {flags or '-'} {fall} | {taken}")


if __name__ == "__main__":
    main()
