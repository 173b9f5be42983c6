"""Deep inputs: each kind of nesting that gotopy or CPython bounds, at a depth, as a runnable
module.

One home for the shapes that `tests/deep.rs` (the binary's commands), `python/tests/test_deep.py`
(the package's routes) and `src/front/depth`'s measurement of the stack try. Each shape is a module
with a goto-decorated function, so that every route rewrites it; run, it asserts its own
result (worked out from the shape, not from gotopy) and prints `ok`. The nesting under test
stands inside that function, after a `return` that a label follows, so that the plan edits
the tree (a guard) and the CPython routes compile CPython's own tree of it; the shapes of
indentation, whose 99 levels leave no room for a function around them, stand beside it.

    python3 tests/deep/shapes.py SHAPE DEPTH     # the module, on standard output
    python3 tests/deep/shapes.py --plain SHAPE DEPTH  # the same without goto
    python3 tests/deep/shapes.py --list          # one line per shape: name, limit, under, over

`limit` names gotopy's message past the shape's bound; `under` is a depth gotopy accepts and
`gotopy run` runs, `over` the first depth gotopy refuses. The bounds of brackets, indentation
and f-strings are CPython's tokenizer's, the same on every version; the depth of the tree is
gotopy's own bound (`src/front/depth/mod.rs`), above what any CPython compiles, whose own limits
vary by version, shape and stack: the package's tests find them by compiling. Standard
library only; runs on Python 3.8 and later.
"""

from __future__ import annotations

import sys

# gotopy's bounds of the tree (`MAX_DEPTH`) and of scopes nested in one another
# (`MAX_SCOPES`, in `src/front/depth/mod.rs`).
MAX_DEPTH = 100_000
MAX_SCOPES = 3_000

# A module with the nesting in a goto function: the plan guards `return result`, which a
# label follows. The function may enter the loop of its two labels at either (a second way
# in, which `if again:` never takes), so that its translation needs the dispatch loop
# whatever shapes `translate` writes as structured code.
NESTED = '''from goto import goto, label


{setup}@goto
def nested():
    again = False
    if again:
        goto .done
    goto .compute
    label .done
    result = x
    if again:
        goto .compute
    return result
    label .compute
{body}    goto .done


x = nested()
{check}
'''

# The same module without goto: what CPython runs as the oracle.
NESTED_PLAIN = '''{setup}def nested():
{body}    return x


x = nested()
{check}
'''

# The shapes of indentation stand beside a goto function.
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
SCOPES = "too complex: scopes nested"

# An expression chain of n operators in `x = ...` inside the function is n + 3 nodes deep
# (the function, the assignment, the chain, its leaf); gotopy accepts `MAX_DEPTH`.
CHAIN_OVER = MAX_DEPTH - 2
# An `elif` chain of n clauses in the function is n + 6 deep (the function, the `if`, its
# `else` clause n + 1 levels below it, and `x = -1` in that, three nodes).
ELIF_OVER = MAX_DEPTH - 5


def chain(expression, expected, setup=""):
    return lambda n: (setup, f"x = {expression(n)}\n", f"assert x == {expected(n)}, x")


def elif_chain(n):
    clauses = "".join(f"elif k == {i}:\n    x = {i}\n" for i in range(1, n + 1))
    return "", f"k = -1\nif k == 0:\n    x = 0\n{clauses}else:\n    x = -1\n", "assert x == -1, x"


def blocks(text, check):
    return lambda n: (None, text(n), check(n))


SHAPES = {
    # Brackets of each kind, 200 open at once at most.
    "parentheses": (PARENTHESES, 200, 201, chain(lambda n: "(" * n + "1" + ")" * n, lambda n: "1")),
    "lists": (PARENTHESES, 200, 201, chain(lambda n: "[" * n + "1" + "]" * n, lambda n: "[" * n + "1" + "]" * n)),
    "dicts": (PARENTHESES, 200, 201, chain(lambda n: "{1: " * n + "1" + "}" * n, lambda n: "{1: " * n + "1" + "}" * n)),
    "calls": (PARENTHESES, 200, 201, chain(lambda n: "f(" * n + "1" + ")" * n, lambda n: "1", "def f(v):\n    return v\n\n\n")),
    "subscripts": (PARENTHESES, 200, 201, chain(lambda n: "a[" * n + "0" + "]" * n, lambda n: "0", "a = [0]\n")),
    "comprehensions": (PARENTHESES, 200, 201, chain(lambda n: "[" * (n - 2) + "[y for y in (1,)]" + "]" * (n - 2), lambda n: "[" * (n - 1) + "1" + "]" * (n - 1))),
    "f-strings": (FSTRINGS, 149, 150, chain(lambda n: 'f"{' * n + "1" + '}"' * n, lambda n: "'1'")),
    # Unary, `not` and binary chains, left (attributes, calls, subscripts) and right (`**`).
    "unary": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "-" * n + "1", lambda n: "1" if n % 2 == 0 else "-1")),
    "not": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "not " * n + "1", lambda n: str(n % 2 == 0))),
    "sum": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "1 + " * n + "1", lambda n: str(n + 1))),
    "power": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "1 ** " * n + "1", lambda n: "1")),
    "attributes": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "a" + ".b" * n, lambda n: "a", "class A:\n    pass\n\n\na = A()\na.b = a\n")),
    "call-chain": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "f" + "()" * n, lambda n: "f", "def f():\n    return f\n\n\n")),
    "subscript-chain": (COMPLEX, CHAIN_OVER - 1, CHAIN_OVER, chain(lambda n: "a" + "[0]" * n, lambda n: "a", "a = []\na.append(a)\n")),
    # RustPython's code generator takes time quadratic in the nesting of conditional
    # expressions (its `finalize_code`: 10 s at 30,000 in a debug build, 2 minutes at
    # 100,000), so `under` stays at 10,000 here; `check` and `translate` take the bound.
    "conditional": (COMPLEX, 10_000, CHAIN_OVER, chain(lambda n: "0 if c else " * n + "1", lambda n: "1", "c = False\n")),
    # Every `lambda` is a scope, and RustPython's code generator takes memory and time
    # quadratic in the nesting of scopes (1.5 GB and 8 s for 3,000 `lambda:`s in a debug
    # build, 3.8 GB and 75 s with parameters), so `under` stays at 1,000 here.
    "lambdas": (SCOPES, 1_000, MAX_SCOPES, chain(lambda n: "lambda: " * n + "1", lambda n: "x")),
    "lambdas-with-parameters": (SCOPES, 1_000, MAX_SCOPES, chain(lambda n: "lambda a, b=-1: " * n + "1", lambda n: "x")),
    # `elif` is one level deeper than the clause before it, as in CPython's tree.
    "elif": (COMPLEX, ELIF_OVER - 1, ELIF_OVER, elif_chain),
    # Blocks: 99 levels of indentation at most.
    "if-blocks": (INDENTATION, 99, 100, blocks(lambda n: "".join(" " * i + "if True:\n" for i in range(n)) + " " * n + "x = 1\n", lambda n: "assert x == 1")),
    "functions": (INDENTATION, 99, 100, blocks(lambda n: "".join(" " * i + f"def f{i}():\n" for i in range(n)) + " " * n + "return 1\n" + "".join(" " * i + f"return f{i}()\n" for i in reversed(range(1, n))), lambda n: "assert f0() == 1")),
    "classes": (INDENTATION, 99, 100, blocks(lambda n: "".join(" " * i + f"class C{i}:\n" for i in range(n)) + " " * n + "x = 1\n", lambda n: "assert " + ".".join(f"C{i}" for i in range(n)) + ".x == 1")),
}


def indented(text):
    return "".join("    " + line if line.strip() else line for line in text.splitlines(keepends=True))


def module(shape, depth, plain=False):
    """The module of `shape` at `depth`, printing `ok` when its assertions hold; `plain`,
    without goto."""
    setup, body, check = SHAPES[shape][3](depth)
    if setup is None:
        text = (PLAIN if plain else HEAD) + body + check + "\n"
    else:
        template = NESTED_PLAIN if plain else NESTED
        text = template.format(setup=setup + "\n\n" if setup else "", body=indented(body), check=check)
    return text + 'print("ok")\n'


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
