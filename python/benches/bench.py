"""Benchmarks of the CPython backend, in one process on the running interpreter.

- goto loop: ``@goto`` counting loop against the same ``while`` loop (1,000,000 iterations,
  best of 7 runs each, alternated);
- compile path: ``gotopy.compile_source`` (check, plan, CPython's compiler, lowering where
  there is something to lower) against ``compile()`` over every ``*.py`` file of the
  standard library (best of 3 passes each); and the whole path as if every code object had
  something to lower: CPython's syntax tree prepared and compiled (``ast.parse``, the
  plan's edits, ``compile()`` of the tree), then every code object decoded and assembled.

Run: ``python python/benches/bench.py`` with the package installed (README, Performance).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import gotopy
from gotopy._bytecode import Body, code_objects

LOOPS = '''
@goto
def goto_loop(n):
    i = 0
    s = 0
    label .top
    if i < n:
        s += i
        i += 1
        goto .top
    return s

def while_loop(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s
'''


def best(function, *args, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def loops() -> None:
    scope = {"goto": gotopy.goto, "label": gotopy.label}
    exec(gotopy.compile_source(LOOPS.encode(), "loops.py"), scope)
    n = 1_000_000
    assert scope["goto_loop"](n) == scope["while_loop"](n)
    goto_times, while_times = [], []
    for _ in range(7):
        goto_times.append(best(scope["goto_loop"], n, runs=1))
        while_times.append(best(scope["while_loop"], n, runs=1))
    g, w = min(goto_times), min(while_times)
    print(f"goto loop {g * 1e3:.1f} ms, while loop {w * 1e3:.1f} ms: {g / w:.2f}x")


def corpus() -> list[tuple[str, bytes]]:
    library = Path(os.__file__).parent
    files = []
    for path in sorted(library.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            data = path.read_bytes()
            compile(data, str(path), "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            continue
        files.append((str(path), data))
    return files


def compile_path() -> None:
    files = corpus()
    refused = 0
    for path, data in files:
        try:
            gotopy.compile_source(data, path)
        except SyntaxError:
            refused += 1

    def plain() -> None:
        for path, data in files:
            compile(data, path, "exec", dont_inherit=True)

    def through_gotopy() -> None:
        for path, data in files:
            try:
                gotopy.compile_source(data, path)
            except SyntaxError:
                pass

    def whole_path() -> None:
        for path, data in files:
            try:
                code = gotopy.compile_source(data, path, edit=lambda tree, plan: None)
            except SyntaxError:
                continue
            for inner in code_objects(code):
                Body.decode(inner).assemble()

    p, g, w = [], [], []
    for _ in range(3):
        p.append(best(plain, runs=1))
        g.append(best(through_gotopy, runs=1))
        w.append(best(whole_path, runs=1))
    print(
        f"compile path over {len(files)} files ({refused} rejected by the front end): "
        f"gotopy {min(g):.2f} s, compile() {min(p):.2f} s: {min(g) / min(p):.2f}x; "
        f"every code object through the whole path {min(w):.2f} s: {min(w) / min(p):.2f}x"
    )


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    print(f"CPython {sys.version.split()[0]}")
    loops()
    if "--loops-only" not in sys.argv:
        compile_path()
