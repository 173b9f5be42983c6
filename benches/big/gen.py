"""One big generated goto function, as a code generator writes it: N basic blocks of
three-address code, each under its own label with a temporary of its own (`t7`: such
generators number them through the function), with conditional gotos back to earlier
blocks and forward to later ones (the last block goes back to the first), nested `if`s, and
calls to procedures through a stack of return labels (`stack.append("R7"); goto .P2` ...
`label .ret; goto *stack.pop()`).

    python3 gen.py N [--seed S] [--plain] [--main STEPS] [--return-in-each] [--spin]
    python3 gen.py N [--seed S] --expect STEPS [SPIN]

The module defines `program(steps)`, which runs `steps` blocks and returns `(a, b, n)`.
`--plain` replaces every marker by `pass` and leaves out the import and the decorator (the
baseline of the benchmark: the same code without goto). `--main STEPS` adds a line that
prints `program(STEPS)`. `--return-in-each` ends each procedure with a `goto *stack.pop()`
of its own instead of a `goto .ret` to the shared one: N/64 computed gotos, each over every
label (docs/performance.md, "Many computed gotos"). `--spin` adds a tight goto loop after
every label (`label .spin` / `if i < spin:` ... `goto .spin`), which `program(steps, spin)`
runs `spin` times once the blocks are done. `--expect STEPS [SPIN]` prints what
`program(STEPS)` (or `program(STEPS, SPIN)`) returns, computed by walking the same blocks
here, without goto: the oracle of the benchmark's results.

Used by benches/big.rs and benches/big/run.py (docs/performance.md).
"""

from __future__ import annotations

import argparse
import random
import sys


def blocks(n, seed=1):
    """The program as data: for each block its multiplier, the earlier block it may jump
    back to, the later block it may jump forward to (or None), the procedure it calls (or
    None), and whether it has nested `if`s; and the number of procedures."""
    rng = random.Random(seed)
    procedures = max(1, n // 64)
    made = []
    for i in range(n):
        made.append(
            (
                rng.randrange(3, 1000, 2),
                rng.randrange(0, i + 1),
                rng.randrange(i + 1, n) if i + 1 < n and rng.random() < 0.5 else None,
                rng.randrange(procedures) if rng.random() < 0.125 else None,
                rng.random() < 0.33,
            )
        )
    return made, procedures


def source(n, seed=1, plain=False, main=None, return_in_each=False, spin=False):
    made, procedures = blocks(n, seed)

    def goto(target):
        return "pass" if plain else f"goto .{target}"

    def label(name):
        return "pass" if plain else f"label .{name}"

    out = []
    emit = out.append
    if not plain:
        emit("from goto import goto, label\n\n\n@goto\n")
    emit(f"def program(steps{', spin=0' if spin else ''}):\n")
    emit("    stack = []\n    a = 1\n    b = n = 0\n")
    for i, (k, back, forward, call, nested) in enumerate(made):
        emit(f"    {label(f'B{i}')}\n")
        emit(f"    t{i} = a * {k} + {i + 1}\n    a = t{i} % 65521\n")
        emit("    b = (b + a) & 0xFFFF\n")
        emit("    n += 1\n")
        emit(f"    if n >= steps:\n        {goto('end')}\n")
        emit(f"    if a & 7 == 0:\n        {goto(f'B{back}')}\n")
        if call is not None:
            emit(f"    stack.append('R{i}')\n    {goto(f'P{call}')}\n    {label(f'R{i}')}\n")
        if nested:
            emit("    if b & 1:\n        if a & 2:\n            b ^= a\n        else:\n")
            emit("            b += 1\n")
        if forward is not None:
            emit(f"    if a & 3 == 1:\n        {goto(f'B{forward}')}\n")
    emit(f"    {goto('B0')}\n")
    for p in range(procedures):
        emit(f"    {label(f'P{p}')}\n")
        emit(f"    b = (b * 3 + {p}) & 0xFFFF\n")
        if return_in_each:
            emit("    pass\n" if plain else "    goto *stack.pop()\n")
        else:
            emit(f"    {goto('ret')}\n")
    emit(f"    {label('ret')}\n")
    emit("    pass\n" if plain else "    goto *stack.pop()\n")
    emit(f"    {label('end')}\n")
    if spin:
        # A tight loop after all the labels: `spin` rounds of it, once the blocks are done.
        emit(f"    i = 0\n    {label('spin')}\n    if i < spin:\n")
        emit(f"        b = (b + i) & 0xFFFF\n        i += 1\n        {goto('spin')}\n")
    emit("    return a, b, n\n")
    if main is not None:
        emit(f"\n\nprint(program({main}))\n")
    return "".join(out)


def expect(n, steps, spin=0, seed=1):
    """What `program(steps, spin)` returns, by walking the blocks without goto."""
    made, _ = blocks(n, seed)
    a = 1
    b = count = 0
    i = 0
    while True:
        if i == n:
            i = 0
        k, back, forward, call, nested = made[i]
        a = (a * k + i + 1) % 65521
        b = (b + a) & 0xFFFF
        count += 1
        if count >= steps:
            for i in range(spin):
                b = (b + i) & 0xFFFF
            break
        if a & 7 == 0:
            i = back
            continue
        if call is not None:
            b = (b * 3 + call) & 0xFFFF
        if nested and b & 1:
            if a & 2:
                b ^= a
            else:
                b += 1
        if forward is not None and a & 3 == 1:
            i = forward
            continue
        i += 1
    return a, b, count


def main():
    parser = argparse.ArgumentParser(description="One big generated goto function.")
    parser.add_argument("blocks", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="markers replaced by pass")
    parser.add_argument("--main", type=int, metavar="STEPS", help="print program(STEPS)")
    parser.add_argument(
        "--return-in-each",
        action="store_true",
        help="each procedure returns by a computed goto of its own",
    )
    parser.add_argument(
        "--spin",
        action="store_true",
        help="a tight goto loop after the blocks: program(steps, spin) runs it spin times",
    )
    parser.add_argument(
        "--expect",
        type=int,
        nargs="+",
        metavar=("STEPS", "SPIN"),
        help="what program(STEPS) (or program(STEPS, SPIN)) returns",
    )
    args = parser.parse_args()
    if args.expect is not None:
        print(expect(args.blocks, *args.expect[:2], seed=args.seed))
    else:
        sys.stdout.write(
            source(args.blocks, args.seed, args.plain, args.main, args.return_in_each, args.spin)
        )


if __name__ == "__main__":
    main()
