"""The errors of every route without gotopy's frames.

- A ``GotoSyntaxError`` raised by the decorator, ``gotopy.compile`` or the import hook, and a
  runtime error in a module the hook imported, show no frame of the installed package:
  the traceback ends at the user's call, or shows the ``import`` line and the module's own
  place as CPython shows a syntax error or a runtime error in any imported module.

Needs the package installed in the running interpreter (tests/cpython.rs). Standard library
only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import gotopy

PACKAGE = Path(gotopy.__file__).resolve().parent

# An error whose diagnostic has a help line: a jump into a `for` body.
INTO_FOR = textwrap.dedent(
    """\
    @goto
    def f(items):
        goto .inside
        for x in items:
            label .inside
    """
)


def run(args: list[str], cwd: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "NO_COLOR")}
    env["NO_COLOR"] = "1"
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, input=stdin, env=env)


class Tracebacks(unittest.TestCase):
    """Each program runs in a child process; its traceback names no file of the package."""

    def frames(self, stderr: str) -> list[tuple[str, str]]:
        """Each frame's file name (not its directory) and line, and the place a
        ``SyntaxError`` shows."""
        found = re.findall(r'^  File "([^"]+)", line (\d+)', stderr, re.MULTILINE)
        return [(Path(file).name, line) for file, line in found]

    def run_program(self, directory: str, name: str, text: str) -> subprocess.CompletedProcess[str]:
        Path(directory, name).write_text(text)
        result = run([sys.executable, name], directory)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn(str(PACKAGE), result.stderr)
        self.assertNotIn("gotopy/_", result.stderr)
        return result

    def test_the_decorator_ends_at_the_users_decorator(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            result = self.run_program(directory, "prog.py", "from goto import goto, label\n\n" + INTO_FOR)
            # The decorated definition's line, then the place of the error.
            self.assertEqual(self.frames(result.stderr), [("prog.py", "3"), ("prog.py", "5")])
            self.assertIn("gotopy.GotoSyntaxError: G003: ", result.stderr)
            self.assertRegex(result.stderr, r"\nhelp: a `for` body needs its iterator")

    def test_compile_ends_at_the_users_call(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            program = f"import gotopy\n\ncode = gotopy.compile({INTO_FOR!r}, 'generated.py')\n"
            result = self.run_program(directory, "prog.py", program)
            self.assertEqual(self.frames(result.stderr), [("prog.py", "3"), ("generated.py", "3")])
            self.assertIn("G003: ", result.stderr)
            self.assertIn("\nhelp: ", result.stderr)
            # Bad arguments are the caller's too, as for the built-in.
            result = self.run_program(directory, "args.py", "import gotopy\ngotopy.compile(1, 'x.py')\n")
            self.assertEqual(self.frames(result.stderr), [("args.py", "2")])

    def test_the_hook_shows_the_import_line_and_the_place_as_cpython_does(self) -> None:
        """Beside the same program importing a module with a plain syntax error on the same
        line, and importing the same module (with a runtime error) without the hook: the
        same frames."""
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "bad.py").write_text("from goto import goto, label\n" + INTO_FOR)
            Path(directory, "plain_bad.py").write_text("x = 1\n\n\nfor\n")
            ours = self.run_program(directory, "prog.py", "import gotopy\ngotopy.install()\nimport bad\n")
            theirs = self.run_program(directory, "plain.py", "import gotopy\n\nimport plain_bad\n")
            shape = [(f.replace("plain_", "").replace("plain", "prog"), n) for f, n in self.frames(theirs.stderr)]
            self.assertEqual(self.frames(ours.stderr), shape)
            self.assertEqual(shape, [("prog.py", "3"), ("bad.py", "4")])
            self.assertIn("G003: ", ours.stderr)
            self.assertIn("\nhelp: ", ours.stderr)
            # A runtime error in a module the hook compiled, as without the hook.
            Path(directory, "fails.py").write_text(
                "from goto import goto, label\n\n@goto\ndef f():\n    goto .end\n    label .end\n\n"
                "def g():\n    return 1 / 0\n\ng()\n"
            )
            hooked = self.run_program(directory, "hooked.py", "import gotopy; gotopy.install()\nimport fails\n")
            unhooked = self.run_program(directory, "unhooked.py", "import gotopy\nimport fails\n")
            self.assertEqual(hooked.stderr.replace("hooked.py", "X"), unhooked.stderr.replace("unhooked.py", "X"))
            self.assertEqual(len(self.frames(hooked.stderr)), 3)

if __name__ == "__main__":
    unittest.main()
