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
