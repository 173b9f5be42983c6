"""Many threads using gotopy at once: what each gets equals what one thread alone gets, and
the programs print what their plain twins print.

Each round starts 16 threads together (a barrier) and each thread, in an order of its own:
installs the import hook (``gotopy.install()``, every thread at once); imports two goto
programs through the hook, one that three other threads import at once and one of its own;
compiles the programs, a share of ``fixtures/ok`` and a deep module (``DEEP``) with
``gotopy.compile``; and runs the programs as CPython compiled them, so that their
``@with_goto`` decorators rewrite them at run time. The oracles: the code objects one thread
got from ``gotopy.compile`` and from the decorators before the round (CPython's equality of
code objects, nested ones included), and the output of each program's twin written without
goto (``tests/programs/NAME_plain.py``) as CPython runs it. After a round the hook is on
``sys.meta_path`` once, and the process's recursion limit and collector are as they were. A
round that has not ended within ``GOTOPY_THREAD_TIMEOUT`` seconds (300) fails, with every
thread's stack: a deadlock.

``GOTOPY_THREAD_ROUNDS`` rounds (2 by default; ``tests/cpython.rs`` asks for 50 on the
free-threaded build). Needs the package installed in the running interpreter.
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import traceback
import types
import unittest
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gotopy
from gotopy import _compile, _gotopy, _hook

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"
FIXTURES = ROOT / "fixtures" / "ok"
THREADS = 16
ROUNDS = int(os.environ.get("GOTOPY_THREAD_ROUNDS", "2"))
TIMEOUT = float(os.environ.get("GOTOPY_THREAD_TIMEOUT", "300"))
# The module the imported programs print through (their first line binds `print` to it).
CAPTURE = "gotopy_threads_capture"
# A module that nests deeply enough for the front end's word (`Plan.deep`: 300 levels of
# `elif`) and whose plan edits CPython's tree (the label after `return`): its source is
# compiled first under the caller's own recursion limit, then its tree makes the round trip
# on a thread of its own (`gotopy-tree`) under the raised limit, while other threads' round
# trips and compiles of their sources overlap it (`_prepare.compiled`).
DEEP = (
    "from goto import goto, label\n\n\n@goto\ndef pick(k):\n    if k == 0:\n        x = 0\n"
    + "".join(f"    elif k == {i}:\n        x = {i}\n" for i in range(1, 300))
    + "    else:\n        x = -1\n    if x < 0:\n        goto .late\n    return x\n    label .late\n"
    + '    return "late"\n\n\nprint(pick(-1), pick(299))\n'
)
DEEP_PRINTS = "late 299\n"


def printer(lines: list[str]) -> Callable[..., None]:
    """A ``print`` that appends what it would print to ``lines``, for one program: the
    threads share ``sys.stdout``."""

    def captured(*args: object, sep: str | None = " ", end: str | None = "\n", **_: object) -> None:
        lines.append((" " if sep is None else sep).join(map(str, args)) + ("\n" if end is None else end))

    return captured


def run_program(code: types.CodeType, path: Path) -> tuple[str, dict[str, types.CodeType]]:
    """What ``code`` (a program's module) prints, and the code objects of the functions it
    defines, by name, once they ran (rewritten by their decorators where CPython compiled
    it)."""
    lines: list[str] = []
    scope: dict[str, Any] = {"__name__": "__main__", "__file__": str(path), "print": printer(lines)}
    exec(code, scope)  # noqa: S102 - the program under test
    return "".join(lines), functions(scope, path)


def functions(scope: dict[str, Any], path: Path) -> dict[str, types.CodeType]:
    """The code objects of the functions in ``scope`` that the file ``path`` defines."""
    return {
        name: value.__code__
        for name, value in scope.items()
        if isinstance(value, types.FunctionType) and value.__code__.co_filename == str(path)
    }


# Neither inherits this module's `from __future__ import annotations`, as neither the import
# hook nor the decorators do.
def gotopy_compiled(source: str | bytes, path: Path) -> types.CodeType:
    return gotopy.compile(source, str(path), "exec", dont_inherit=True)


def cpython_compiled(source: str, path: Path) -> types.CodeType:
    return compile(source, str(path), "exec", dont_inherit=True)


def gotopy_functions(path: Path) -> dict[str, types.CodeType]:
    """The code objects of the functions the file defines at its top level, compiled by
    ``gotopy.compile`` in this thread."""
    code = gotopy_compiled(path.read_bytes(), path)
    return {
        constant.co_name: constant
        for constant in code.co_consts
        if isinstance(constant, types.CodeType) and constant.co_flags & inspect.CO_OPTIMIZED
    }


class Oracle:
    """What one thread gets, before any round: each program's plain twin's output and the
    code ``gotopy.compile`` and the decorators give; each fixture's compiled code."""

    def __init__(self) -> None:
        self.programs = sorted(path.stem.removesuffix("_plain") for path in PROGRAMS.glob("*_plain.py"))
        self.fixtures = sorted(FIXTURES.glob("*.py"))
        self.text = {name: (PROGRAMS / f"{name}.py").read_text(encoding="utf-8") for name in self.programs}
        self.plain: dict[str, str] = {}
        self.compiled: dict[str, types.CodeType] = {}
        self.decorated: dict[str, dict[str, types.CodeType]] = {}
        for name in self.programs:
            plain = PROGRAMS / f"{name}_plain.py"
            self.plain[name] = run_program(cpython_compiled(plain.read_text(encoding="utf-8"), plain), plain)[0]
            self.compiled[name] = gotopy_compiled(self.text[name], PROGRAMS / f"{name}.py")
            self.decorated[name] = self.decorate(name)[1]
        self.fixture_code = {path.name: gotopy_compiled(path.read_bytes(), path) for path in self.fixtures}
        self.deep_path = Path(tempfile.gettempdir(), "gotopy_threads_deep.py")
        self.deep_plan = _gotopy.plan(str(self.deep_path), DEEP.encode())
        self.deep_code = gotopy_compiled(DEEP, self.deep_path)

    def decorate(self, name: str) -> tuple[str, dict[str, types.CodeType]]:
        """The program compiled by CPython and run: its decorators rewrite it."""
        path = PROGRAMS / f"{name}.py"
        return run_program(cpython_compiled(self.text[name], path), path)


class Round:
    """One round's threads and what they found wrong."""

    def __init__(
        self, oracle: Oracle, outputs: dict[str, list[str]], module_functions: dict[str, dict[str, types.CodeType]]
    ) -> None:
        self.oracle = oracle
        # What each imported module printed, and its functions as one thread compiles its file.
        self.outputs = outputs
        self.module_functions = module_functions
        self.failures: list[str] = []
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(THREADS)

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)

    def expect(self, what: str, got: object, expected: object) -> None:
        if got != expected:
            self.fail(f"{what}: got {got!r}, expected {expected!r}")

    def worker(self, index: int) -> None:
        try:
            self.barrier.wait()
            gotopy.install()
            jobs = [self.compile_all, self.import_two, self.decorate_one]
            for turn in range(len(jobs)):
                jobs[(index + turn) % len(jobs)](index)
        except BaseException:  # noqa: BLE001 - every failure of a thread is the round's
            self.fail(f"thread {index}:\n{traceback.format_exc()}")

    def compile_all(self, index: int) -> None:
        """``gotopy.compile`` of every program, run, and of every fourth fixture."""
        oracle = self.oracle
        for name in oracle.programs:
            path = PROGRAMS / f"{name}.py"
            code = gotopy_compiled(oracle.text[name], path)
            self.expect(f"gotopy.compile of {name} in thread {index}", code, oracle.compiled[name])
            printed, _ = run_program(code, path)
            self.expect(f"{name} compiled in thread {index} printed", printed, oracle.plain[name])
        for path in oracle.fixtures[index % 4 :: 4]:
            code = gotopy_compiled(path.read_bytes(), path)
            self.expect(f"gotopy.compile of {path.name} in thread {index}", code, oracle.fixture_code[path.name])
        code = gotopy_compiled(DEEP, oracle.deep_path)
        self.expect(f"gotopy.compile of the deep module in thread {index}", code, oracle.deep_code)
        printed, _ = run_program(code, oracle.deep_path)
        self.expect(f"the deep module compiled in thread {index} printed", printed, DEEP_PRINTS)

    def import_two(self, index: int) -> None:
        """Imports through the hook the module of the thread's program that every fourth
        thread imports, and the thread's own."""
        name = program_of(self.oracle, index)
        for module_name in (f"{name}_shared", f"{name}_{index}"):
            module = importlib.import_module(module_name)
            with self.lock:
                printed = "".join(self.outputs[module_name])
            self.expect(f"{module_name} imported in thread {index} printed", printed, self.oracle.plain[name])
            got = functions(vars(module), Path(module.__file__ or ""))
            expected = {function: self.module_functions[module_name].get(function) for function in got}
            self.expect(f"the functions of {module_name} imported in thread {index}", got, expected)
            if not got:
                self.fail(f"{module_name} defines no function")

    def decorate_one(self, index: int) -> None:
        """Runs a program as CPython compiled it: its decorators rewrite its functions."""
        name = program_of(self.oracle, index // 2)
        printed, decorated = self.oracle.decorate(name)
        self.expect(f"{name} decorated in thread {index} printed", printed, self.oracle.plain[name])
        self.expect(f"the functions of {name} decorated in thread {index}", decorated, self.oracle.decorated[name])


def program_of(oracle: Oracle, index: int) -> str:
    return oracle.programs[index % len(oracle.programs)]


class Threads(unittest.TestCase):
    def test_the_gil_stays_off_on_a_free_threaded_cpython(self) -> None:
        """The native module declares itself free of the GIL: a free-threaded CPython would
        otherwise turn the GIL on when importing it, and warn."""
        if not sysconfig.get_config_var("Py_GIL_DISABLED"):
            self.skipTest("this CPython is built with the GIL")
        check = "import sys, goto, gotopy, gotopy._gotopy; sys.exit(sys._is_gil_enabled())"
        environment = {name: value for name, value in os.environ.items() if name != "PYTHON_GIL"}
        done = subprocess.run(
            [sys.executable, "-W", "error", "-c", check], capture_output=True, text=True, env=environment, check=False
        )
        self.assertEqual((done.returncode, done.stderr), (0, ""))

    def setUp(self) -> None:
        self.hooked = _hook.GotopyFinder in sys.meta_path
        self.limit = sys.getrecursionlimit()
        self.collecting = gc.isenabled()

    def tearDown(self) -> None:
        if not self.hooked:
            while _hook.GotopyFinder in sys.meta_path:
                sys.meta_path.remove(_hook.GotopyFinder)
        sys.modules.pop(CAPTURE, None)

    def test_threads_at_once_get_what_one_thread_gets(self) -> None:
        with warnings.catch_warnings():
            # Fixtures that warn (markers left as plain Python) would print from every thread.
            warnings.simplefilter("ignore")
            oracle = Oracle()
            self.assertEqual((oracle.deep_plan.deep, oracle.deep_plan.edits_tree), (True, True), "the deep module")
            self.assertEqual(run_program(oracle.deep_code, oracle.deep_path)[0], DEEP_PRINTS)
            started = time.perf_counter()
            for number in range(ROUNDS):
                self.round(oracle, number)
        print(
            f"\n{ROUNDS} rounds of {THREADS} threads in {time.perf_counter() - started:.1f} s "
            f"({'free-threaded' if not getattr(sys, '_is_gil_enabled', lambda: True)() else 'with the GIL'})",
            file=sys.stderr,
        )

    def round(self, oracle: Oracle, number: int) -> None:
        directory = Path(tempfile.mkdtemp(prefix="gotopy-threads-"))
        outputs: dict[str, list[str]] = {}
        capture = types.ModuleType(CAPTURE)
        capture.printer = lambda name: printer(outputs.setdefault(name, []))  # type: ignore[attr-defined]
        sys.modules[CAPTURE] = capture
        module_functions: dict[str, dict[str, types.CodeType]] = {}
        try:
            modules = [(f"{name}_shared", name) for name in oracle.programs]
            modules += [(f"{program_of(oracle, index)}_{index}", program_of(oracle, index)) for index in range(THREADS)]
            for module_name, name in modules:
                # The program, printing through this round's capture.
                path = directory / f"{module_name}.py"
                path.write_text(
                    f"print = __import__({CAPTURE!r}).printer(__name__)\n{oracle.text[name]}", encoding="utf-8"
                )
                module_functions[module_name] = gotopy_functions(path)
            sys.path.insert(0, str(directory))
            importlib.invalidate_caches()
            one = Round(oracle, outputs, module_functions)
            threads = [
                threading.Thread(target=one.worker, args=(index,), name=f"gotopy-{number}-{index}", daemon=True)
                for index in range(THREADS)
            ]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + TIMEOUT
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            stuck = [thread.name for thread in threads if thread.is_alive()]
            if stuck:
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                self.fail(f"round {number}: {stuck} still running after {TIMEOUT:.0f} s (a deadlock?)")
            self.assertEqual(one.failures, [], f"round {number}")
            self.assertEqual(sys.meta_path.count(_hook.GotopyFinder), 1, f"round {number}: the hook's finder")
            self.assertEqual(sys.getrecursionlimit(), self.limit, f"round {number}: the recursion limit")
            self.assertEqual(gc.isenabled(), self.collecting, f"round {number}: the collector")
        finally:
            if str(directory) in sys.path:
                sys.path.remove(str(directory))
            for module_name in module_functions:
                sys.modules.pop(module_name, None)
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
