"""A module of N small goto functions, as a code generator writes one function per source
routine: at module level, or as methods of one class (`--methods`). Function i sums
n + i for n counting down from 4 through a label, so run with goto the module prints
10 * N + 2 * N * (N - 1), the sum of every function's result.

    python3 scopes.py N [--methods] [--plain]

`--plain` replaces every marker by `pass` and leaves out the decorator: the baseline, the
same code without goto. Used for docs/performance.md ("Many scopes").
"""

from __future__ import annotations

import argparse
import sys


def source(n, methods=False, plain=False):
    indent = "    " if methods else ""
    out = [] if plain else ["from goto import goto, label\n\n\n"]
    if methods:
        out.append("class C:\n")
    for i in range(n):
        if not plain:
            out.append(f"{indent}@goto\n")
        params = "self, n" if methods else "n"
        top = "pass" if plain else "label .top"
        again = "pass" if plain else "goto .top"
        # Without goto the loop runs once: the plain module only needs to compile.
        out.append(
            f"{indent}def f{i}({params}):\n"
            f"{indent}    s = 0\n"
            f"{indent}    {top}\n"
            f"{indent}    if n <= 0:\n"
            f"{indent}        return s\n"
            f"{indent}    s += n + {i}\n"
            f"{indent}    n -= 1\n"
            f"{indent}    {again}\n"
            f"{indent}    return s\n\n"
        )
    owner = "C()" if methods else "sys.modules[__name__]"
    out.append(f"\nimport sys\n\nprint(sum(getattr({owner}, f'f{{i}}')(4) for i in range({n})))\n")
    return "".join(out)


def main():
    parser = argparse.ArgumentParser(description="Many small goto functions.")
    parser.add_argument("functions", type=int)
    parser.add_argument("--methods", action="store_true", help="methods of one class")
    parser.add_argument("--plain", action="store_true", help="markers replaced by pass")
    args = parser.parse_args()
    sys.stdout.write(source(args.functions, args.methods, args.plain))


if __name__ == "__main__":
    main()
