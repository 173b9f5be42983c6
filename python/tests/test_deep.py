"""Deep input never crashes the interpreter (issue 39): the shapes of ``tests/deep/shapes.py``
through the package's routes, each in a child process, so that a crash shows as a signal.

- Just under each bound, ``python -m gotopy run`` runs the module and its assertions hold,
  and this interpreter runs the same module without goto the same way (the oracle).
- Just over, ``python -m gotopy check`` reports CPython's words with status 1.
- Far beyond (10^5 levels; 1,000 of indentation), the import hook and ``gotopy.compile``
  raise ``SyntaxError`` (or CPython's ``MemoryError``/``RecursionError``), and the process
  goes on; ``python -m gotopy check`` and ``run`` exit with status 1.

Needs the package installed in the running interpreter (tests/cpython.rs). Standard library
only.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("shapes", ROOT / "tests" / "deep" / "shapes.py")
assert _spec is not None and _spec.loader is not None
shapes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shapes)


def far(name: str) -> int:
    return 1_000 if shapes.SHAPES[name][0] == shapes.INDENTATION else 100_000


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

    def test_just_under_each_bound_the_module_runs_as_cpython_runs_it(self) -> None:
        for name, (_, under, _, _) in shapes.SHAPES.items():
            if name == "f-strings" and sys.version_info < (3, 12):
                continue  # 3.11 compiles no f-string nested in one of the same quote
            with self.subTest(name):
                ours = self.gotopy("run", str(self.write(name, under)))
                self.assertEqual((ours.returncode, ours.stdout), (0, "ok\n"), ours.stderr[-2000:])
                plain = self.write(name, under, plain=True)
                theirs = subprocess.run([sys.executable, str(plain)], capture_output=True, text=True)
                self.assertEqual((theirs.returncode, theirs.stdout), (0, "ok\n"), theirs.stderr[-2000:])

    def test_just_over_each_bound_check_gives_cpythons_words(self) -> None:
        for name, (limit, _, over, _) in shapes.SHAPES.items():
            with self.subTest(name):
                result = self.gotopy("check", str(self.write(name, over)))
                self.assertEqual(result.returncode, 1, result.stdout[-2000:] + result.stderr[-2000:])
                self.assertIn(f"error[G000]: syntax error: {limit}", result.stdout)

    def test_far_beyond_each_bound_every_route_raises_and_the_process_goes_on(self) -> None:
        paths = {name: self.write(name, far(name)) for name in shapes.SHAPES}
        child = textwrap.dedent(
            """
            import sys
            import gotopy
            sys.path.insert(0, sys.argv[1])
            gotopy.install()
            for path in sys.argv[2:]:
                name = path.rsplit("/", 1)[-1][:-3]
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


if __name__ == "__main__":
    unittest.main()
