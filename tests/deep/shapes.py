"""Deep inputs: each kind of nesting CPython bounds, at a depth, as a runnable module.

One home for the shapes that `tests/deep.rs` (the binary's commands) and
`python/tests/test_deep.py` (the package's routes) try. Each shape is a module with a
goto-decorated function, so that every route rewrites it, and the nesting under test in one
statement; run, it asserts its own result (worked out from the shape, not from gotopy) and
prints `ok`.

    python3 tests/deep/shapes.py SHAPE DEPTH     # the module, on standard output
    python3 tests/deep/shapes.py --plain SHAPE DEPTH  # the same without goto
    python3 tests/deep/shapes.py --list          # one line per shape: name, limit, under, over

`limit` names the message CPython and gotopy give past the shape's bound; `under` is a depth
every CPython 3.11 to 3.15 and gotopy accept, `over` the first depth gotopy refuses. Standard
library only; runs on Python 3.8 and later.
"""

from __future__ import annotations

import sys

HEAD = '''from goto import goto, label


@goto
def countdown(n):
    label .top
    if n > 0:
        n -= 1
        goto .top
    return n


assert countdown(3) == 0
'''

# The same module without goto: what CPython runs as the oracle.
PLAIN = '''def countdown(n):
    while n > 0:
        n -= 1
    return n


assert countdown(3) == 0
'''

PARENTHESES = "too many nested parentheses"
INDENTATION = "too many levels of indentation"
FSTRINGS = "too many nested f-strings"
COMPLEX = "too complex"

# An expression chain of n operators in `x = ...` is n + 2 nodes deep (the assignment, the
# chain, its leaf); gotopy accepts 2,900.
CHAIN_OVER = 2_899


def chain(expression, expected, setup=""):
    return lambda n: f"{setup}x = {expression(n)}\nassert x == {expected(n)}, x\n"


SHAPES = {
    # Brackets of each kind, 200 open at once at most.
    "parentheses": (PARENTHESES, 200, 201, chain(lambda n: "(" * n + "1" + ")" * n, lambda n: "1")),
    "lists": (PARENTHESES, 200, 201, chain(lambda n: "[" * n + "1" + "]" * n, lambda n: "[" * n + "1" + "]" * n)),
    "dicts": (PARENTHESES, 200, 201, chain(lambda n: "{1: " * n + "1" + "}" * n, lambda n: "{1: " * n + "1" + "}" * n)),
    "calls": (PARENTHESES, 200, 201, chain(lambda n: "f(" * n + "1" + ")" * n, lambda n: "1", "def f(v):\n    return v\n")),
    "subscripts": (PARENTHESES, 200, 201, chain(lambda n: "a[" * n + "0" + "]" * n, lambda n: "0", "a = [0]\n")),
    "comprehensions": (PARENTHESES, 200, 201, chain(lambda n: "[" * (n - 2) + "[y for y in (1,)]" + "]" * (n - 2), lambda n: "[" * (n - 1) + "1" + "]" * (n - 1))),
    "f-strings": (FSTRINGS, 149, 150, chain(lambda n: 'f"{' * n + "1" + '}"' * n, lambda n: "'1'")),
    # Unary, `not` and binary chains, left (attributes, calls, subscripts) and right (`**`).
    "unary": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "-" * n + "1", lambda n: "1" if n % 2 == 0 else "-1")),
    "not": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "not " * n + "1", lambda n: str(n % 2 == 0))),
    "sum": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "1 + " * n + "1", lambda n: str(n + 1))),
    "power": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "1 ** " * n + "1", lambda n: "1")),
    "attributes": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "a" + ".b" * n, lambda n: "a", "class A:\n    pass\na = A()\na.b = a\n")),
    "call-chain": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "f" + "()" * n, lambda n: "f", "def f():\n    return f\n")),
    "subscript-chain": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "a" + "[0]" * n, lambda n: "a", "a = []\na.append(a)\n")),
    "conditional": (COMPLEX, 2_890, CHAIN_OVER, chain(lambda n: "0 if c else " * n + "1", lambda n: "1", "c = False\n")),
    # RustPython's code generator takes memory quadratic in the nesting of functions, so
    # `under` stays at 1,000 here (685 MB at 2,000 in a debug build).
    "lambdas": (COMPLEX, 1_000, CHAIN_OVER, chain(lambda n: "lambda: " * n + "1", lambda n: "x")),
    "lambdas-with-parameters": (COMPLEX, 1_000, CHAIN_OVER, chain(lambda n: "lambda a, b=-1: " * n + "1", lambda n: "x")),
    # `elif` is one level deeper than the clause before it, as in CPython's tree.
    "elif": (COMPLEX, 2_880, 2_899, lambda n: "k = -1\nif k == 0:\n    x = 0\n" + "".join(f"elif k == {i}:\n    x = {i}\n" for i in range(1, n + 1)) + "else:\n    x = -1\nassert x == -1\n"),
    # Blocks: 99 levels of indentation at most.
    "if-blocks": (INDENTATION, 99, 100, lambda n: "".join(" " * i + "if True:\n" for i in range(n)) + " " * n + "x = 1\nassert x == 1\n"),
    "functions": (INDENTATION, 99, 100, lambda n: "".join(" " * i + f"def f{i}():\n" for i in range(n)) + " " * n + "return 1\n" + "".join(" " * i + f"return f{i}()\n" for i in reversed(range(1, n))) + "assert f0() == 1\n"),
    "classes": (INDENTATION, 99, 100, lambda n: "".join(" " * i + f"class C{i}:\n" for i in range(n)) + " " * n + "x = 1\n" + "assert " + ".".join(f"C{i}" for i in range(n)) + ".x == 1\n"),
}


def module(shape, depth, plain=False):
    """The module of `shape` at `depth`, printing `ok` when its assertions hold; `plain`,
    without goto."""
    return (PLAIN if plain else HEAD) + SHAPES[shape][3](depth) + 'print("ok")\n'


def main(arguments):
    if arguments == ["--list"]:
        for name, (limit, under, over, _) in SHAPES.items():
            print(f"{name}\t{limit}\t{under}\t{over}")
        return 0
    plain = arguments[:1] == ["--plain"]
    arguments = arguments[1:] if plain else arguments
    if len(arguments) != 2 or arguments[0] not in SHAPES:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(module(arguments[0], int(arguments[1]), plain))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
