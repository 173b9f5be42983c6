"""Deep input through the package's routes on this CPython (issues 39 and 67): the shapes of
``tests/deep/shapes.py``, each in a child process, so that a crash shows as a signal.

The depth of the tree and the nesting of scopes are gotopy's own bounds, above what any
CPython compiles, so each of those shapes meets this interpreter's own limit first, which
varies by version, shape and stack: the tests find it (the deepest module plain ``compile()``
takes, in a child process) and hold the package to it.

- Just under this CPython's limit, ``python -m gotopy run`` runs the module and its
  assertions hold, as ``python`` runs it without goto (the oracle): the round trip through
  `ast` objects, which the module's guard asks for, holds what the compiler holds. (But on
  CPython 3.12.0 and 3.12.1, whose `ast` module converts at most about 1,500 levels: there
  it raises CPython's own ``RecursionError``, with a note that says why.)
- Just over it, ``gotopy.compile`` raises exactly what ``compile()`` of the same source
  raises (type and message), ``python -m gotopy run`` prints what ``python`` prints for the
  program without goto, ``python -m gotopy compile`` and ``gotopy compile --python`` report
  it, and ``python -m gotopy check`` reports nothing: an interpreter's own limit is not
  gotopy's.
- Just under the tokenizer's bounds (CPython's on every version), the module runs as
  ``python`` runs it; just over gotopy's bounds and the tokenizer's, ``python -m gotopy
  check`` reports gotopy's words with status 1.
- At 10^5 levels (1,000 of indentation), the import hook and ``gotopy.compile`` raise
  (``SyntaxError``, or CPython's ``MemoryError``/``RecursionError``), and the process goes
  on; ``python -m gotopy check`` and ``run`` exit with status 1.
- A 4,096-branch ``elif`` chain in a goto function: on 3.13 and later ``python -m gotopy
  run`` prints what ``python`` prints for the program without goto; on 3.11 and 3.12
  ``gotopy.compile`` raises what ``compile()`` raises.

Needs the package installed in the running interpreter (tests/cpython.rs), and
``GOTOPY_BIN`` for ``gotopy compile --python``. Standard library only.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("GOTOPY_BIN")

_spec = importlib.util.spec_from_file_location("shapes", ROOT / "tests" / "deep" / "shapes.py")
assert _spec is not None and _spec.loader is not None
shapes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shapes)

# The shapes whose bound is the tree's (its depth, its scopes), gotopy's own.
TREE = [name for name, (limit, *_) in shapes.SHAPES.items() if limit.startswith(shapes.COMPLEX)]
# CPython 3.12.0 and 3.12.1 convert trees at most about 1,500 levels deep between their
# compiler and `ast` objects (their C recursion limit; 8,000 from 3.12.2).
AST_HOLDS_LESS = (3, 12) <= sys.version_info[:3] < (3, 12, 2)


def far(name: str) -> int:
    return 1_000 if shapes.SHAPES[name][0] == shapes.INDENTATION else 100_000


# Finds, in a child process, the deepest module of each shape (without goto) that this
# CPython's `compile()` takes, and one it does not take: doubling from 1,000, then bisecting
# to a two-hundredth.
_LIMITS = """
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("shapes", sys.argv[1])
shapes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shapes)

def compiles(name, depth):
    try:
        compile(shapes.module(name, depth, plain=True), "deep.py", "exec")
    except (RecursionError, MemoryError, SyntaxError):
        return False
    return True

limits = {}
for name in sys.argv[2:]:
    low, high = 0, 1_000
    while compiles(name, high):
        low, high = high, 2 * high
    while high - low > max(1, high // 200):
        middle = (low + high) // 2
        low, high = (middle, high) if compiles(name, middle) else (low, middle)
    limits[name] = [low, high]
print(json.dumps(limits))
"""


@functools.cache
def cpython_limits() -> dict[str, tuple[int, int]]:
    """For each shape of the tree, a depth this CPython compiles and a deeper one it does not,
    at most half a percent apart, found in a child process, where nothing but the search is
    on the stack."""
    run = subprocess.run(
        [sys.executable, "-c", _LIMITS, str(ROOT / "tests" / "deep" / "shapes.py"), *TREE],
        capture_output=True,
        text=True,
        check=True,
    )
    return {name: (low, high) for name, (low, high) in json.loads(run.stdout).items()}


def under(name: str) -> int:
    """A depth just under this CPython's own limit, and gotopy's: the package compiles a dozen
    frames deeper than the search (3.11 and 3.12 take three levels of nesting a frame)."""
    low, _ = cpython_limits()[name]
    return min(low - max(100, low // 50), shapes.SHAPES[name][1])


def over(name: str) -> int:
    """A depth just over this CPython's own limit, and under gotopy's: also over what
    ``python FILE`` compiles, before any frame (3.11 and 3.12 take three levels a frame)."""
    _, high = cpython_limits()[name]
    return min(high + max(50, high // 100), shapes.SHAPES[name][2] - 1)


# Compiles each file with `compile()` and with `gotopy.compile` in one interpreter, and
# prints what each raised (type and message), one JSON line per file.
_BOTH = """
import json, sys
import gotopy

def raised(compiler, data, path):
    try:
        compiler(data, path, "exec")
    except (SyntaxError, RecursionError, MemoryError) as error:
        return [type(error).__name__, str(error)]
    return None

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    print(json.dumps([raised(compile, data, path), raised(gotopy.compile, data, path)]))
"""



def stable(text: str) -> str:
    """``text`` without what differs between two runs of one interpreter on one module:
    the stack that 3.14's "Stack overflow (used N kB)" measured, which depends on the frames
    and the environment of the thread that compiled it."""
    return re.sub(r"\(used \d+ kB\)", "(used N kB)", text)


class Deep(unittest.TestCase):
    scratch: Path

    @classmethod
    def setUpClass(cls) -> None:
        cls._directory = tempfile.TemporaryDirectory()
        cls.scratch = Path(cls._directory.name)

    @classmethod
    def tearDownClass(cls) -> None:
        cls._directory.cleanup()

    def write(self, name: str, depth: int, plain: bool = False) -> Path:
        suffix = "_plain" if plain else ""
        path = self.scratch / f"deep_{name.replace('-', '_')}_{depth}{suffix}.py"
        path.write_text(shapes.module(name, depth, plain))
        return path

    def gotopy(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gotopy", *args], capture_output=True, text=True)

    def python(self, path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(path)], capture_output=True, text=True)

    def both(self, *paths: Path) -> list[list[list[str] | None]]:
        """What ``compile()`` and ``gotopy.compile`` raise for each file, in one child."""
        run = subprocess.run(
            [sys.executable, "-c", _BOTH, *map(str, paths)], capture_output=True, text=True
        )
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        return [json.loads(line) for line in run.stdout.splitlines()]

    def assert_runs_as_cpython_runs_it(self, name: str, depth: int) -> None:
        ours = self.gotopy("run", str(self.write(name, depth)))
        self.assertEqual((ours.returncode, ours.stdout), (0, "ok\n"), ours.stderr[-2000:])
        theirs = self.python(self.write(name, depth, plain=True))
        self.assertEqual((theirs.returncode, theirs.stdout), (0, "ok\n"), theirs.stderr[-2000:])

    def test_just_under_each_bound_the_module_runs_as_cpython_runs_it(self) -> None:
        for name, (_, under, _, _) in shapes.SHAPES.items():
            if name in TREE or name == "f-strings" and sys.version_info < (3, 12):
                continue  # 3.11 compiles no f-string nested in one of the same quote
            with self.subTest(name):
                self.assert_runs_as_cpython_runs_it(name, under)

    def test_without_a_deep_stack_a_deep_module_compiles_or_raises_and_never_crashes(self) -> None:
        """Where no thread with gotopy's deep stack can be had (here ``on_deep_stack`` finds
        none, as when the system refuses its size), a deep module's tree does
        not make its round trip on the caller's stack, which its conversions can overflow
        (the main thread of CPython 3.12 on Windows did at 2,500 levels of `elif`, under
        gotopy's raised limit and under CPython's own): an error, not a crash."""
        child = textwrap.dedent(
            """
            import sys
            import gotopy
            from gotopy import _gotopy
            _gotopy.on_deep_stack = lambda work: None
            try:
                gotopy.compile(open(sys.argv[1], "rb").read(), sys.argv[1])
            except (RecursionError, MemoryError) as error:
                print(type(error).__name__)
            else:
                print("compiled")
            """
        )
        for name in TREE:
            path = self.write(name, under(name))
            with self.subTest(name, depth=under(name)):
                run = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, run.stderr[-2000:])
                self.assertIn(run.stdout.strip(), {"compiled", "RecursionError"})

    def test_just_under_cpythons_own_limit_the_module_runs_as_cpython_runs_it(self) -> None:
        for name in TREE:
            depth = under(name)
            with self.subTest(name, depth=depth):
                if AST_HOLDS_LESS and depth > 1_400:
                    # CPython's own error of its `ast` module, which says why.
                    ours = self.gotopy("run", str(self.write(name, depth)))
                    self.assertEqual(ours.returncode, 1, ours.stderr[-2000:])
                    self.assertIn("RecursionError: maximum recursion depth exceeded", ours.stderr)
                    self.assertIn("cannot hold the module's tree", ours.stderr)
                    depth = 1_400
                self.assert_runs_as_cpython_runs_it(name, depth)

    def test_just_over_cpythons_own_limit_the_error_is_cpythons(self) -> None:
        paths = {name: self.write(name, over(name)) for name in TREE}
        for (name, path), (plain, ours) in zip(paths.items(), self.both(*paths.values())):
            with self.subTest(name, depth=over(name)):
                self.assertIsNotNone(plain, "compile() takes it")
                self.assertIsNotNone(ours, "gotopy.compile takes what compile() does not")
                assert plain is not None and ours is not None
                self.assertEqual(stable(str(ours)), stable(str(plain)))
                error = stable(f"{plain[0]}: {plain[1]}" if plain[1] else plain[0])
                # What `python` prints for the program without goto: the error alone.
                theirs = self.python(self.write(name, over(name), plain=True))
                run = self.gotopy("run", str(path))
                self.assertEqual((run.returncode, stable(run.stderr)), (theirs.returncode, stable(theirs.stderr)))
                self.assertEqual(stable(run.stderr).strip().splitlines()[-1], error)
                check = self.gotopy("check", str(path))
                self.assertEqual(check.returncode, 0, check.stdout[-2000:])
                compiled = self.gotopy("compile", str(path))
                self.assertEqual(compiled.returncode, 1, compiled.stderr[-2000:])
                self.assertIn(f"error: {error}", stable(compiled.stderr))
                if BINARY:
                    binary = subprocess.run(
                        [BINARY, "compile", "--python", sys.executable, str(path)],
                        capture_output=True,
                        text=True,
                    )
                    self.assertEqual(binary.returncode, 1, binary.stderr[-2000:])
                    self.assertIn(f"error: {error}", stable(binary.stdout + binary.stderr))

    def test_just_over_each_bound_check_gives_gotopys_words(self) -> None:
        for name, (limit, _, over, _) in shapes.SHAPES.items():
            with self.subTest(name):
                result = self.gotopy("check", str(self.write(name, over)))
                self.assertEqual(result.returncode, 1, result.stdout[-2000:] + result.stderr[-2000:])
                self.assertIn(f"error[G000]: syntax error: {limit}", result.stdout)

    def test_far_beyond_each_bound_every_route_raises_and_the_process_goes_on(self) -> None:
        paths = {name: self.write(name, far(name)) for name in shapes.SHAPES}
        child = textwrap.dedent(
            """
            import os
            import sys
            import gotopy
            sys.path.insert(0, sys.argv[1])
            gotopy.install()
            for path in sys.argv[2:]:
                name = os.path.basename(path)[:-3]
                for route in ("import", "compile"):
                    try:
                        if route == "import":
                            __import__(name)
                        else:
                            gotopy.compile(open(path, "rb").read(), path)
                    except (SyntaxError, MemoryError, RecursionError) as error:
                        print(route, name, type(error).__name__, str(error).splitlines()[0][:80])
                    else:
                        print(route, name, "accepted")
            print("done")
            """
        )
        run = subprocess.run(
            [sys.executable, "-c", child, str(self.scratch), *map(str, paths.values())],
            capture_output=True,
            text=True,
        )
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        lines = run.stdout.splitlines()
        self.assertEqual(lines[-1], "done")
        self.assertEqual(len(lines), 2 * len(paths) + 1, run.stdout)
        for line in lines[:-1]:
            self.assertNotIn("accepted", line)
        for name in ("parentheses", "unary", "lambdas", "elif", "if-blocks"):
            with self.subTest(name):
                for command in ("check", "run"):
                    result = self.gotopy(command, str(paths[name]))
                    self.assertEqual(result.returncode, 1, result.stderr[-2000:])
                    self.assertIn("syntax error", result.stdout + result.stderr)

    def test_a_chain_of_4096_elifs_runs_where_cpython_compiles_it(self) -> None:
        path = self.write("elif", 4_096)
        plain = self.write("elif", 4_096, plain=True)
        theirs = self.python(plain)
        ours = self.gotopy("run", str(path))
        [(compiled, gotopy_compiled)] = self.both(path)
        self.assertEqual(gotopy_compiled, compiled)
        # CPython on Windows, whose main thread has a stack of 1 MB, has a lower C recursion
        # limit: 3.13 raises there too, and gotopy must raise as it does (above).
        if sys.version_info >= (3, 13) and os.name != "nt":
            self.assertIsNone(compiled)
            self.assertEqual((theirs.returncode, theirs.stdout), (0, "ok\n"), theirs.stderr[-2000:])
        else:
            # 3.11 and 3.12 compile no `elif` chain this long.
            self.assertIsNotNone(compiled)
        self.assertEqual((ours.returncode, ours.stdout, ours.stderr), (theirs.returncode, theirs.stdout, theirs.stderr))


if __name__ == "__main__":
    unittest.main()
