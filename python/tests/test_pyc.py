"""``python -m gotopy compile`` on the running interpreter: standard ``.pyc`` files that run
on a plain CPython of the same version, without gotopy.

The oracle for what a compiled program prints is the same fixture run by ``python -m gotopy
run`` (whose own assertions, written from CPython without goto, hold: test_run.py); the
plain interpreter that runs the ``.pyc`` is started so that ``gotopy`` and ``goto`` cannot
be imported, which the tests check first. Needs the package installed (tests/cpython.rs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
# `ok` fixtures whose module needs gotopy at run time, which a standalone file refuses.
NEEDS_GOTOPY = {
    # markers in a function that is not rewritten
    "markers_not_rewritten_warning.py": "`goto` is still needed",
    # `import goto as gotopy` and `gotopy.__name__` used as a value
    "marker_names_imported_or_global.py": "`gotopy` is still needed",
}
# No site-packages (where the package is installed), no PYTHONPATH, no user site.
WITHOUT_GOTOPY = [sys.executable, "-I", "-S"]


def compile_(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gotopy", "compile", *args], capture_output=True, text=True, env=_no_color()
    )


def _no_color() -> dict[str, str]:
    return dict(os.environ, NO_COLOR="1")


def on_a_terminal(command: list[str]) -> str:
    """What ``command`` writes to standard error when that is a terminal (a pseudo-terminal
    of this test), its exit status checked; skips the test where there is no pseudo-terminal
    (Windows)."""
    if os.name == "nt":
        raise unittest.SkipTest("no pseudo-terminal here (the pty module needs POSIX's termios)")
    import pty

    controller, terminal = pty.openpty()
    run = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the command has ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    if run.wait() != 0:
        raise AssertionError(f"{command} failed: {shown!r}")
    return shown.decode("utf-8", "replace")


class Standalone(unittest.TestCase):
    def test_the_plain_interpreter_cannot_import_gotopy(self) -> None:
        for module in ("gotopy", "goto"):
            run = subprocess.run([*WITHOUT_GOTOPY, "-c", f"import {module}"], capture_output=True)
            self.assertNotEqual(run.returncode, 0, f"{module} is importable without site-packages")

    def test_compiled_fixtures_print_what_gotopy_run_prints(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            sources = Path(directory, "src")
            shutil.copytree(FIXTURES / "ok", sources)
            out = Path(directory, "out")
            compiled = compile_("--out-dir", str(out), str(sources))
            self.assertEqual(compiled.returncode, 1, compiled.stderr)
            for path in sorted(sources.glob("*.py")):
                with self.subTest(path.name):
                    pyc = out / (path.stem + ".pyc")
                    if path.name in NEEDS_GOTOPY:
                        self.assertFalse(pyc.exists())
                        self.assertIn(f"{path}:", compiled.stderr)
                        self.assertIn(NEEDS_GOTOPY[path.name], compiled.stderr)
                        continue
                    expected = subprocess.run(
                        [sys.executable, "-m", "gotopy", "run", str(path)], capture_output=True, text=True
                    )
                    self.assertEqual(expected.returncode, 0, expected.stderr)
                    got = subprocess.run([*WITHOUT_GOTOPY, str(pyc)], capture_output=True, text=True)
                    self.assertEqual(got.returncode, 0, got.stderr)
                    self.assertEqual(got.stdout, expected.stdout)

    def test_what_only_gotopy_needs_is_left_out_at_any_depth(self) -> None:
        """The imports of ``goto`` and ``gotopy`` (nested in an ``if``, a class and a
        function, under other names), ``install()`` calls and the opt-in decorators of the
        rewritten functions: all left out, a body they emptied still a body, and the
        function's first line its decorator's, as CPython records it with the decorator."""
        source = (
            "import sys\n"
            "if sys.version_info > (3,):\n"
            "    import goto\n"
            "import gotopy\n"
            "gotopy.install()\n"
            "from goto import with_goto as wg\n"
            "class Counter:\n"
            "    from gotopy import goto, label\n"
            "    @goto\n"
            "    def down(self, n):\n"
            "        seen = []\n"
            "        label .again\n"
            "        seen.append(n)\n"
            "        n -= 1\n"
            "        if n:\n"
            "            goto .again\n"
            "        return seen\n"
            "def helper():\n"
            "    import gotopy\n"
            "    gotopy.install()\n"
            "    return 5\n"
            "print(Counter().down(3), helper(), Counter.down.__code__.co_firstlineno)\n"
            "print([name for name in ('goto', 'gotopy', 'wg') if name in globals()])\n"
        )
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "nested.py")
            path.write_text(source)
            compiled = compile_("--out-dir", str(Path(directory, "out")), str(path))
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            expected = subprocess.run(
                [sys.executable, "-m", "gotopy", "run", str(path)], capture_output=True, text=True
            )
            got = subprocess.run([*WITHOUT_GOTOPY, str(Path(directory, "out", "nested.pyc"))], capture_output=True, text=True)
            self.assertEqual(got.returncode, 0, got.stderr)
            self.assertEqual(got.stdout.splitlines()[0], expected.stdout.splitlines()[0])
            self.assertEqual(got.stdout.splitlines()[1], "[]")

    def test_the_cache_file_beside_the_source_is_what_plain_cpython_imports(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            source = Path(directory, "switching.py")
            shutil.copy(FIXTURES / "ok/switch_str_cases.py", source)
            compiled = compile_(str(source))
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            import importlib.util

            self.assertTrue(Path(importlib.util.cache_from_source(str(source))).exists())
            expected = subprocess.run(
                [sys.executable, "-m", "gotopy", "run", str(source)], capture_output=True, text=True
            )
            # The source imports `goto`, which plain CPython cannot: only the cache runs.
            got = subprocess.run(
                [*WITHOUT_GOTOPY, "-c", f"import sys; sys.path.insert(0, {directory!r}); import switching"],
                capture_output=True,
                text=True,
            )
            self.assertEqual(got.returncode, 0, got.stderr)
            self.assertEqual(got.stdout, expected.stdout)

    def test_invalidation_modes_write_py_compiles_headers(self) -> None:
        flags = {"timestamp": 0, "checked-hash": 3, "unchecked-hash": 1}
        import importlib.util

        with tempfile.TemporaryDirectory() as directory:
            source = Path(directory, "loop.py")
            shutil.copy(FIXTURES / "ok/label_after_while_true.py", source)
            for mode, flag in flags.items():
                with self.subTest(mode):
                    compiled = compile_("--invalidation-mode", mode, str(source))
                    self.assertEqual(compiled.returncode, 0, compiled.stderr)
                    data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
                    self.assertEqual(data[:4], importlib.util.MAGIC_NUMBER)
                    self.assertEqual(int.from_bytes(data[4:8], "little"), flag)
                    if flag:
                        self.assertEqual(data[8:16], importlib.util.source_hash(source.read_bytes()))

    def test_each_invalidation_mode_is_honoured_by_plain_cpython(self) -> None:
        """The oracle is plain CPython's own import: a timestamp or checked-hash file is taken
        while the source is unchanged and dropped once it changes (CPython then compiles
        the source itself, which cannot import `goto`); an unchecked-hash file is taken
        whatever the source says."""
        import importlib.util

        for mode, after_change in (("timestamp", False), ("checked-hash", False), ("unchecked-hash", True)):
            with self.subTest(mode), tempfile.TemporaryDirectory() as directory:
                source = Path(directory, "loop.py")
                shutil.copy(FIXTURES / "ok/label_after_while_true.py", source)
                compiled = compile_("--invalidation-mode", mode, str(source))
                self.assertEqual(compiled.returncode, 0, compiled.stderr)
                data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
                if mode == "timestamp":
                    status = source.stat()
                    self.assertEqual(int.from_bytes(data[8:12], "little"), int(status.st_mtime) & 0xFFFFFFFF)
                    self.assertEqual(int.from_bytes(data[12:16], "little"), status.st_size & 0xFFFFFFFF)
                importing = [*WITHOUT_GOTOPY, "-c", f"import sys; sys.path.insert(0, {directory!r}); import loop"]
                self.assertEqual(subprocess.run(importing, capture_output=True).returncode, 0)
                with source.open("a") as file:
                    file.write("# changed\n")
                changed = subprocess.run(importing, capture_output=True, text=True)
                self.assertEqual(changed.returncode == 0, after_change, changed.stderr)
                if not after_change:
                    self.assertIn("No module named 'goto'", changed.stderr)

    def test_source_date_epoch_makes_checked_hash_files(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            source = Path(directory, "loop.py")
            shutil.copy(FIXTURES / "ok/label_after_while_true.py", source)
            compiled = subprocess.run(
                [sys.executable, "-m", "gotopy", "compile", str(source)],
                capture_output=True,
                text=True,
                env=dict(_no_color(), SOURCE_DATE_EPOCH="1700000000"),
            )
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            import importlib.util

            data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
            self.assertEqual(int.from_bytes(data[4:8], "little"), 3)

    def test_optimized_files_are_named_and_taken_as_cpython_names_them(self) -> None:
        """``python -O -m gotopy compile`` writes the ``.opt-1`` file, which ``python -O``
        imports (and whose asserts are gone, as CPython's own ``-O`` drops them)."""
        with tempfile.TemporaryDirectory() as directory:
            source = Path(directory, "asserting.py")
            source.write_text(
                "from goto import goto, label\n\n@goto\ndef f():\n    goto .end\n"
                "    label .end\n    assert False, 'asserts run'\n    return 'asserts dropped'\n\n"
                "print(f())\n"
            )
            compiled = subprocess.run(
                [sys.executable, "-O", "-m", "gotopy", "compile", str(source)],
                capture_output=True,
                text=True,
                env=_no_color(),
            )
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            cache = Path(directory, "__pycache__")
            self.assertEqual([p.name.split(".")[-2] for p in cache.iterdir()], ["opt-1"])
            importing = f"import sys; sys.path.insert(0, {directory!r}); import asserting"
            got = subprocess.run([sys.executable, "-I", "-S", "-O", "-c", importing], capture_output=True, text=True)
            self.assertEqual((got.returncode, got.stdout), (0, "asserts dropped\n"), got.stderr)

    def test_out_dir_keeps_the_tree_and_its_packages_import_without_sources(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            sources = Path(directory, "src")
            package = sources / "pkg" / "sub"
            package.mkdir(parents=True)
            (sources / "pkg" / "__init__.py").write_text("")
            (package / "__init__.py").write_text("from .countdown import run\n")
            (package / "countdown.py").write_text(
                "from goto import goto, label\n\n@goto\ndef run(n):\n    out = []\n    label .top\n"
                "    if n:\n        out.append(n)\n        n -= 1\n        goto .top\n    return out\n"
            )
            out = Path(directory, "out")
            compiled = compile_("--out-dir", str(out), str(sources))
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.pyc"))
            self.assertEqual(written, ["pkg/__init__.pyc", "pkg/sub/__init__.pyc", "pkg/sub/countdown.pyc"])
            importing = f"import sys; sys.path.insert(0, {str(out)!r}); import pkg.sub; print(pkg.sub.run(3))"
            got = subprocess.run([*WITHOUT_GOTOPY, "-c", importing], capture_output=True, text=True)
            self.assertEqual((got.returncode, got.stdout), (0, "[3, 2, 1]\n"), got.stderr)

    def test_a_progress_bar_shows_on_a_terminal_only(self) -> None:
        """From 32 files, on a terminal: the package's compile and, where the test has it
        (GOTOPY_BIN), the binary's, for CPython and for RustPython. None draws one into a
        pipe. (A bar is redrawn at most so often: it shows some count of the 40 files.)"""
        commands = [[sys.executable, "-m", "gotopy", "compile"]]
        if os.environ.get("GOTOPY_BIN"):
            commands.append([os.environ["GOTOPY_BIN"], "compile", "--python", sys.executable])
            commands.append([os.environ["GOTOPY_BIN"], "compile"])
        with tempfile.TemporaryDirectory() as directory:
            for index in range(40):
                Path(directory, f"m{index}.py").write_text(f"x = {index}\n")
            for command in commands:
                with self.subTest(command[0]):
                    out = Path(tempfile.mkdtemp(dir=directory, prefix="out"))
                    shown = on_a_terminal([*command, "--out-dir", str(out), directory])
                    self.assertRegex(shown, r"\b[1-4]?[0-9]/40\b")
                    self.assertEqual(len(list(out.glob("*.*pyc"))), 40)
                    piped = subprocess.run([*command, "--out-dir", str(out), directory], capture_output=True, text=True)
                    self.assertEqual((piped.returncode, piped.stderr), (0, ""))

    def test_errors_are_reported_and_the_other_files_still_written(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            shutil.copy(FIXTURES / "ok/switch_int_cases.py", Path(directory, "good.py"))
            bad = next(p for p in sorted((FIXTURES / "err").glob("*.py")) if "G002" in p.read_text().split("\n\n")[0])
            shutil.copy(bad, Path(directory, "bad.py"))
            out = Path(directory, "out")
            compiled = compile_("--out-dir", str(out), directory)
            self.assertEqual(compiled.returncode, 1, compiled.stderr)
            self.assertIn("error[G002]", compiled.stderr)
            self.assertTrue((out / "good.pyc").exists())
            self.assertFalse((out / "bad.pyc").exists())

    def test_unreadable_inputs_exit_with_status_2(self) -> None:
        missing = compile_("no/such/file.py")
        self.assertEqual(missing.returncode, 2)
        self.assertIn("no/such/file.py: cannot read: no such file or directory", missing.stderr)
        self.assertEqual(compile_("-").returncode, 2)


if __name__ == "__main__":
    unittest.main()
