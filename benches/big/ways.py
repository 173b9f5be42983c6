"""One goto function of N labels, half of them in a `for` loop and half after it, with a
computed goto in every sixteenth block of the loop, over every label: those in the loop
are reached by going on in it, those after it by leaving it, two ways out of each computed
goto (docs/performance.md, "Many scopes, many computed gotos"). With `--loops`, every
sixteen labels are a loop of their own, eight in it with a computed goto and eight after
it: N/16 computed gotos in as many frames. Without goto the module prints the sum of the
blocks' steps, `N // 2 + 2 * (N - N // 2)` (N a multiple of 16 with `--loops`): the
computed gotos never run (without `--jumps`).

    python3 ways.py N [--loops] [--plain] [--jumps] [--expect STEPS]

`--plain` replaces every marker by `pass` and leaves out the import and the decorator.
With `--loops --jumps` (N a multiple of 32) the computed gotos run: while `n < steps`, the
goto at the end of each loop jumps to the first label after loop number `n % (N // 16)`,
and the function returns `n` (the jump-heavy run of `run.py --ways`); `n` is even at each
goto and the number of loops too, so no jump picks the last loop, and the function only
returns once `n` has reached `steps`. The module prints `program(100)` when run as a
script, nothing when imported. `--expect STEPS` prints what `program(STEPS)` returns, by
walking the blocks without goto.
"""

from __future__ import annotations

import argparse


def source(n: int, loops: bool = False, plain: bool = False, jumps: bool = False) -> str:
    def marker(text: str) -> str:
        return "pass" if plain else text

    def loop(first: int, count: int) -> None:
        out.append("    for _ in range(1):\n")
        for i in range(first, first + count):
            out.append(f"        {marker(f'label .a{i}')}\n        n += 1\n")
            if (i == first + count - 1) if loops else (i % 16 == 15):
                test, pick = ("n < steps", "n % groups") if jumps else ("n < 0", "n % 2")
                out.append(f"        if {test}:\n            {marker(f'goto *names[{pick}]')}\n")

    def after(first: int, count: int) -> None:
        for i in range(first, first + count):
            out.append(f"    {marker(f'label .b{i}')}\n    n += 2\n")

    out = [] if plain else ["from goto import goto, label\n\n\n@goto\n"]
    out.append("def program(steps):\n    n = 0\n")
    if jumps:
        out.append(f"    groups = {n // 16}\n")
        out.append("    names = ['b%d' % (8 * k) for k in range(groups)]\n")
    else:
        out.append("    names = ['a0', 'b0']\n")
    if loops:
        for first in range(0, n // 2, 8):
            loop(first, 8)
            after(first, 8)
    else:
        loop(0, n // 2)
        after(0, n - n // 2)
    out.append("    return n\n\n\n")
    # A module that runs on import would print into run.py's measurements.
    if jumps:
        out.append('if __name__ == "__main__":\n    print(program(100))\n')
    else:
        out.append("print(program(0))\n")
    return "".join(out)


def expect(n: int, steps: int) -> int:
    """What `program(steps)` of `--loops --jumps` returns, by walking its groups."""
    groups, count, group, in_loop = n // 16, 0, 0, True
    while True:
        if in_loop:
            count += 8
            if count < steps:
                group, in_loop = count % groups, False
                continue
        count += 16
        group, in_loop = group + 1, True
        if group == groups:
            return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--loops", action="store_true")
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--jumps", action="store_true")
    parser.add_argument("--expect", type=int, metavar="STEPS")
    args = parser.parse_args()
    if (args.jumps or args.expect is not None) and not (args.loops and args.n % 32 == 0 < args.n):
        parser.error("--jumps and --expect go with --loops and N a multiple of 32")
    if args.expect is not None:
        print(expect(args.n, args.expect))
        return
    print(source(args.n, args.loops, args.plain, args.jumps), end="")


if __name__ == "__main__":
    main()
