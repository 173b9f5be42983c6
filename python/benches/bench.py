"""Benchmarks of the CPython backend, in one process on the running interpreter.

- goto loop: ``@goto`` counting loop against the same ``while`` loop (1,000,000 iterations,
  best of 7 runs each, alternated);
- compile path: ``gotopy.compile`` (check, plan, CPython's compiler, lowering where
  there is something to lower) against ``compile()`` over every ``*.py`` file of the
  standard library (best of 3 passes each); and the whole path as if every code object had
  something to lower, both ways a module with markers takes: its source compiled as it is
  (a plan without edits to the tree), or CPython's syntax tree prepared and compiled
  (``ast.parse``, the plan's edits, ``compile()`` of the tree), then every code object
  decoded, checked and assembled again (``_gotopy.reassemble``, the native bytecode
  layer); and
  the same files each with a goto loop added, through gotopy
  (lowering that one function) against ``compile()`` of the same bytes, and through the
  tree beside CPython's own round trip through ``ast`` (``compile(ast.parse(...))``), which
  bounds that route.

Run: ``python python/benches/bench.py`` with the package installed (docs/performance.md).
"""

from __future__ import annotations

import ast
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path


import gotopy
import gotopy._compile
from gotopy import _gotopy
from gotopy._runtime import code_objects

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


# Added to each file for the compile path of a module with a rewritten function.
GOTO_LOOP = b"""

@goto
def _gotopy_bench(n):
    label .top
    if n:
        n -= 1
        goto .top
    return n
"""


def best(function, *args, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def loops() -> None:
    scope = {"goto": gotopy.goto, "label": gotopy.label}
    exec(gotopy.compile(LOOPS.encode(), "loops.py"), scope)
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
            gotopy.compile(data, path)
        except SyntaxError:
            refused += 1

    def plain(added: bytes = b"") -> Callable[[], None]:
        def run() -> None:
            for path, data in files:
                compile(data + added, path, "exec", dont_inherit=True)

        return run

    def round_trip(added: bytes = b"") -> Callable[[], None]:
        """CPython alone through its tree: ``compile(ast.parse(...))``, the floor of the
        tree route."""

        def run() -> None:
            for path, data in files:
                compile(ast.parse(data + added, path), path, "exec", dont_inherit=True)

        return run

    def through_gotopy(added: bytes = b"", tree: bool = False, again: bool = False) -> Callable[[], None]:
        """gotopy's compile path of each file with ``added`` at its end (``tree``: through
        CPython's tree, as a plan with edits takes it); ``again``: every code object decoded
        and assembled afterwards."""

        def run() -> None:
            for path, data in files:
                try:
                    code = gotopy._compile.compile_source(data + added, path, through_tree=tree)
                except SyntaxError:
                    continue
                for inner in code_objects(code) if again else ():
                    _gotopy.reassemble(inner)

        return run

    runs = {
        "plain": plain(),
        "gotopy": through_gotopy(),
        "source": through_gotopy(again=True),
        "tree": through_gotopy(tree=True, again=True),
        "plain+goto": plain(GOTO_LOOP),
        "gotopy+goto": through_gotopy(GOTO_LOOP),
        "ast+goto": round_trip(GOTO_LOOP),
        "tree+goto": through_gotopy(GOTO_LOOP, tree=True),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(3):
        for name, run in runs.items():
            times[name].append(best(run, runs=1))
    t = {name: min(found) for name, found in times.items()}

    def ratio(name: str, base: str = "plain") -> str:
        return f"{t[name]:.2f} s: {t[name] / t[base]:.2f}x"

    print(
        f"compile path over {len(files)} files ({refused} rejected by the front end): "
        f"compile() {t['plain']:.2f} s; gotopy {ratio('gotopy')}; every code object decoded "
        f"and assembled, the source compiled as it is (a plan without edits to the tree) "
        f"{ratio('source')}, the tree prepared and compiled {ratio('tree')}"
    )
    print(
        f"each file with a goto loop added: compile() {t['plain+goto']:.2f} s; gotopy "
        f"{ratio('gotopy+goto', 'plain+goto')}; through the tree instead "
        f"{ratio('tree+goto', 'plain+goto')}, where CPython's own round trip through `ast` "
        f"(compile(ast.parse(...))) takes {ratio('ast+goto', 'plain+goto')}"
    )


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    print(f"CPython {sys.version.split()[0]}")
    loops()
    if "--loops-only" not in sys.argv:
        compile_path()
