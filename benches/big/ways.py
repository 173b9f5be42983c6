"""One goto function of N labels, half of them in a `for` loop and half after it, with a
computed goto in every sixteenth block of the loop, over every label: those in the loop
are reached by going on in it, those after it by leaving it, two ways out of each computed
goto (docs/performance.md, "Many scopes, many computed gotos"). With `--loops`, every
sixteen labels are a loop of their own, eight in it with a computed goto and eight after
it: N/16 computed gotos in as many frames. Without goto the module prints the sum of the
blocks' steps, `N // 2 + 2 * (N - N // 2)` (N a multiple of 16 with `--loops`): the
computed gotos never run.

    python3 ways.py N [--loops] [--plain]

`--plain` replaces every marker by `pass` and leaves out the import and the decorator.
"""

from __future__ import annotations

import argparse


def source(n: int, loops: bool = False, plain: bool = False) -> str:
    def marker(text: str) -> str:
        return "pass" if plain else text

    def loop(first: int, count: int) -> None:
        out.append("    for _ in range(1):\n")
        for i in range(first, first + count):
            out.append(f"        {marker(f'label .a{i}')}\n        n += 1\n")
            if (i == first + count - 1) if loops else (i % 16 == 15):
                out.append(f"        if n < 0:\n            {marker('goto *names[n % 2]')}\n")

    def after(first: int, count: int) -> None:
        for i in range(first, first + count):
            out.append(f"    {marker(f'label .b{i}')}\n    n += 2\n")

    out = [] if plain else ["from goto import goto, label\n\n\n@goto\n"]
    out.append("def f(steps):\n    n = 0\n    names = ['a0', 'b0']\n")
    if loops:
        for first in range(0, n // 2, 8):
            loop(first, 8)
            after(first, 8)
    else:
        loop(0, n // 2)
        after(0, n - n // 2)
    out.append("    return n\n\n\nprint(f(0))\n")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--loops", action="store_true")
    parser.add_argument("--plain", action="store_true")
    args = parser.parse_args()
    print(source(args.n, args.loops, args.plain), end="")


if __name__ == "__main__":
    main()
