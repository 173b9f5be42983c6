"""Programs in the shapes the old goto libraries' users write (``tests/programs/``:
three-address code from a compiler course's generator, a Fortran port, a retry loop, a
BASIC game; written for ``from goto import with_goto``), each on every route of the
package: plain ``python`` with the decorator, ``python -m gotopy run``, ``exec`` of
``gotopy.compile(text, "<generated>", "exec")``, and an IPython cell (where ``@with_goto``
finds the cell's source in ``linecache``). The oracle: the same program written without goto
(``NAME_plain.py``), run by the same interpreter. Also what ``gotopy.compile`` takes and
raises, as the built-in ``compile()`` does, and what it gives for a big module whose plan
is made beside CPython's compile of its source: what the plan made first gives.

Needs the package and IPython installed in the running interpreter (tests/cpython.rs
installs both).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import threading
import traceback
import types
import unittest
import warnings
from pathlib import Path
from typing import Literal
from unittest import mock

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
        only_ast = ast.PyCF_ONLY_AST  # gotopy returns code objects only
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
        # This test's frame, whose line calls gotopy.compile: no frame of gotopy (docs/language.md
        # section 6).
        self.assertEqual(frames, [sys._getframe().f_code.co_name])

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


class PlanBeside(unittest.TestCase):
    """A big module's plan is made on a thread of its own while CPython compiles its source
    (``gotopy._compile.plan_beside``), which gives what the plan made first gives: the same
    code objects, the same errors, and the warnings of the built-in ``compile()`` of the
    source, each shown once, as it shows them."""

    # An invalid escape: CPython's compiler warns of it (DeprecationWarning on 3.11,
    # SyntaxWarning after).
    WARNS = "pattern = '\\d+'\n"

    def big(self, body: str) -> str:
        """``body``, then functions enough to make the module plan beside its compile."""
        from gotopy import _gotopy

        filler = "def f{0}(a):\n    t{0} = a * {0} + 1\n    return t{0} % 65521\n\n"
        parts, size = [body, self.WARNS], len(body) + len(self.WARNS)
        while size < _gotopy.PLAN_BESIDE:
            parts.append(filler.format(len(parts)))
            size += len(parts[-1])
        return "".join(parts)

    def compiled(
        self, text: str, beside: bool = True, action: Literal["always", "once"] = "always"
    ) -> tuple[object, list[tuple[object, ...]]]:
        """What ``gotopy.compile`` returns or raises for ``text``, and the warnings it
        shows under the filter ``action``; planned first when ``beside`` is false, else
        beside the compile whatever the plan does (as after a wrong guess of
        ``may_edit_tree``)."""
        from gotopy import _gotopy

        called = mock.patch.object(_gotopy, "plan_beside", wraps=_gotopy.plan_beside)
        guess = mock.patch.object(_gotopy, "beside_pays", return_value=beside)
        with called as plan_beside, guess, warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter(action)
            warnings.onceregistry.clear()  # type: ignore[attr-defined]
            try:
                result: object = gotopy.compile(text, "big.py")
            except SyntaxError as error:
                result = (type(error).__name__, getattr(error, "code", error.msg), error.lineno)
        self.assertEqual(plan_beside.called, beside)
        return result, [(w.category, str(w.message), w.lineno) for w in shown]

    def builtin_warnings(self, text: str, action: Literal["always", "once"] = "always") -> list[tuple[object, ...]]:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter(action)
            warnings.onceregistry.clear()  # type: ignore[attr-defined]
            compile(text, "big.py", "exec")
        self.assertEqual(len(shown), 1)
        return [(w.category, str(w.message), w.lineno) for w in shown]

    def test_code_warnings_and_errors_are_those_of_the_plan_made_first(self) -> None:
        switch = (
            "from goto import goto, label, switch, case\n"
            "@goto\n"
            "def total(n):\n"
            "    s = 0\n"
            "    parity = n % 2\n"
            "    while switch *parity:\n"
            "        case[0]\n"
            "        s += 1\n"
            "        break\n"
            "    label .top\n"
            "    if n:\n"
            "        s += n; n -= 1\n"
            "        goto .top\n"
            "    return s\n"
        )
        for name, body in [("no edit of the tree", Compile.TEXT), ("a switch", switch)]:
            with self.subTest(name):
                text = self.big(body)
                beside, shown = self.compiled(text)
                first, shown_first = self.compiled(text, beside=False)
                self.assertEqual(beside, first)  # code objects compare by their contents
                self.assertEqual(shown, self.builtin_warnings(text))
                self.assertEqual(shown_first, shown)
                # Shown once a process: once, though two compiles of the source saw it.
                self.assertEqual(self.compiled(text, action="once")[1], self.builtin_warnings(text, "once"))
                assert isinstance(beside, types.CodeType)
                namespace: dict[str, object] = {}
                exec(beside, namespace)  # noqa: S102 - the code under test
                self.assertEqual(namespace["total"](10), 55 + (name == "a switch"))  # type: ignore[operator]
        # A goto error: gotopy's, and no warning of CPython's compile, as when the plan
        # comes first.
        wrong = self.big(Compile.TEXT.replace("goto .top", "goto .tip"))
        self.assertEqual(self.compiled(wrong), (("GotoSyntaxError", "G002", 8), []))
        self.assertEqual(self.compiled(wrong, beside=False), self.compiled(wrong))

    def test_only_a_big_module_whose_bytes_say_it_edits_no_tree_goes_beside(self) -> None:
        """``beside_pays`` (the bytes' side: src/cpython/plan.rs ``may_edit_tree``): a big
        module with a ``with`` stays off the thread, a small one too, and a goto loop with
        ``with_goto`` and returns after its last label goes on it."""
        from gotopy import _gotopy

        self.assertFalse(_gotopy.beside_pays(self.big("with open(__file__):\n    pass\n").encode()))
        self.assertFalse(_gotopy.beside_pays(Compile.TEXT.encode()))
        self.assertTrue(_gotopy.beside_pays(self.big(Compile.TEXT).encode()))

    def test_a_warning_filtered_into_an_error_is_compiles_error(self) -> None:
        text = self.big(Compile.TEXT)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with self.assertRaises(SyntaxError) as builtin:
                compile(text, "big.py", "exec")
            with self.assertRaises(SyntaxError) as ours:
                gotopy.compile(text, "big.py")
        self.assertEqual((ours.exception.msg, ours.exception.lineno), (builtin.exception.msg, builtin.exception.lineno))

    def test_the_plan_comes_first_while_another_thread_runs(self) -> None:
        from gotopy import _gotopy

        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            refused = mock.patch.object(_gotopy, "plan_beside", side_effect=AssertionError("planned beside"))
            with refused, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                code = gotopy.compile(self.big(Compile.TEXT), "big.py")
        finally:
            stop.set()
            other.join()
        namespace: dict[str, object] = {}
        exec(code, namespace)  # noqa: S102 - the code under test
        self.assertEqual(namespace["total"](10), 55)  # type: ignore[operator]


# Prints, as one line each, the modules a statement imported that the interpreter had not.
IMPORTED_BY = """\
import sys
before = set(sys.modules)
exec(sys.argv[1])
print(" ".join(sorted(set(sys.modules) - before)))
"""


class StartUp(unittest.TestCase):
    """What importing gotopy costs a program, counted in modules (the time is
    ``python/benches/startup.py``'s): ``import goto`` and ``import gotopy`` import the
    markers and the native module and nothing else; the first decorator that rewrites brings
    in the compile path, and the names not imported yet resolve on first use."""

    # The package, its markers, the native module, and `__future__` (the statement that
    # makes annotations text imports it: a small module of constants).
    MARKERS = ("__future__", "gotopy", "gotopy._gotopy", "gotopy._marker", "gotopy._runtime")

    def imported_by(self, statement: str) -> list[str]:
        return output("-c", IMPORTED_BY, statement).split()

    def test_importing_the_markers_imports_nothing_else(self) -> None:
        with_goto = sorted(["goto", *self.MARKERS])
        self.assertEqual(self.imported_by("import goto"), with_goto)
        self.assertEqual(self.imported_by("import gotopy"), list(self.MARKERS))
        self.assertEqual(self.imported_by("from goto import goto, label, with_goto"), with_goto)

    def test_the_first_rewrite_imports_the_compile_path_and_every_name_resolves(self) -> None:
        decorated = "from goto import goto, label\n@goto\ndef f():\n    goto .end\n    label .end\n    return 1\n"
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "decorated.py")
            path.write_text(decorated + "assert f() == 1\n", encoding="utf-8")
            imported = self.imported_by(f"exec(compile(open({str(path)!r}).read(), {str(path)!r}, 'exec'), {{}})")
        self.assertIn("gotopy._compile", imported)
        self.assertNotIn("gotopy._hook", imported)
        names = "import gotopy; n = {}; exec('from gotopy import *', n); print(sorted(set(gotopy.__all__) - set(n)))"
        self.assertEqual(output("-c", names).strip(), "[]")
        self.assertTrue(issubclass(gotopy.GotoSyntaxError, SyntaxError))
        self.assertEqual(gotopy.GotoSyntaxError.__module__, "gotopy")
        self.assertTrue(callable(gotopy.install) and callable(gotopy.compile))
        self.assertEqual(sorted(set(gotopy.__all__) - set(dir(gotopy))), [])
        with self.assertRaisesRegex(AttributeError, "no attribute 'missing'"):
            gotopy.missing  # noqa: B018 - the attribute access is the test


if __name__ == "__main__":
    unittest.main()
