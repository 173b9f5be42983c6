"""Programs in the shapes the old goto libraries' users write (``tests/programs/``:
three-address code from a compiler course's generator, a Fortran port, a retry loop, a
BASIC game; written for ``from goto import with_goto``), each on every route of the
package: plain ``python`` with the decorator, ``python -m gotopy run``, ``exec`` of
``gotopy.compile(text, "<generated>", "exec")``, and an IPython cell (where ``@with_goto``
finds the cell's source in ``linecache``). The oracle: the same program written without goto
(``NAME_plain.py``), run by the same interpreter. Also what ``gotopy.compile`` takes and
raises, as the built-in ``compile()`` does.

Needs the package and IPython installed in the running interpreter (tests/cpython.rs
installs both).
"""

from __future__ import annotations

import subprocess
import sys
import traceback
import unittest
from pathlib import Path

import gotopy

PROGRAMS = Path(__file__).resolve().parents[2] / "tests" / "programs"

# Runs the file named by argv[1] as generated code: gotopy.compile, then exec.
COMPILED = """\
import sys, gotopy
text = open(sys.argv[1], encoding="utf-8").read()
exec(gotopy.compile(text, "<generated>", "exec"), {"__name__": "__main__"})
"""

# Runs the file named by argv[1] as one IPython cell, printing what the cell printed, and
# failing if the cell raised.
IPYTHON_CELL = """\
import contextlib, io, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    result = shell.run_cell(open(sys.argv[1], encoding="utf-8").read(), store_history=True)
sys.stdout.write(printed.getvalue())
if not result.success:
    sys.exit(f"the cell failed: {result.error_before_exec or result.error_in_exec!r}")
"""


def output(*args: str | Path) -> str:
    """What this interpreter prints running ``args``; it must exit with status 0."""
    done = subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, cwd=PROGRAMS, timeout=300
    )
    if done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class Programs(unittest.TestCase):
    def test_every_route_prints_what_the_program_without_goto_prints(self) -> None:
        names = sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.endswith("_plain"))
        self.assertGreaterEqual(len(names), 4, names)
        for name in names:
            program = PROGRAMS / f"{name}.py"
            expected = output(PROGRAMS / f"{name}_plain.py")
            self.assertTrue(expected.strip(), name)
            routes = {
                "python": [program],
                "python -m gotopy run": ["-m", "gotopy", "run", program],
                "gotopy.compile": ["-c", COMPILED, program],
                "IPython cell": ["-c", IPYTHON_CELL, program],
            }
            for route, args in routes.items():
                with self.subTest(name, route=route):
                    self.assertEqual(output(*args), expected)


class Compile(unittest.TestCase):
    """``gotopy.compile`` as the drop-in for the built-in ``compile()``."""

    TEXT = (
        "from goto import with_goto\n"
        "@with_goto\n"
        "def total(n):\n"
        "    s = 0\n"
        "    label .top\n"
        "    if n:\n"
        "        s += n; n -= 1\n"
        "        goto .top\n"
        "    return s\n"
    )

    def run_total(self, code: object) -> object:
        namespace: dict[str, object] = {}
        exec(code, namespace)  # noqa: S102 - the code under test
        return namespace["total"](10)  # type: ignore[operator]

    def test_str_bytes_and_the_modes(self) -> None:
        self.assertEqual(self.run_total(gotopy.compile(self.TEXT, "<generated>", "exec")), 55)
        self.assertEqual(self.run_total(gotopy.compile(self.TEXT.encode(), "<generated>")), 55)
        self.assertEqual(self.run_total(gotopy.compile(bytearray(self.TEXT.encode()), b"<g>")), 55)
        self.assertEqual(eval(gotopy.compile("6 * 7", "<e>", "eval")), 42)
        # One statement, as an interactive prompt compiles it: the decorated definition.
        single = gotopy.compile(self.TEXT.split("\n", 1)[1], "<single>", "single")
        namespace: dict[str, object] = {"with_goto": gotopy.with_goto}
        exec(single, namespace)
        self.assertEqual(namespace["total"](10), 55)  # type: ignore[operator]
        # The text's own declaration decides how its bytes are read, as for a file.
        latin = "# -*- coding: latin-1 -*-\nword = 'caf\u00e9'\n"
        namespace = {}
        exec(gotopy.compile(latin, "<latin>", "exec"), namespace)
        self.assertEqual(namespace["word"], "caf\u00e9")

    def test_errors_are_the_builtins_and_carry_no_frames_of_gotopy(self) -> None:
        only_ast = 0x400  # ast.PyCF_ONLY_AST: gotopy returns code objects only
        for args, error in [
            ((self.TEXT, "<g>", "spam"), ValueError),
            ((None, "<g>"), TypeError),
            ((self.TEXT, "<g>", "exec", only_ast), ValueError),
        ]:
            with self.subTest(args=args[2:]), self.assertRaises(error):
                gotopy.compile(*args)
        with self.assertRaises(ValueError):
            compile(self.TEXT, "<g>", "spam")  # the built-in's error for that mode
        wrong = self.TEXT.replace("goto .top", "goto .tip")
        try:
            gotopy.compile(wrong, "<generated>", "exec")
        except gotopy.GotoSyntaxError as error:
            self.assertEqual((error.code, error.lineno), ("G002", 8))
            frames = [frame.name for frame in traceback.extract_tb(error.__traceback__)]
        else:
            self.fail("no GotoSyntaxError")
        # This test's frame and the call of gotopy.compile: nothing of gotopy beneath it.
        self.assertEqual(frames, [sys._getframe().f_code.co_name, "compile"])

    def test_future_features_are_inherited_unless_told_not_to(self) -> None:
        # This module says `from __future__ import annotations`: code compiled here gets it,
        # as from the built-in compile(), unless dont_inherit is set.
        text = "def f(x: undefined_name): pass\nannotation = f.__annotations__['x']\n"
        for dont_inherit, expected in [(False, "undefined_name"), (True, None)]:
            namespace: dict[str, object] = {}
            try:
                exec(gotopy.compile(text, "<f>", "exec", dont_inherit=dont_inherit), namespace)
            except NameError:
                namespace["annotation"] = None
            self.assertEqual(namespace["annotation"], expected, dont_inherit)


if __name__ == "__main__":
    unittest.main()
