"""``python -m gotopy run`` and ``dis`` against this same interpreter, and the errors of
every route without gotopy's frames.

- ``run`` with FILE, ``-``, ``-c CODE``, ``-m MODULE`` (a module and a package) and a
  ``.pyc`` file that ``python -m gotopy compile`` wrote gives the program what ``python``
  gives it for the same command line: ``sys.argv``, ``sys.path[0]``, ``__file__`` and the
  module's names, the same output, traceback and exit status (``python -m`` adds frames of
  ``runpy``, which ``gotopy run -m`` does not have; they are left out of its traceback).
- ``dis`` prints what ``dis.dis`` prints for the code ``gotopy.compile`` returns.
- The error paths of ``run`` and ``dis`` (a missing file, a missing module, ``--function``
  naming nothing, undecodable bytes) print the binary's words (``GOTOPY_BIN``) and exit
  with its status.
- A ``GotoSyntaxError`` raised by the decorator, ``gotopy.compile`` or the import hook, and a
  runtime error in a module the hook imported, show no frame of the installed package:
  the traceback ends at the user's call, or shows the ``import`` line and the module's own
  place as CPython shows a syntax error or a runtime error in any imported module.

Needs the package installed in the running interpreter (tests/cpython.rs). Standard library
only.
"""

from __future__ import annotations

import dis
import inspect
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import gotopy

BINARY = os.environ.get("GOTOPY_BIN")
PACKAGE = Path(gotopy.__file__).resolve().parent

# What a program sees of how it was started.
SHOW = textwrap.dedent(
    """\
    import sys
    print(sys.argv)
    print(repr(sys.path[0]))
    print(__name__, globals().get('__file__'), __package__, __spec__ and __spec__.name)
    def inner(x):
        return 1 / x
    if len(sys.argv) > 1 and sys.argv[1] == 'fail':
        inner(0)
    """
)

ROOT = Path(__file__).resolve().parents[2]
# A goto program and the same program without goto (its oracle), for the round trip
# through `compile`.
PROGRAMS = ROOT / "tests" / "programs"

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


def outcome(result: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return result.returncode, result.stdout, result.stderr


def without_runpy(stderr: str) -> str:
    """A traceback without the frames of ``runpy`` that ``python -m`` shows (frozen, or
    from a file, with its source line and carets)."""
    return re.sub(r'  File "[^"]*runpy[^"]*", line \d+, in \w+\n(    .*\n)*', "", stderr)


class RunForms(unittest.TestCase):
    def assert_no_gotopy_frame(self, stderr: str) -> None:
        self.assertNotIn(str(PACKAGE), stderr)
        self.assertNotIn("gotopy/_", stderr)

    def test_each_form_gives_the_program_what_python_gives(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "pkg").mkdir()
            Path(directory, "pkg", "__init__.py").write_text("")
            for name in ("show.py", "pkg/show.py", "pkg/__main__.py"):
                Path(directory, name).write_text(SHOW)
            forms: list[list[str]] = [["show.py"], ["-"], ["-c", SHOW], ["-m", "pkg.show"], ["-m", "pkg"]]
            for form in forms:
                for args in (["a", "-b", "--color", "never", "--help"], ["fail"]):
                    with self.subTest(form=form[0], args=args):
                        python = run([sys.executable, *form, *args], directory, SHOW)
                        ours = run([sys.executable, "-m", "gotopy", "run", *form, *args], directory, SHOW)
                        expected = outcome(python)
                        if form[0] == "-m":
                            expected = (expected[0], expected[1], without_runpy(expected[2]))
                        self.assertEqual(outcome(ours), expected)
                        if args == ["fail"]:
                            self.assertIn("ZeroDivisionError", ours.stderr)
                            self.assert_no_gotopy_frame(ours.stderr)

    def test_a_pyc_that_compile_wrote_runs_as_python_runs_it(self) -> None:
        """``compile --out-dir`` then ``run FILE.pyc``: what ``python FILE.pyc`` prints for
        the same file, and what python prints for the program written without goto."""
        with tempfile.TemporaryDirectory() as directory:
            for name in ("basic_game.py", "basic_game_plain.py"):
                shutil.copy(PROGRAMS / name, directory)
            Path(directory, "show.py").write_text(SHOW)
            for name in ("basic_game.py", "show.py"):
                made = run([sys.executable, "-m", "gotopy", "compile", "--out-dir", "out", name], directory)
                self.assertEqual(made.returncode, 0, made.stderr)
            plain = run([sys.executable, "basic_game_plain.py"], directory)
            self.assertIn("sticks", plain.stdout)
            ours = run([sys.executable, "-m", "gotopy", "run", "out/basic_game.pyc"], directory)
            self.assertEqual(outcome(ours), outcome(plain))
            for args in (["a"], ["fail"]):
                python = run([sys.executable, "out/show.pyc", *args], directory)
                ours = run([sys.executable, "-m", "gotopy", "run", "out/show.pyc", *args], directory)
                self.assertEqual(outcome(ours), outcome(python))
            # A file that only looks like one is refused, as unreadable input.
            Path(directory, "bad.pyc").write_bytes(b"not a pyc")
            bad = run([sys.executable, "-m", "gotopy", "run", "bad.pyc"], directory)
            self.assertEqual(bad.returncode, 2, bad.stderr)
            self.assertIn("gotopy: error: bad.pyc: not a .pyc file of this Python", bad.stderr)

    def test_the_error_paths_print_the_binarys_words(self) -> None:
        if not BINARY:
            self.skipTest("GOTOPY_BIN is not set (tests/cpython.rs sets it)")
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "namespace").mkdir()
            Path(directory, "latin1.py").write_bytes(b"name = 'caf\xe9'\n")
            Path(directory, "two.py").write_text("class A:\n    def run(self): pass\n")
            Path(directory, "broken.py").write_text("from goto import goto, label\n" + INTO_FOR)
            cases = [
                ["run", "no/such/file.py"],
                ["run", "latin1.py"],
                ["run", "-m", "no_such_module"],
                ["run", "-m", "namespace"],
                ["run", "-m", ".relative"],
                ["run", "broken.py"],
                ["dis", "no/such/file.py"],
                ["dis", "two.py", "--function", "nothing"],
                ["dis", "latin1.py"],
            ]
            for case in cases:
                with self.subTest(case=case):
                    binary = run([BINARY, *case], directory)
                    package = run([sys.executable, "-m", "gotopy", *case], directory)
                    self.assertEqual(outcome(package), outcome(binary))
                    self.assertNotEqual(binary.returncode, 0)

    def test_usage_errors_exit_two(self) -> None:
        for args in (["run"], ["run", "-c"], ["run", "-m"], ["dis"], ["dis", "f.py", "--format", "svg"]):
            with self.subTest(args=args):
                result = run([sys.executable, "-m", "gotopy", *args], ".")
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("error:", result.stderr)


class Dis(unittest.TestCase):
    SOURCE = (PROGRAMS / "basic_game.py").read_text() + "class C:\n    def m(self):\n        return lambda: game\n"

    def listing(self, code: object, depth: int | None = None) -> str:
        out = io.StringIO()
        dis.dis(code, file=out, depth=depth)  # type: ignore[arg-type]
        return out.getvalue()

    @staticmethod
    def addresses(text: str) -> str:
        # Windows writes addresses in capitals.
        return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", text)

    def test_dis_lists_what_dis_lists_for_the_compiled_code(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "game.py").write_text(self.SOURCE)
            module = gotopy.compile(self.SOURCE.encode(), "game.py", dont_inherit=True)
            ours = run([sys.executable, "-m", "gotopy", "dis", "game.py"], directory)
            self.assertEqual((ours.returncode, ours.stderr), (0, ""))
            self.assertEqual(self.addresses(ours.stdout), self.addresses(self.listing(module)))
            self.assertIn("JUMP_BACKWARD", ours.stdout)
            from_stdin = run([sys.executable, "-m", "gotopy", "dis", "-"], directory, self.SOURCE)
            stdin_module = gotopy.compile(self.SOURCE.encode(), "<stdin>", dont_inherit=True)
            self.assertEqual(self.addresses(from_stdin.stdout), self.addresses(self.listing(stdin_module)))
            for name, qualnames in (("game", ["game"]), ("m", ["C.m"]), ("C.m.<locals>.<lambda>", ["C.m.<locals>.<lambda>"])):
                with self.subTest(function=name):
                    chosen = run([sys.executable, "-m", "gotopy", "dis", "game.py", "--function", name], directory)
                    codes = [c for c in _codes(module) if c.co_qualname in qualnames]
                    expected = "".join(f"Disassembly of {c!r}:\n" + self.listing(c, depth=0) for c in codes)
                    self.assertEqual((chosen.returncode, self.addresses(chosen.stdout)), (0, self.addresses(expected)))

    def test_dot_is_refused(self) -> None:
        result = run([sys.executable, "-m", "gotopy", "dis", "f.py", "--format", "dot"], ".")
        self.assertEqual(result.returncode, 2)
        self.assertIn("gotopy: error: --format dot draws RustPython's code", result.stderr)


def _codes(code: object) -> list:
    found = [code]
    for constant in getattr(code, "co_consts", ()):
        if hasattr(constant, "co_code"):
            found.extend(_codes(constant))
    return found


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
        # A function for `help` and `inspect`, whose parameters are the built-in's and
        # `all_scopes`.
        self.assertEqual(gotopy.compile.__name__, "compile")
        self.assertIn("The built-in ``compile()`` with goto", gotopy.compile.__doc__ or "")
        ours = list(inspect.signature(gotopy.compile).parameters.values())
        theirs = list(inspect.signature(compile).parameters.values())
        self.assertEqual([p.name for p in ours[:6]], [p.name for p in theirs[:6]])
        self.assertEqual([p.default for p in ours[3:6]], [p.default for p in theirs[3:6]])
        self.assertEqual((ours[2].default, ours[6].name, ours[6].kind), ("exec", "all_scopes", ours[6].KEYWORD_ONLY))

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

    def test_run_of_a_program_with_an_error_reports_it_without_a_traceback(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "broken.py").write_text("from goto import goto, label\n" + INTO_FOR)
            result = run([sys.executable, "-m", "gotopy", "run", "broken.py"], directory)
            self.assertEqual((result.returncode, result.stdout), (1, ""))
            self.assertIn("error[G003]", result.stderr)
            self.assertIn(" --> broken.py:4:5", result.stderr)
            self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    unittest.main()
