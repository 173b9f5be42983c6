"""`gotopy translate` benchmark: translated goto code against the structured code it
replaces, each pair timed in one process on plain Pythons (gotopy is not installed there).

- goto loop: goto_code.py's ``goto_loop`` translated, against plain.py's ``while_loop``
  (2,000,000 iterations; 40,000,000 on PyPy);
- lexer: goto_code.py's ``lex_goto`` (three states jumping to each other directly)
  translated, against the same lexer with a state variable, ``if state == ...``
  (``lex_if``) and ``match state`` (``lex_match``), over a 600,000-character text.

Each round times every function once, in turn, and every result is checked (the goto loop's
against its formula, the lexers' against a regular expression's count). Each interpreter
runs in several processes (timings on this kind of machine differ from process to process
by up to 15%, as the code's place in memory does); the first round of each (which warms
PyPy's JIT up) is left out. The figures are medians over all other rounds: of each time,
and of each round's ratio of the translated function's time to the baseline's.

Run (docs/performance.md)::

    cargo build --release --locked
    python3 benches/translate/run.py [--gotopy target/release/gotopy] [--rounds 11]
                                     [--processes 5] [PYTHON...]

Without PYTHON arguments it runs on CPython 3.11, 3.13 and 3.14 and PyPy 3.11 as
tools/pythons sets them up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def text(size=600_000, seed=7):
    """Words, numbers, operators and spaces, as source code has them."""
    import random

    rng = random.Random(seed)
    parts = []
    length = 0
    while length < size:
        kind = rng.random()
        if kind < 0.35:
            letters = "abcdefghijklmnopqrstuvwxyz_ABC0123"
            word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 10)))
            part = word if not word[0].isdigit() else "x" + word
        elif kind < 0.55:
            part = str(rng.randint(0, 10 ** rng.randint(1, 8)))
        else:
            part = rng.choice(" \n(),.:=+-*/[]{}\"'#")
        parts.append(part)
        length += len(part)
    return "".join(parts)[:size]


def reference(source):
    import re

    numbers = names = others = 0
    for token in re.findall(r"[0-9]+|[A-Za-z_][A-Za-z_0-9]*|[^0-9A-Za-z_]", source):
        if token[0].isdigit():
            numbers += 1
        elif token[0].isalpha() or token[0] == "_":
            names += 1
        else:
            others += 1
    return numbers, names, others


def child(directory, rounds):
    """Runs in the measured interpreter: times the translated and the plain functions."""
    sys.path[:0] = [directory, str(HERE)]
    import goto_code  # the translation, written into `directory`
    import plain

    assert "goto" not in sys.modules and "gotopy" not in sys.modules
    source = text()
    # PyPy's JIT runs the loop about 80 times faster: more rounds of it to be measurable.
    n = 40_000_000 if sys.implementation.name == "pypy" else 2_000_000
    pairs = {
        "goto loop": [("translated", goto_code.goto_loop), ("while", plain.while_loop)],
        "lexer": [("translated", goto_code.lex_goto), ("if state", plain.lex_if)],
    }
    if plain.lex_match is not None:
        pairs["lexer"].append(("match state", plain.lex_match))
    arguments = {"goto loop": n, "lexer": source}
    expected = {"goto loop": n * (n - 1) // 2, "lexer": reference(source)}
    times = {(bench, name): [] for bench, functions in pairs.items() for name, _ in functions}
    for _ in range(rounds):
        for bench, functions in pairs.items():
            for name, function in functions:
                start = time.perf_counter()
                result = function(arguments[bench])
                times[bench, name].append(time.perf_counter() - start)
                assert result == expected[bench], (bench, name, result, expected[bench])
    rounds = {}
    for (bench, name), values in times.items():
        rounds.setdefault(bench, {})[name] = values[1:] if len(values) > 1 else values
    version = sys.version.split()[0]
    if sys.implementation.name != "cpython":
        version = f"{sys.implementation.name} {version}"
    print(json.dumps({"python": version, "rounds": rounds}))


def median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def default_pythons():
    listed = subprocess.run(
        [str(ROOT / "tools/pythons"), "--pypy"], check=True, capture_output=True, text=True
    ).stdout.split("\n")
    found = dict(line.split(" ", 1) for line in listed if line)
    return [found[v] for v in ("3.11", "3.13", "3.14", "pypy3.11")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gotopy", default=str(ROOT / "target/release/gotopy"))
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("pythons", nargs="*")
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.rounds)
    with tempfile.TemporaryDirectory() as directory:
        translated = Path(directory, "goto_code.py")
        subprocess.run(
            [args.gotopy, "translate", str(HERE / "goto_code.py"), "-o", str(translated)],
            check=True,
        )
        print(f"{'Python':<16} {'benchmark':<10} {'function':<12} {'median':>10}  translated/this")
        for python in args.pythons or default_pythons():
            pooled = {}
            for _ in range(args.processes):
                output = subprocess.run(
                    [python, "-I", "-S", __file__, "--child", directory,
                     "--rounds", str(args.rounds)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                report = json.loads(output)
                for bench, functions in report["rounds"].items():
                    for name, values in functions.items():
                        pooled.setdefault(bench, {}).setdefault(name, []).append(values)
            for bench, functions in pooled.items():
                translated = functions["translated"]
                for name, runs in functions.items():
                    seconds = median([value for run in runs for value in run])
                    ratios = [
                        ours / theirs
                        for mine, other in zip(translated, runs)
                        for ours, theirs in zip(mine, other)
                    ]
                    ratio = "" if name == "translated" else f"{median(ratios):.2f}"
                    print(f"{report['python']:<16} {bench:<10} {name:<12} "
                          f"{seconds * 1000:>8.1f} ms  {ratio}")


if __name__ == "__main__":
    sys.exit(main())
