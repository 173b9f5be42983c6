"""The package as a user installs it: the wheel ``tools/dist`` builds, in a fresh virtual
environment (tests/common/cpython.rs), with no Rust on ``PATH`` (tests/cpython.rs sets
``GOTOPY_NO_RUST=1`` when it runs this module so).

The ``gotopy`` command the wheel installs gives what ``python -m gotopy`` gives (the same
options, output and exit status; only the program name in usage lines differs); a program
run by it prints what the ``gotopy`` binary (``GOTOPY_BIN``, RustPython) prints; the package
comes from site-packages with its native module, the ``goto`` module and ``py.typed``; and
its version is the one its metadata records. Standard library only.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("GOTOPY_BIN")
# The console script pip wrote beside this interpreter.
COMMAND = Path(sysconfig.get_path("scripts"), "gotopy")


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT)


def both(*args: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """``gotopy ARGS`` and ``python -m gotopy ARGS``."""
    return run([str(COMMAND), *args]), run([sys.executable, "-m", "gotopy", *args])


class Installed(unittest.TestCase):
    def test_no_rust_on_the_path(self) -> None:
        if not os.environ.get("GOTOPY_NO_RUST"):
            self.skipTest("GOTOPY_NO_RUST is not set (tests/cpython.rs sets it)")
        for tool in ("cargo", "rustc"):
            self.assertIsNone(shutil.which(tool), f"{tool} is on PATH")

    def test_the_package_comes_from_site_packages(self) -> None:
        import goto
        import gotopy
        from gotopy import _gotopy

        site = {Path(sysconfig.get_path(name)).resolve() for name in ("purelib", "platlib")}
        for module in (gotopy, goto, _gotopy):
            path = Path(module.__file__ or "").resolve()
            self.assertTrue(any(parent in site for parent in path.parents), f"{module.__name__} is at {path}")
        # One abi3 extension for every version with the GIL; without it, the extension of
        # this version (a free-threaded build cannot load abi3 before 3.15's abi3t). And the
        # marker of a typed package.
        suffix = sysconfig.get_config_var("EXT_SUFFIX") if sysconfig.get_config_var("Py_GIL_DISABLED") else ".abi3.so"
        self.assertTrue(Path(_gotopy.__file__ or "").name.endswith(suffix), _gotopy.__file__)
        self.assertTrue(Path(gotopy.__file__ or "").with_name("py.typed").is_file())

    def test_the_version_is_the_metadata_one(self) -> None:
        import gotopy

        version = importlib.metadata.version("gotopy")
        self.assertEqual(gotopy.__version__, version)
        for result in both("--version"):
            self.assertEqual((result.returncode, result.stdout, result.stderr), (0, f"gotopy {version}\n", ""))
        if BINARY:
            # The Rust binary is the same release.
            self.assertEqual(run([BINARY, "--version"]).stdout, f"gotopy {version}\n")

    def test_the_command_is_the_module(self) -> None:
        """Every subcommand's help, a clean check, a failing check and a translation: the
        same bytes and status, but for the program name."""
        cases = [
            ["--help"],
            ["check", "--help"],
            ["run", "--help"],
            ["compile", "--help"],
            ["translate", "--help"],
            ["check", "examples/countdown.py"],
            ["check", "--format", "json", "fixtures/err/duplicate_label.py"],
            ["translate", "examples/countdown.py"],
            ["check", "no/such/file.py"],
            ["no-such-command"],
        ]
        def same(text: str) -> str:
            # The program name, and the lines clap aligns after it.
            return " ".join(text.replace("python -m gotopy", "gotopy").split())

        for args in cases:
            with self.subTest(args=args):
                command, module = both(*args)
                self.assertEqual(command.returncode, module.returncode)
                for ours, theirs in ((command.stdout, module.stdout), (command.stderr, module.stderr)):
                    self.assertEqual(same(ours), same(theirs))
        self.assertIn("\nUsage: gotopy [OPTIONS] <COMMAND>\n", both("--help")[0].stdout)

    def test_run_prints_what_the_binary_prints(self) -> None:
        command = run([str(COMMAND), "run", "examples/countdown.py"])
        self.assertEqual((command.returncode, command.stderr), (0, ""))
        # What the program computes, worked out by hand: 1 + ... + 100, the cell of 4, and
        # the kinds of 0, 2, 10, 11 and 99 (10 prints a line and falls through to 11).
        self.assertEqual(
            command.stdout,
            "5050\n(1, 1)\nten, falls through\n['zero', 'small', 'ten or eleven', 'ten or eleven', 'other']\n",
        )
        if BINARY:
            self.assertEqual(run([BINARY, "run", "examples/countdown.py"]).stdout, command.stdout)

    def test_compile_writes_a_pyc_that_plain_python_runs(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            program = Path(directory, "countdown.py")
            shutil.copy(ROOT / "examples" / "countdown.py", program)
            compiled = run([str(COMMAND), "compile", str(program)])
            self.assertEqual(compiled.returncode, 0, compiled.stderr)
            caches = list(Path(directory, "__pycache__").glob("countdown.*.pyc"))
            self.assertEqual(len(caches), 1, caches)
            # `-I -S`: nothing but the standard library; the cache runs without gotopy.
            ran = run([sys.executable, "-I", "-S", str(caches[0])])
            self.assertEqual((ran.returncode, ran.stderr), (0, ""))
            self.assertTrue(ran.stdout.startswith("5050\n"), ran.stdout)


if __name__ == "__main__":
    unittest.main()
