"""gotopy's CPython backend on the running interpreter.

- Every ``ok`` fixture runs under ``python -m gotopy run`` and its own assertions (the
  oracle, written from what CPython does without goto) hold; every ``err`` fixture is
  rejected with ``SyntaxError`` carrying its header's first code.
- The differential generator's programs (``tests/differential/programs.py``: gotos and
  switches) do what the reference interpreter says, or are refused by design (``G200``);
  an internal error (``G900``) fails. Likewise through the decorator without source.
  ``GOTOPY_DIFF_SEED`` (a number or ``random``; 7 by default) and ``GOTOPY_DIFF_PROGRAMS``
  (2,000 by default), as for tests/differential.rs.
- The decorator keeps the function object; a goto that skips an assignment raises
  ``UnboundLocalError`` instead of crashing CPython 3.12+; the import hook caches under its
  own name and never takes CPython's cache file.

Needs the package installed in the running interpreter (tests/cpython.rs). Standard library
only.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import types
import unittest
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import gotopy
import gotopy._compile

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


@functools.cache
def gotopy_run(path: Path) -> subprocess.CompletedProcess[bytes]:
    """``python -m gotopy run`` of a fixture, from the repository's root, once for the
    tests that look at what it does (a file's ``# gotopy: all-scopes`` line is its option)."""
    return subprocess.run(
        [sys.executable, "-m", "gotopy", "run", str(path)],
        capture_output=True,
        cwd=ROOT,
    )


class Fixtures(unittest.TestCase):
    def test_ok_fixtures_run_and_their_assertions_hold(self) -> None:
        for path in sorted((FIXTURES / "ok").glob("*.py")):
            with self.subTest(path.name):
                run = gotopy_run(path)
                self.assertEqual(run.returncode, 0, run.stderr.decode())

    def test_translated_fixtures_print_what_the_goto_programs_print(self) -> None:
        """``python -m gotopy translate``: each ``ok`` fixture as structured Python, run by this
        same interpreter in isolated mode (gotopy not importable), prints what ``python -m
        gotopy run`` prints for the goto program."""
        compared = 0
        with tempfile.TemporaryDirectory() as scratch:
            for path in sorted((FIXTURES / "ok").glob("*.py")):
                all_scopes = ["--all-scopes"] if b"# gotopy: all-scopes" in path.read_bytes()[:500] else []
                out = Path(scratch) / path.name
                with self.subTest(path.name):
                    made = subprocess.run(
                        [sys.executable, "-m", "gotopy", "translate", *all_scopes, str(path), "-o", str(out)],
                        capture_output=True,
                    )
                    self.assertEqual(made.returncode, 0, made.stderr.decode())
                    if "import goto" in out.read_text():
                        continue  # uses the goto module itself: needs gotopy (docs/translate.md)
                    goto = gotopy_run(path)
                    plain = subprocess.run([sys.executable, "-I", "-S", str(out)], capture_output=True, cwd=scratch)
                    self.assertEqual((plain.returncode, plain.stdout), (goto.returncode, goto.stdout), plain.stderr)
                    compared += 1
        self.assertGreaterEqual(compared, 40)

    def test_a_plan_that_edits_no_tree_compiles_the_source_itself(self) -> None:
        """An ``ok`` fixture whose plan makes no edit to the tree (no guard, trampoline,
        switch or computed goto) is compiled from its source, never parsed into ``ast``
        objects, and gives the code objects of the round trip through ``ast`` (CPython's
        ``compile()`` of ``ast.parse``'s tree), lowered the same way."""
        from gotopy import _compile, _gotopy

        compared = 0
        for path in sorted((FIXTURES / "ok").glob("*.py")):
            data = path.read_bytes()
            all_scopes = b"# gotopy: all-scopes" in data[:500]
            the_plan = _gotopy.plan(str(path), data, all_scopes=all_scopes)
            if not the_plan.rewrites or the_plan.edits_tree:
                continue
            with self.subTest(path.name):
                parse = mock.patch("ast.parse", side_effect=AssertionError("the source was parsed"))
                with parse:
                    direct = gotopy.compile(data, str(path), dont_inherit=True, all_scopes=all_scopes)
                through_tree = gotopy._compile.compile_source(
                    data, str(path), all_scopes=all_scopes, through_tree=True
                )
                self.assertEqual(comparable(direct), comparable(through_tree))
                compared += 1
        self.assertGreaterEqual(compared, 10)

    def test_err_fixtures_raise_syntax_error_with_their_code(self) -> None:
        for path in sorted((FIXTURES / "err").glob("*.py")):
            text = path.read_text(encoding="utf-8")
            codes = re.findall(r"G\d{3}", text.split("\n\n")[0])
            all_scopes = "# gotopy: all-scopes" in text[:500]
            with self.subTest(path.name):
                with self.assertRaises(SyntaxError) as raised:
                    gotopy.compile(path.read_bytes(), str(path), all_scopes=all_scopes)
                error = raised.exception
                self.assertTrue(codes, "an err fixture names its codes in its header")
                self.assertTrue(any(code in str(error.msg) for code in codes), error.msg)
                self.assertEqual(error.filename, str(path))
                # Where `check` puts the first error, in characters, as CPython counts a
                # SyntaxError's offsets.
                report = subprocess.run(
                    [sys.executable, "-m", "gotopy", "check", "--format", "json"]
                    + (["--all-scopes"] if all_scopes else [])
                    + [str(path)],
                    capture_output=True,
                    text=True,
                )
                first = next(d for d in json.loads(report.stdout) if d["severity"] == "error")
                self.assertEqual(
                    (error.lineno, error.offset, error.end_lineno, error.end_offset),
                    (first["line"], first["column"], first["end_line"], first["end_column"]),
                )
                self.assertEqual(error.text, text.splitlines()[first["line"] - 1] + "\n")

    def test_refusals_point_at_characters_and_say_what_to_write_instead(self) -> None:
        """A refusal found in CPython's code (none is known that ``check`` does not report
        first, so one is made here as the lowering makes it) is rendered as ``check``
        renders a diagnostic, with help, and its ``SyntaxError`` counts columns in
        characters, so CPython's traceback puts the caret under the marker."""
        from gotopy import _gotopy

        source = (
            "from goto import goto, label\n@goto\ndef skip():\n"
            '    s = "ééé"; goto .hidden\n    label .hidden\n    return s\n'
        ).encode()
        the_plan = _gotopy.plan("removed.py", source)
        # CPython's positions: line, end line, and columns in UTF-8 bytes.
        error = the_plan.late_error("a refusal of the lowering", (4, 4, 18, 30), "write it otherwise")
        self.assertIsInstance(error, gotopy.GotoSyntaxError)
        self.assertEqual((error.code, error.lineno, error.offset), ("G200", 4, 16))
        self.assertEqual(error.text, '    s = "ééé"; goto .hidden\n')
        shown = "".join(traceback.format_exception_only(type(error), error))
        self.assertIn('s = "ééé"; goto .hidden\n' + " " * 15 + "^", shown)
        self.assertIn("error[G200]: cannot rewrite: a refusal of the lowering", error.report)
        self.assertIn("= help: write it otherwise", error.report)
        self.assertIn(" --> removed.py:4:16", error.report)

    def test_gotopy_compile_refuses_exactly_what_check_reports(self) -> None:
        """``check`` tells the whole truth (tests/verdicts.rs holds it for RustPython and
        ``translate``): for every fixture, example and program, ``gotopy.compile`` on this
        CPython refuses a module exactly when ``check`` reports an error, with the code of
        its first error, and compiles every other."""
        paths = [
            path
            for folder in (FIXTURES / "ok", FIXTURES / "err", ROOT / "examples", ROOT / "tests" / "programs")
            for path in sorted(folder.glob("*.py"))
        ]
        checked = subprocess.run(
            [sys.executable, "-m", "gotopy", "check", "--format", "json", *map(str, paths)],
            capture_output=True,
            text=True,
        )
        self.assertIn(checked.returncode, (0, 1), checked.stderr)
        errors: dict[str, list[str]] = {}
        for found in json.loads(checked.stdout):
            if found["severity"] == "error":
                errors.setdefault(found["path"], []).append(found["code"])
        rejected = 0
        for path in paths:
            data = path.read_bytes()
            codes = errors.get(str(path), [])
            rejected += bool(codes)
            with self.subTest(path.name):
                try:
                    gotopy.compile(data, str(path))
                except gotopy.GotoSyntaxError as error:
                    self.assertEqual(error.code, codes[0] if codes else None, error.report)
                else:
                    self.assertEqual(codes, [])
        self.assertEqual(rejected, len(list((FIXTURES / "err").glob("*.py"))))

class Differential(unittest.TestCase):
    def test_random_programs_match_the_reference(self) -> None:
        """Each program compiled from its source by ``gotopy.compile``: none is refused by
        design, as RustPython refuses none (the copies CPython makes of a ``finally`` body
        are paired copy for copy, as RustPython's are)."""

        def from_source(source: str, name: str, scope: dict) -> None:
            exec(gotopy.compile(source.encode(), name), scope)

        count, compared, refused, _ = self.compare(from_source, checked=True)
        self.assertGreater(compared, count // 2)
        self.assertEqual(refused, 0, "refused by design")

    def test_random_programs_without_source_match_the_reference_or_are_refused(self) -> None:
        """SPEC section 6, the decorator without source: the generator's programs without
        switches and ``try``/``finally`` (it rewrites neither), compiled by CPython from a
        string (no file to read) and rewritten by ``@goto`` from the bytecode alone when
        each definition runs. What the bytecode cannot prove is refused (``G200``: a goto
        that leaves a ``with`` or ``try``, a label CPython compiled twice); what it rewrites
        does what the reference says, and every program that breaks the rules on purpose is
        refused."""

        def without_source(source: str, name: str, scope: dict) -> None:
            exec(compile(source, name, "exec", dont_inherit=True), scope)

        count, _, _, rewritten = self.compare(without_source, checked=False)
        # About one program in twenty has a goto the decorator rewrites; most have a `with`
        # or `try` in the way (programs without a goto run unchanged and do not count).
        self.assertGreater(rewritten, count // 50, "almost every goto refused")

    def compare(
        self, load: Callable[[str, str, dict], None], checked: bool
    ) -> tuple[int, int, int, int]:
        """Generates programs (``GOTOPY_DIFF_SEED``, ``GOTOPY_DIFF_PROGRAMS``; kept in the
        directory ``GOTOPY_DIFF_CACHE`` names, when it is set), with
        switches and ``finally`` bodies when ``checked`` (the source goes through the front
        end's check), loads each into a namespace with ``load`` and calls what loads as the
        reference interpreter does: no internal error, every rule-breaking program rejected
        (with its own code when ``checked``), every other refusal ``G200``, every call as
        the reference says. Returns the count, the calls compared, the refusals by design
        and the programs run that have a goto."""
        sys.path.insert(0, str(ROOT / "tests/differential"))
        import programs as generator  # noqa: PLC0415

        seed = diff_seed()
        count = int(os.environ.get("GOTOPY_DIFF_PROGRAMS", "2000"))
        # `tests/cpython.rs` gives the five interpreters one cache: the programs and the
        # reference's answers are the same on each (a third of this test's time). A seed
        # drawn at random is never asked for again, so its programs are not kept.
        random_seed = os.environ.get("GOTOPY_DIFF_SEED") == "random"
        cache = None if random_seed else os.environ.get("GOTOPY_DIFF_CACHE") or None
        programs, invalid, expected = generator.generated(seed, count, checked, cache)
        namespace: dict = {}
        exec(compile(generator.PRELUDE, "<prelude>", "exec"), namespace)
        got, refused, wrong, internal, with_goto = [], 0, [], [], 0
        for index, source in enumerate(programs):
            scope = dict(namespace)
            try:
                load(source, f"<program {index}>", scope)
            except SyntaxError as error:
                message = str(error.msg)
                if "G900" in message or "bug in gotopy" in message:
                    internal.append(f"program {index}: {message}")
                elif index in invalid:
                    if checked and not any(c in message for c in invalid[index]):
                        wrong.append(f"program {index}: expected {invalid[index]}, got {message}")
                elif "G200" in message:
                    refused += 1
                else:
                    wrong.append(f"program {index}: a valid program rejected: {message}")
                continue
            if index in invalid:
                wrong.append(f"program {index}: expected {invalid[index]}, compiled")
                continue
            with_goto += "goto ." in source
            for x in (0, 1, 5):
                trace: list = []
                try:
                    outcome = ["return", scope[f"f{index}"](trace, x)]
                except namespace["E"] as e:
                    outcome = ["raise", e.args[0]]
                got.append(json.dumps([index, x, trace, outcome]))
        by_key = {tuple(json.loads(line)[:2]): line for line in expected}
        mismatches = [line for line in got if by_key.get(tuple(json.loads(line)[:2])) != line]
        print(
            f"\n{sys.version.split()[0]}: {count} programs (seed {seed}"
            f"{'' if checked else ', without source'}): {len(got)} calls compared, "
            f"{with_goto} programs with a goto run, {refused} refused by design",
            file=sys.stderr,
        )
        self.assertEqual(internal, [], "internal errors")
        self.assertEqual(wrong, [], "rule-breaking programs not rejected as expected")
        self.assertEqual(mismatches[:5], [], f"{len(mismatches)} calls disagree with the reference")
        return count, len(got), refused, with_goto


def diff_seed() -> int:
    """``GOTOPY_DIFF_SEED``: unset or empty, the fixed seed 7 (a red run replays from its
    log); a number; or ``random``, a new one from the clock (printed by the test)."""
    value = os.environ.get("GOTOPY_DIFF_SEED", "")
    if value == "random":
        return time.time_ns() % 2**32
    try:
        return int(value or "7")
    except ValueError:
        raise ValueError(f"GOTOPY_DIFF_SEED must be a number or `random`, not {value!r}") from None


class StandardLibrary(unittest.TestCase):
    """Tests that compile the standard library, whose own test data warns (``1 is 1``,
    invalid escapes) on every compile: silenced, so that a failure is readable."""

    def setUp(self) -> None:
        if not any(Path(os.__file__).parent.glob("*.py")):
            self.skipTest("this CPython's standard library has no sources on disk (the embeddable "
                          "CPython for Windows keeps compiled modules alone, in a zip)")
        self.enterContext(warnings.catch_warnings())
        warnings.simplefilter("ignore")


class Bytecode(StandardLibrary):
    def test_decode_and_assemble_reproduce_the_standard_library(self) -> None:
        """The oracle is CPython's own compiler: every code object of the standard library
        (its top-level modules by default), decoded and assembled again by the native module
        with no edit, gives the same code, location table, exception table and stack size.
        (The positions of each instruction are the unit tests' of ``gotopy::cpython``.)"""
        from gotopy import _gotopy
        from gotopy._runtime import code_objects

        checked = 0
        for path, _, module in standard_library():
            for code in code_objects(module):
                new = _gotopy.reassemble(code)
                for field in ("co_code", "co_linetable", "co_exceptiontable", "co_stacksize"):
                    self.assertEqual(getattr(new, field), getattr(code, field), f"{path}: {code.co_qualname}")
                checked += 1
        self.assertGreater(checked, 1000)


@functools.cache
def standard_library() -> tuple[tuple[str, bytes, types.CodeType], ...]:
    """The standard library's modules that this CPython compiles, with what it compiles
    them to: the top-level ones, or with GOTOPY_STDLIB=1 (as `.ci/run` sets) the whole
    library. Compiled once for the three tests that read them (the whole library is a few
    seconds per compile on each of five versions)."""
    library = Path(os.__file__).parent
    paths = library.rglob("*.py") if os.environ.get("GOTOPY_STDLIB") else library.glob("*.py")
    found = []
    for path in sorted(paths):
        if "site-packages" in path.parts:
            continue
        try:
            data = path.read_bytes()
            code = compile(data, str(path), "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):  # Debian links sitecustomize to /etc
            continue
        found.append((str(path), data, code))
    return tuple(found)


def in_turn(relative: Path) -> bool:
    """Whether this version takes the library file at ``relative``: each file is taken by
    three of the five versions 3.11 to 3.15, the three in turn after a checksum of its
    path, so that every file a version has is taken by it or by a version near it."""
    turn = sys.version_info[1] - 11
    return (zlib.crc32(relative.as_posix().encode()) - turn) % 5 < 3


def comparable(code: types.CodeType) -> types.CodeType:
    """``code`` with every NaN constant (nested code included) replaced by its bits.
    CPython compares constants by value and no NaN equals another, so two ``compile()`` of
    one file with a folded NaN (``test/test_float.py``'s) are unequal to each other."""

    def constant(value: object) -> object:
        if isinstance(value, types.CodeType):
            return comparable(value)
        if isinstance(value, float) and value != value:
            return ("nan", struct.pack("<d", value))
        if isinstance(value, complex) and value != value:
            return ("nan", struct.pack("<dd", value.real, value.imag))
        if isinstance(value, (tuple, frozenset)):
            return type(value)(constant(item) for item in value)
        return value

    return code.replace(co_consts=tuple(constant(value) for value in code.co_consts))


class MarkerFree(StandardLibrary):
    """The oracle is CPython's own ``compile()`` of the same source. Code objects compare
    code, constants (nested code included), names, line and exception tables."""

    def test_modules_without_markers_compile_to_what_cpython_gives(self) -> None:
        """Through the short cut (nothing to rewrite, so ``compile()`` itself), and through
        the path a module with goto takes: CPython's tree parsed, prepared (no edit to
        make) and compiled. The second path, through ``ast`` objects, is most of the time:
        every top-level module takes it, and a module of a package or of the library's
        tests on three of the five versions in turn (``in_turn``). (Decoding and assembling
        every code object again is the ``Bytecode`` test.)"""
        compared = round_trips = 0
        library = Path(os.__file__).parent
        for path, data, code in standard_library():
            plain = comparable(code)
            self.assertEqual(comparable(gotopy.compile(data, path, dont_inherit=True)), plain, path)
            if Path(path).parent == library or in_turn(Path(path).relative_to(library)):
                whole = gotopy._compile.compile_source(data, path, through_tree=True)
                self.assertEqual(comparable(whole), plain, path)
                round_trips += 1
            compared += 1
        self.assertGreater(compared, 100)
        self.assertGreater(round_trips, 100)

    def test_what_gotopy_does_not_rewrite_is_cpythons_own(self) -> None:
        """A module with a rewritten function: every other code object is the one CPython
        compiles from the same source (the top-level modules, each with a goto loop added)."""
        from gotopy._runtime import code_objects

        added = (
            b"\n\n@goto\ndef _gotopy_probe(n):\n    label .top\n    if n:\n"
            b"        n -= 1\n        goto .top\n    return n\n"
        )
        compared = 0
        library = Path(os.__file__).parent
        for path, data, _ in standard_library():
            if Path(path).parent != library:
                continue
            source = data + added
            plain = code_objects(compile(source, path, "exec", dont_inherit=True))
            ours = code_objects(gotopy.compile(source, path, dont_inherit=True))
            self.assertEqual(len(ours), len(plain), path)
            for mine, theirs in zip(ours, plain):
                if mine.co_qualname in ("<module>", "_gotopy_probe"):
                    self.assertNotEqual(mine, theirs, path)
                else:
                    self.assertEqual(
                        comparable(mine), comparable(theirs), f"{path}: {mine.co_qualname}"
                    )
                    compared += 1
        self.assertGreater(compared, 1000)


class Runtime(unittest.TestCase):
    @staticmethod
    def _load(path: Path, name: str) -> types.ModuleType:
        """The module at ``path`` as plain CPython imports it, from its source (no cached
        ``.pyc``, which a file changed within a second would not invalidate): its decorators
        rewrite it."""
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        with mock.patch.object(sys, "dont_write_bytecode", True):
            spec.loader.exec_module(module)
        return module

    def test_run_gives_the_program_argv_and_exit_status_as_python(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            script = Path(directory, "argv.py")
            script.write_text("import sys\nprint(sys.argv, __name__)\nsys.exit(3)\n")
            ours = subprocess.run(
                [sys.executable, "-m", "gotopy", "run", str(script), "a", "-b"],
                capture_output=True,
                text=True,
            )
            python = subprocess.run(
                [sys.executable, str(script), "a", "-b"], capture_output=True, text=True
            )
            self.assertEqual((ours.stdout, ours.returncode), (python.stdout, python.returncode))

    def test_run_gives_the_globals_and_the_traceback_of_python(self) -> None:
        """The oracle is ``python FILE``: the main module's globals, and an uncaught
        exception (chained, from a function) printed byte for byte as CPython prints it,
        with none of gotopy's own frames, exit status 1."""
        program = textwrap.dedent(
            """
            import sys
            print(sorted(globals()), __name__, __spec__, __package__, __doc__)
            print(type(__builtins__).__name__, type(__loader__).__name__, __loader__.name)
            def inner(x):
                return 1 / x
            def outer():
                try:
                    inner(0)
                except ZeroDivisionError as error:
                    raise KeyError("again") from error
            outer()
            """
        )
        with tempfile.TemporaryDirectory() as directory:
            script = Path(directory, "fails.py")
            script.write_text(program)
            ours = subprocess.run(
                [sys.executable, "-m", "gotopy", "run", str(script)], capture_output=True, text=True
            )
            python = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        self.assertIn("KeyError: 'again'", python.stderr)
        self.assertEqual(
            (ours.stdout, ours.stderr, ours.returncode), (python.stdout, python.stderr, python.returncode)
        )

    def test_run_reports_a_rejected_program_and_exits_one(self) -> None:
        path = FIXTURES / "err" / "unknown_label.py"
        ours = subprocess.run(
            [sys.executable, "-m", "gotopy", "run", str(path)], capture_output=True, text=True
        )
        self.assertEqual(ours.returncode, 1, ours.stderr)
        self.assertEqual(ours.stdout, "")
        self.assertIn("error[G002]: unknown label", ours.stderr)
        self.assertNotIn("Traceback", ours.stderr)

    def test_decorator_keeps_the_function_object(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            module = Path(directory) / "decorated.py"
            module.write_text(
                textwrap.dedent(
                    '''
                    import functools
                    from gotopy import goto, label

                    def outer(k):
                        @goto
                        def count(n: int, *, step: int = 1) -> list:
                            """Counts down."""
                            out = []
                            label .top
                            if n <= 0:
                                return out + [k]
                            out.append(n)
                            n -= step
                            goto .top
                        return count
                    '''
                )
            )
            loaded = self._load(module, "decorated")
            count = loaded.outer("k")
            self.assertEqual(count(3), [3, 2, 1, "k"])
            self.assertEqual(count(4, step=2), [4, 2, "k"])
            self.assertEqual(count.__doc__, "Counts down.")
            self.assertEqual(count.__kwdefaults__, {"step": 1})
            self.assertEqual(count.__annotations__["n"], int)
            self.assertEqual(count.__qualname__, "outer.<locals>.count")

    def test_decorator_keeps_everything_as_without_gotopy(self) -> None:
        """SPEC section 6 on the decorator's own path (a module CPython compiled itself):
        the oracle is the same module without goto (markers as ``pass``, the decorator the
        identity), loaded by this CPython. Every attribute of every function agrees, and
        the decorator returns the function object it was given, also called as ``goto(f)``
        without ``@`` and on a module's code object."""
        template = textwrap.dedent(
            '''
            import functools
            from gotopy import goto, label

            def outer(k):
                @functools.wraps(print)
                @goto
                def inner(a: int, b=2, *args, c: str = "c", d, **kw) -> list:
                    """Counts down."""
                    out = []
                    label .top
                    if a <= 0:
                        return out + [k, b, c, d]
                    out.append(a)
                    a -= 1
                    goto .top
                inner.extra = "kept"
                return inner

            class C:
                @goto
                @staticmethod
                def s(x=1):
                    goto .end
                    x = 0
                    label .end
                    return x

                @classmethod
                @goto
                def c(cls, y=2):
                    goto .end
                    y = 0
                    label .end
                    return cls.__name__, y

            def undecorated(n):
                total = 0
                label .loop
                if n:
                    total += n
                    n -= 1
                    goto .loop
                return total

            before = undecorated
            undecorated = goto(undecorated)
            same = before is undecorated
            '''
        )
        plain = re.sub(r"(goto|label) \.\w+", "pass", template).replace(
            "from gotopy import goto, label", "goto = lambda f: f"
        )
        shown = textwrap.dedent(
            """
            import inspect
            f = module.outer(10)
            for g in (f, module.C.s, module.C.c, module.undecorated):
                code = g.__code__
                print(g.__name__, g.__qualname__, g.__doc__, g.__defaults__, g.__kwdefaults__,
                      g.__annotations__, g.__dict__.get("extra"), getattr(g, "__wrapped__", None),
                      code.co_argcount, code.co_kwonlyargcount, code.co_varnames,
                      code.co_freevars, code.co_firstlineno, inspect.signature(g))
            print([c.cell_contents for c in f.__closure__], module.same)
            """
        )
        results = []
        for name, text in (("with_goto", template), ("without_goto", plain)):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "functions.py").write_text(text)
                script = f"import importlib.util as u\nspec = u.spec_from_file_location('functions', {str(Path(directory, 'functions.py'))!r})\n"
                script += "module = u.module_from_spec(spec); spec.loader.exec_module(module)\n" + shown
                run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, f"{name}: {run.stderr}")
                results.append(run.stdout)
        self.assertEqual(results[0], results[1])
        # And what the rewritten functions compute, against the same loops without goto.
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "functions.py").write_text(template)
            module = self._load(Path(directory, "functions.py"), "functions_run")
            self.assertTrue(module.same)
            self.assertEqual(module.outer("k")(3, d=4), [3, 2, 1, "k", 2, "c", 4])
            self.assertEqual((module.C.s(), module.C.c()), (1, ("C", 2)))
            self.assertEqual(module.undecorated(4), 10)

    def test_decorator_on_a_module_code_object_rewrites_every_scope(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "script.py")
            path.write_text("n = 3\nout = []\nlabel .top\nif n:\n    out.append(n)\n    n -= 1\n    goto .top\n")
            code = compile(path.read_bytes(), str(path), "exec")
            rewritten = gotopy.goto(code)
            self.assertIsNot(rewritten, code)
            self.assertIs(gotopy.goto(rewritten), rewritten)
            scope: dict = {"goto": gotopy.goto, "label": gotopy.label}
            exec(rewritten, scope)
            self.assertEqual(scope["out"], [3, 2, 1])

    def test_decorators_of_many_functions_compile_and_walk_their_module_once(self) -> None:
        """A generated module of many decorated functions: each decorator finds its function
        in the module gotopy compiled once, which it walks once (a walk per decorator cost
        the square of the number of functions: 15 s for 4,000)."""
        from gotopy import _compile, _runtime

        n = 300
        text = "from goto import goto, label\n\n" + "".join(
            f"@goto\ndef f{i}(n):\n    s = 0\n    label .top\n    if n <= 0:\n        return s\n"
            f"    s += n + {i}\n    n -= 1\n    goto .top\n\n"
            for i in range(n)
        )
        text += f"totals = [f(4) for f in ({', '.join(f'f{i}' for i in range(n))})]\n"
        counts = {"compile": 0, "walk": 0}
        compile_source, walk = _compile.compile_source, _runtime.code_objects

        def counting_compile(*args: object, **kwargs: object) -> types.CodeType:
            counts["compile"] += 1
            return compile_source(*args, **kwargs)  # type: ignore[arg-type]

        def counting_walk(code: types.CodeType) -> list[types.CodeType]:
            counts["walk"] += 1
            return walk(code)

        with (
            tempfile.TemporaryDirectory() as directory,
            mock.patch.object(_compile, "compile_source", counting_compile),
            mock.patch.object(_runtime, "code_objects", counting_walk),
        ):
            path = Path(directory, "many.py")
            path.write_text(text)
            module = self._load(path, "many_decorated")
        # 4 + 3 + 2 + 1, and i for each of the four rounds.
        self.assertEqual(module.totals, [10 + 4 * i for i in range(n)])
        self.assertEqual(counts["compile"], 1)
        # One walk, which recurses once per code object: as many as CPython's own compile
        # of the module has (its functions, and on 3.11 the list comprehension's).
        self.assertEqual(counts["walk"], len(walk(compile(text, str(path), "exec"))))

    def test_decorator_reads_a_file_changed_since_it_last_read_it(self) -> None:
        """The decorators of one module read its file once; a file changed since, even to
        the same size with the same time of change (as a write within the file system's
        granularity of time leaves it), is read again."""
        template = "from goto import goto, label\n\n@goto\ndef f():\n    label .x\n    return {}\n"
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "changing.py")
            path.write_text(template.format(1))
            self.assertEqual(self._load(path, "changing_1").f(), 1)
            before = path.stat()
            path.write_text(template.format(2))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            self.assertEqual(path.stat().st_mtime_ns, before.st_mtime_ns)
            self.assertEqual(self._load(path, "changing_2").f(), 2)

    def test_decorator_without_source_never_accepts_what_check_rejects(self) -> None:
        """SPEC section 6: every `err` fixture whose errors are in decorated functions,
        compiled by CPython from a string (no source file) and run, is refused by the
        decorator with ``SyntaxError`` (a jump it cannot prove, a misused marker, a marker
        name bound as a local), never left to run."""
        for path in sorted((FIXTURES / "err").glob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "# gotopy: all-scopes" in text[:500] or "syntax_error" in path.name:
                continue
            with self.subTest(path.name):
                with self.assertRaises(SyntaxError) as raised:
                    exec(compile(text, "<string>", "exec"), {"__name__": "fixture"})
                self.assertIn("G200", str(raised.exception.msg))
                self.assertIn("has no source: no file, nothing in linecache", str(raised.exception.msg))

    def test_a_function_execd_by_python_c_is_rewritten_from_its_bytecode(self) -> None:
        """A string ``exec``'d by a ``python -c`` program: from 3.13 ``linecache`` holds the
        ``-c`` text under ``<string>``, the name of the ``exec``'d code too, which is not
        that code's source: the decorator rewrites it from its bytecode, as any code
        without source, and the program prints what the same loop without goto prints."""
        text = textwrap.dedent(
            """\
            from goto import goto, label

            @goto
            def total(n):
                s = 0
                label .top
                if n > 0:
                    s += n
                    n -= 1
                    goto .top
                return s

            print(total(10), sum(range(11)))
            """
        )
        done = subprocess.run(
            [sys.executable, "-c", f"exec({text!r}, {{}})"], capture_output=True, text=True, timeout=120
        )
        self.assertEqual((done.returncode, done.stdout, done.stderr), (0, "55 55\n", ""))

    def test_decorator_accepts_gotopys_own_code_without_source(self) -> None:
        """Every `ok` fixture compiled by gotopy from bytes under a name that is no file, then
        run: the decorators know the code gotopy rewrote and leave it without looking for
        markers in it (that look fails here), and the fixture's own assertions hold."""
        from gotopy import _gotopy

        def decoded(code: types.CodeType) -> bool:
            raise AssertionError(f"{code.co_qualname} searched: not known as gotopy's own")

        for path in sorted((FIXTURES / "ok").glob("*.py")):
            text = path.read_bytes()
            all_scopes = b"# gotopy: all-scopes" in text[:500]
            with self.subTest(path.name):
                code = gotopy.compile(text, "<no file>", all_scopes=all_scopes)
                scope = {"__name__": "__main__"}
                with mock.patch.object(_gotopy, "has_markers", decoded):
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(code, scope)

    def test_decorator_leaves_code_naming_no_marker_undecoded(self) -> None:
        """A decorated function that names no marker (no load, no local of that name) is
        left as it is without being decoded (its code here cannot be decoded: it ends in an
        `EXTENDED_ARG` prefix with nothing after it); one that does is still looked at: a
        local named `label` is refused."""
        import opcode

        scope: dict = {"goto": gotopy.goto}
        source = "def plain(x):\n    y = [x, x]\n    return sum(y) + 1\n"
        exec(compile(source, "<string>", "exec"), scope)
        plain = scope["plain"].__code__
        undecodable = plain.replace(co_code=plain.co_code + bytes([opcode.opmap["EXTENDED_ARG"], 0]))
        self.assertIs(gotopy.goto(undecodable), undecodable)
        self.assertIs(gotopy.goto(plain), plain)
        self.assertEqual(scope["plain"](2), 5)
        with self.assertRaises(SyntaxError) as raised:
            exec(compile("@goto\ndef f(label):\n    return label\n", "<string>", "exec"), scope)
        self.assertIn("`label` is a local variable", str(raised.exception.msg))

    def test_decorator_without_source_rewrites_what_the_bytecode_proves(self) -> None:
        source = textwrap.dedent(
            """
            def nested(rows):
                found = None
                for row in rows:
                    for x in row:
                        if x < 0:
                            found = x
                            goto .done
                label .done
                return found

            def leaves_with(manager):
                with manager:
                    goto .out
                label .out
                return 1

            def skips():
                goto .s
                x = 1
                label .s
                return x

            def multiplies(x):
                y = goto * x
                return y

            def switches(n):
                while switch *n:
                    case[1]
                    return "one"
                return "other"
            """
        )
        scope = {"goto": gotopy.goto, "label": gotopy.label, "switch": gotopy.switch, "case": gotopy.case}
        exec(compile(source, "<string>", "exec"), scope)
        nested = scope["nested"]
        self.assertIs(gotopy.goto(nested), nested)
        self.assertEqual(nested([[1, 2], [3, -4, 5]]), -4)
        self.assertIsNone(nested([[1]]))
        with self.assertRaises(SyntaxError) as raised:
            gotopy.goto(scope["leaves_with"])
        self.assertIn("G200", str(raised.exception.msg))
        self.assertIn("has no source: no file, nothing in linecache", str(raised.exception.msg))
        self.assertIn('gotopy.compile(text, filename, "exec")', str(raised.exception.msg))
        with self.assertRaises(UnboundLocalError):
            gotopy.goto(scope["skips"])()
        # check: G005, a marker inside an expression; without source, refused, never run.
        with self.assertRaises(SyntaxError) as raised:
            gotopy.goto(scope["multiplies"])
        self.assertIn("G200", str(raised.exception.msg))
        self.assertIn("has no source: no file, nothing in linecache", str(raised.exception.msg))
        with self.assertRaises(SyntaxError) as raised:
            gotopy.goto(scope["switches"])
        self.assertIn("G200", str(raised.exception.msg))

    def test_decorator_with_source_lowers_switches_and_computed_gotos(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            module = Path(directory, "dispatching.py")
            module.write_text(
                textwrap.dedent(
                    '''
                    from gotopy import goto, label, switch, case

                    @goto
                    def kind(n):
                        while switch *n:
                            case[0]
                            return "zero"
                            case[1, 2]
                            small = "small"
                            goto .done
                        small = "other"
                        label .done
                        return small

                    @goto
                    def only_switch(n):
                        while switch *n:
                            case[1]
                            return "one"
                        return "other"

                    @goto
                    def jump(name):
                        goto *name
                        label .a
                        return "a"
                        label .b
                        return "b"
                    '''
                )
            )
            loaded = self._load(module, "dispatching")
            # The oracle: what `if`/`elif` on the same values gives.
            self.assertEqual([loaded.kind(n) for n in (0, 1, 2, 3, None, "1", True)],
                             ["zero", "small", "small", "other", "other", "other", "small"])
            self.assertEqual([loaded.only_switch(n) for n in (1, 2)], ["one", "other"])
            self.assertEqual((loaded.jump("a"), loaded.jump("b")), ("a", "b"))
            with self.assertRaises(ValueError) as raised:
                loaded.jump("c")
            self.assertEqual(
                str(raised.exception),
                "goto *: no label named 'c' that this goto can jump to in `jump` (it can reach .a, .b)",
            )

    def test_computed_gotos_in_a_module_a_class_body_and_a_with_statement(self) -> None:
        # CPython's own code of `goto *expr`, lowered where names are looked up by name (a
        # module, a class body) as well as in a function; no match raises `ValueError`,
        # also for a value whose comparison with a label's name raises, and leaving a
        # `with` statement runs its exit either way.
        source = textwrap.dedent(
            """\
            # gotopy: all-scopes
            log = []
            goto *first
            label .a
            log.append("a")
            goto .end
            label .b
            log.append("b")
            label .end
            class C:
                goto *second
                label .p
                kind = "p"
                goto .done
                label .q
                kind = "q"
                label .done
            """
        )
        # A `with` body a goto may leave is an edit of CPython's tree; the module above has
        # none, and is compiled from its source as it is.
        with_source = textwrap.dedent(
            """\
            log = []
            class Manager:
                def __enter__(self):
                    log.append("enter")
                def __exit__(self, *exc):
                    log.append("exit")

            def leave(name):
                with Manager():
                    goto *name
                    label .inside
                    log.append("inside")
                label .outside
                log.append("outside")
            """
        )
        code = gotopy.compile(source, "computed.py")
        scope: dict[str, object] = {"first": "b", "second": "q"}
        exec(code, scope)
        # The oracle: the same module read as plain Python with each jump taken.
        self.assertEqual((scope["log"], getattr(scope["C"], "kind")), (["b"], "q"))
        scope = {}
        exec(gotopy.compile(with_source, "leaving.py", all_scopes=True), scope)
        leave, log = scope["leave"], scope["log"]
        assert callable(leave) and isinstance(log, list)
        leave("outside")
        leave("inside")
        self.assertEqual(log, ["enter", "exit", "outside", "enter", "inside", "exit", "outside"])
        for value, shown in (("c", "'c'"), (3, "3"), (None, "None")):
            log.clear()
            with self.assertRaises(ValueError) as raised:
                leave(value)
            self.assertEqual(
                str(raised.exception),
                f"goto *: no label named {shown} that this goto can jump to in `leave` "
                "(it can reach .inside, .outside)",
            )
            self.assertEqual(log, ["enter", "exit"])
        with self.assertRaises(ValueError) as raised:
            exec(code, {"first": "z", "second": "q"})
        self.assertIn("no label named 'z' that this goto can jump to in `<module>`", str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            exec(code, {"first": "a", "second": "z"})
        self.assertIn("no label named 'z' that this goto can jump to in `C`", str(raised.exception))

    def test_computed_gotos_of_one_place_share_one_search(self) -> None:
        # Three-address code returns from each procedure with a `goto *` of its own: the
        # computed gotos of one place (the same frames) share one search over the labels.
        # The fixture checks where each jumps and what leaving its frames does; here, that
        # each raises on its own line and is a line event only when it runs.
        source = (FIXTURES / "ok" / "computed_gotos_of_one_place.py").read_text()
        scope: dict[str, object] = {"__name__": "fixture"}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(gotopy.compile(source, "shared.py"), scope)
        machine, frames = scope["machine"], scope["frames"]
        assert callable(machine) and callable(frames)
        lines = source.splitlines()

        def line_of(statement: str, nth: int = 0) -> int:
            found = [i for i, line in enumerate(lines, 1) if line.strip() == statement]
            return found[nth]

        for call, statement, nth in (
            (lambda: machine(3, "nowhere"), "goto *stack.pop()", 0),
            (lambda: frames("nowhere", "inside", []), "goto *first", 0),
            (lambda: frames(None, 7, []), "goto *second", 0),
            (lambda: frames(None, "outside", ["to x"]), "goto *item[3:]", 0),
            (lambda: frames(None, "outside", ["y"]), "goto *item", 0),
            (lambda: frames(None, "outside", [], "w"), "goto *leave", 0),
        ):
            with self.subTest(statement=statement, nth=nth):
                # (`assertRaises` keeps the exception without its traceback.)
                try:
                    call()
                except ValueError as error:
                    raised = error
                else:
                    self.fail("no ValueError")
                innermost = raised.__traceback__
                while innermost and innermost.tb_next:
                    innermost = innermost.tb_next
                assert innermost is not None
                self.assertEqual(innermost.tb_lineno, line_of(statement, nth))

        # A line event only for the goto that runs, never for another of its place.
        traced: list[int] = []

        def tracer(frame: types.FrameType, event: str, arg: object) -> object:
            if frame.f_code.co_name == "machine" and event == "line":
                traced.append(frame.f_lineno)
            return tracer

        sys.settrace(tracer)
        try:
            machine(1)
        finally:
            sys.settrace(None)
        double, square = line_of("goto *stack.pop()", 0), line_of("goto *stack.pop()", 1)
        self.assertEqual([line for line in traced if line in (double, square)], [double, square, double])

        # The code grows with the gotos plus the labels, not with their product: twenty
        # computed gotos over forty labels cost about what CPython's own code of the same
        # statements costs.
        many = "@goto\ndef f(n, to):\n"
        for block in range(40):
            many += f"    label .b{block}\n    n += {block}\n"
            if block % 2:
                many += f"    if n > {block}:\n        goto *to\n"
        many += "    return n\n"
        plain: dict[str, object] = {}
        exec(compile(many.replace("@goto\n", ""), "many.py", "exec"), plain)
        rewritten: dict[str, object] = {"goto": gotopy.goto, "label": gotopy.label}
        exec(gotopy.compile(many, "many.py"), rewritten)
        size = {name: len(getattr(scope_["f"], "__code__").co_code) for name, scope_ in (("plain", plain), ("rewritten", rewritten))}
        self.assertLess(size["rewritten"], 4 * size["plain"], size)
        # The oracle: without a jump taken, the function adds up its blocks.
        self.assertEqual(getattr(rewritten["f"], "__call__")(-10**9, "b0"), -10**9 + sum(range(40)))

    def test_code_only_a_computed_goto_reaches_starts_below_its_value(self) -> None:
        # `.b` follows a `return`: only the computed goto reaches it, and the lowering gives
        # it the depth the goto leaves (without the value and what `goto` left under it),
        # which the switch after it searches from.
        source = textwrap.dedent(
            """\
            @goto
            def f(name, n):
                goto *name
                label .a
                return "a"
                label .b
                while switch *n:
                    case[1]
                    return "one"
                return "other"
            """
        )
        scope: dict[str, object] = {"goto": gotopy.goto, "label": gotopy.label}
        scope.update(switch=gotopy.switch, case=gotopy.case)
        exec(gotopy.compile(source, "reached.py"), scope)
        f = scope["f"]
        assert callable(f)
        # The oracle: the function read as plain Python with the jump taken.
        self.assertEqual((f("a", 1), f("b", 1), f("b", 2)), ("a", "one", "other"))

    def test_tree_edits_find_their_statements_on_shared_lines_and_deep_in_elif_chains(self) -> None:
        # Each function needs edits of CPython's tree (gotopy._prepare), which looks only
        # at the statements whose lines hold one: a guarded `return` between other
        # statements on its line, a constant `while` test on a later line than its
        # `while`, and a switch at the end of a chain of 300 `elif`s.
        branches = "".join(f"    elif n == {k}:\n        return {k}\n" for k in range(1, 300))
        source = (
            "@goto\n"
            "def shared(n):\n"
            "    if n:\n"
            "        goto .later\n"
            "    x = 'before'; return x; label .later; x = 'later'\n"
            "    return x\n"
            "@goto\n"
            "def spins(n):\n"
            "    while (\n"
            "        True\n"
            "    ):\n"
            "        n -= 1\n"
            "        if n < 0:\n"
            "            goto .out\n"
            "    label .out\n"
            "    return n\n"
            "@goto\n"
            "def chain(n, name):\n"
            "    if n == 0:\n"
            "        return 0\n"
            f"{branches}"
            "    else:\n"
            "        while switch *name:\n"
            "            case['a']\n"
            "            return 'a'\n"
            "            case['b']\n"
            "            return 'b'\n"
        )
        scope: dict[str, object] = {
            "goto": gotopy.goto,
            "label": gotopy.label,
            "switch": gotopy.switch,
            "case": gotopy.case,
        }
        exec(gotopy.compile(source, "edits.py"), scope)
        # The oracle: what each function does read as plain Python with its jumps taken.
        shared, spins, chain = scope["shared"], scope["spins"], scope["chain"]
        assert callable(shared) and callable(spins) and callable(chain)
        self.assertEqual((shared(0), shared(1)), ("before", "later"))
        self.assertEqual(spins(3), -1)
        self.assertEqual((chain(0, "a"), chain(299, "a"), chain(300, "a"), chain(301, "b")), (0, 299, "a", "b"))

    def test_goto_over_an_assignment_raises_instead_of_crashing(self) -> None:
        code = gotopy.compile(
            b"@goto\ndef f():\n    goto .skip\n    x = 1\n    label .skip\n    return x\n", "skip.py"
        )
        scope = {"goto": gotopy.goto}
        exec(code, scope)
        with self.assertRaises(UnboundLocalError):
            scope["f"]()

    def test_repeated_jumps_out_of_frames_leave_nothing_behind(self) -> None:
        """100,000 gotos out of a `for`, a `with`, an `except` handler and a `try` with
        `finally`: the stack does not grow (the code would crash or raise), and neither do
        the objects alive or the memory allocated."""
        code = gotopy.compile(
            textwrap.dedent(
                """
                class Manager:
                    def __enter__(self):
                        return self
                    def __exit__(self, *exc):
                        return False

                @goto
                def churn(n):
                    done = 0
                    label .again
                    if done >= n:
                        return done
                    for item in [1, 2, 3]:
                        with Manager():
                            try:
                                try:
                                    raise ValueError(item)
                                except ValueError as error:
                                    done += 1
                                    goto .again
                            finally:
                                done += 0
                """
            ).encode(),
            "churn.py",
        )
        scope = {"goto": gotopy.goto}
        exec(code, scope)
        import gc
        import tracemalloc

        scope["churn"](1000)
        gc.collect()
        objects = len(gc.get_objects())
        tracemalloc.start()
        self.assertEqual(scope["churn"](100_000), 100_000)
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.assertLess(len(gc.get_objects()) - objects, 100)
        self.assertLess(current, 100_000)
        self.assertIsNone(sys.exc_info()[1])

    def test_import_hook_caches_under_its_own_name(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "countdown.py").write_text(
                "from goto import goto, label\n\n@goto\ndef run(n):\n    out = []\n"
                "    label .top\n    if n:\n        out.append(n)\n        n -= 1\n"
                "        goto .top\n    return out\n"
            )
            script = (
                "import gotopy; gotopy.install(); import countdown; print(countdown.run(3))"
            )
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            for _ in range(2):  # the second run reads the cache
                run = subprocess.run(
                    [sys.executable, "-c", script],
                    capture_output=True,
                    cwd=directory,
                    text=True,
                    env=env,
                )
                self.assertEqual(run.stdout.strip(), "[3, 2, 1]", run.stderr)
            cached = sorted(p.name for p in Path(directory, "__pycache__").iterdir())
            self.assertEqual(len(cached), 1, cached)
            self.assertIn(".opt-gotopy", cached[0])
            # Plain CPython writes and reads its own name, never gotopy's.
            plain = subprocess.run(
                [sys.executable, "-c", "import countdown"], capture_output=True, cwd=directory, env=env
            )
            self.assertEqual(plain.returncode, 0)
            names = sorted(p.name for p in Path(directory, "__pycache__").iterdir())
            self.assertEqual(len(names), 2, names)
            # A changed source is compiled again, as CPython's own cache is invalidated.
            module = Path(directory, "countdown.py")
            module.write_text(module.read_text().replace("out.append(n)", "out.append(-n)"))
            run = subprocess.run(
                [sys.executable, "-c", script], capture_output=True, cwd=directory, text=True, env=env
            )
            self.assertEqual(run.stdout.strip(), "[-3, -2, -1]", run.stderr)

    def test_import_hook_and_plain_cpython_never_take_each_others_cache(self) -> None:
        """A module that gives one answer under plain CPython (its ``goto`` raises) and
        another through the hook (module asks for all scopes, so an undecorated function is
        rewritten), imported in both orders: each interpreter answers as it must, whichever
        cache file is there. The hook's second import reads its cache (its compiler is
        gone), and with ``PYTHONDONTWRITEBYTECODE`` it writes none."""
        module = textwrap.dedent(
            """\
            # gotopy: all-scopes
            from goto import goto, label

            def answer():
                try:
                    goto .rewritten
                except RuntimeError:
                    return "plain"
                label .rewritten
                return "gotopy"
            """
        )
        plain = "import m; print(m.answer())"
        hooked = "import gotopy; gotopy.install(); import m; print(m.answer())"
        cached_only = (
            "import gotopy, gotopy._compile as c; gotopy.install(); c.compile_source = None; "
            "import m; print(m.answer())"
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

        def answer(script: str, directory: str, **extra: str) -> str:
            run = subprocess.run(
                [sys.executable, "-c", script],
                capture_output=True,
                cwd=directory,
                text=True,
                env={**env, **extra},
            )
            self.assertEqual(run.returncode, 0, run.stderr)
            return run.stdout.strip()

        for order in ((plain, hooked), (hooked, plain)):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "m.py").write_text(module)
                for script in (*order, *order):
                    self.assertEqual(answer(script, directory), "plain" if script is plain else "gotopy")
                self.assertEqual(answer(cached_only, directory), "gotopy")
                self.assertEqual(len(list(Path(directory, "__pycache__").iterdir())), 2)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "m.py").write_text(module)
            self.assertEqual(answer(hooked, directory, PYTHONDONTWRITEBYTECODE="1"), "gotopy")
            self.assertFalse(Path(directory, "__pycache__").exists())


if __name__ == "__main__":
    unittest.main()
