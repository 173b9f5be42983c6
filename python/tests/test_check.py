"""``python -m gotopy check`` against the ``gotopy`` binary.

Every fixture, and a few command lines (standard input, a directory, a missing file, JSON,
a syntax error, colour), run through both; standard output, standard error and the exit
status must be the same bytes. ``fixtures/err`` files must also give exactly the error codes
their header names, as tests/fixtures.rs requires of the Rust front end.

Needs the package installed in the running interpreter and ``GOTOPY_BIN``, the path of the
``gotopy`` binary (tests/cpython.rs sets both up). Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
BINARY = os.environ.get("GOTOPY_BIN")


def header(text: str) -> str:
    """A fixture's leading docstring or comment lines (tests/common/mod.rs `header`)."""
    lines = iter(line.strip() for line in text.splitlines())
    out = []
    first = next(lines, None)
    if first is not None:
        out.append(first)
        docstring = first.startswith('"""') or first.startswith("'''")
        closed = docstring and len(first) > 3 and first.endswith(first[:3])
        if docstring and not closed:
            for line in lines:
                out.append(line)
                if '"""' in line or "'''" in line:
                    break
    for line in lines:
        if not line.startswith("#"):
            break
        out.append(line)
    return "\n".join(out) + "\n"


def asks_all_scopes(text: str) -> bool:
    """A `# gotopy: all-scopes` line among the first five (tests/common/mod.rs)."""
    return any(line.strip() == "# gotopy: all-scopes" for line in text.splitlines()[:5])


def fixture_args(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    flags = ["--all-scopes"] if asks_all_scopes(text) else []
    return [*flags, str(path.relative_to(ROOT))]


class Run:
    """What one command printed and how it exited."""

    def __init__(self, result: subprocess.CompletedProcess[bytes]) -> None:
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.status = result.returncode

    def __repr__(self) -> str:
        return (
            f"status {self.status}\n--- stdout\n{self.stdout.decode(errors='replace')}"
            f"--- stderr\n{self.stderr.decode(errors='replace')}"
        )


def run(command: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> Run:
    environ = dict(os.environ)
    for name in ("NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR"):
        environ.pop(name, None)
    environ.update(env or {})
    return Run(
        subprocess.run(
            command, input=stdin, capture_output=True, cwd=ROOT, env=environ, timeout=120
        )
    )


def package(args: list[str], **kwargs) -> Run:
    return run([sys.executable, "-m", "gotopy", "check", *args], **kwargs)


def binary(args: list[str], **kwargs) -> Run:
    assert BINARY is not None
    return run([BINARY, "check", *args], **kwargs)


@unittest.skipUnless(BINARY, "GOTOPY_BIN (the gotopy binary to compare with) is not set")
class SameAsTheBinary(unittest.TestCase):
    def assert_same(self, args: list[str], **kwargs) -> Run:
        return self.compare(args, package(args, **kwargs), binary(args, **kwargs))

    def compare(self, args: list[str], ours: Run, theirs: Run) -> Run:
        self.assertEqual(
            (ours.status, ours.stdout, ours.stderr),
            (theirs.status, theirs.stdout, theirs.stderr),
            f"check {' '.join(args)}\n=== python -m gotopy\n{ours!r}\n=== gotopy\n{theirs!r}",
        )
        return ours

    def test_every_fixture(self) -> None:
        for kind, status in (("ok", 0), ("err", 1)):
            paths = sorted((FIXTURES / kind).glob("*.py"))
            self.assertTrue(paths, f"no fixtures in fixtures/{kind}")
            # Both programs for every fixture, a few at a time; compared in order.
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                runs = [
                    (path, pool.submit(package, fixture_args(path)),
                     pool.submit(binary, fixture_args(path)))
                    for path in paths
                ]
                for path, ours, theirs in runs:
                    with self.subTest(fixture=f"{kind}/{path.name}"):
                        result = self.compare(fixture_args(path), ours.result(), theirs.result())
                        self.assertEqual(result.status, status, repr(result))

    def test_translate_reports_as_the_binary(self) -> None:
        """``translate`` prints what the binary's does: the warnings of a file it translates
        and the diagnostics of one that ``check`` rejects, with no summary line, and the
        same translation, generated or (``--migrate``) the program's new source."""
        names = ("ok/unused_label_warning.py", "err/unknown_label.py", "ok/computed_goto.py", "ok/module_level_all_scopes.py")
        for name in names:
            for migrate in ([], ["--migrate"]):
                args = ["translate", *migrate, f"fixtures/{name}", "-o", "-"]
                ours, theirs = run([sys.executable, "-m", "gotopy", *args]), run([BINARY, *args])
                result = self.compare(args, ours, theirs)
                self.assertEqual(result.status, 1 if name.startswith("err/") else 0, repr(result))
                if name == "ok/unused_label_warning.py":
                    self.assertIn(b"warning[G101]", result.stderr)
                if migrate and result.status == 0:
                    self.assertNotIn(b"gotopy", result.stdout)

    def test_standard_input(self) -> None:
        text = (FIXTURES / "err" / "duplicate_label.py").read_bytes()
        self.assert_same(["-"], stdin=text)
        self.assert_same(["-", "fixtures/ok", "-"], stdin=text)

    def test_directories_in_name_order(self) -> None:
        self.assert_same(["fixtures/ok"])
        self.assert_same(["fixtures/err/", "fixtures/ok"])
        self.assert_same(["--all-scopes", "fixtures"])

    def test_json(self) -> None:
        self.assert_same(["--format", "json", "fixtures/err"])
        self.assert_same(["--format", "json", "fixtures/ok"])
        self.assert_same(["--format=json", "-"], stdin=b"label .a\nlabel .a\n")

    def test_github(self) -> None:
        self.assertEqual(self.assert_same(["--format", "github", "fixtures/err"]).status, 1)
        self.assertEqual(self.assert_same(["--format", "github", "fixtures/ok"]).status, 0)

    def test_missing_and_undecodable_inputs(self) -> None:
        self.assertEqual(self.assert_same(["no/such/file.py"]).status, 2)
        self.assert_same(["no/such/file.py", "fixtures/err/duplicate_label.py"])
        with tempfile.TemporaryDirectory() as scratch:
            empty = Path(scratch, "empty")
            empty.mkdir()
            self.assertEqual(self.assert_same([str(empty)]).status, 2)
            undecodable = Path(scratch, "latin.py")
            undecodable.write_bytes(b"x = '\xe9'\n")
            self.assertEqual(self.assert_same([str(undecodable)]).status, 2)
            unknown = Path(scratch, "coding.py")
            unknown.write_bytes(b"# -*- coding: klingon -*-\nx = 1\n")
            self.assertEqual(self.assert_same([str(unknown)]).status, 2)
            declared = Path(scratch, "declared.py")
            declared.write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
            self.assertEqual(self.assert_same([str(declared)]).status, 0)

    def test_syntax_error(self) -> None:
        result = self.assert_same(["-"], stdin=b"def f(:\n    pass\n")
        self.assertEqual(result.status, 1)

    def test_colour(self) -> None:
        path = "fixtures/err/duplicate_label.py"
        coloured = self.assert_same(["--color", "always", path])
        self.assertIn(b"\x1b[", coloured.stdout)
        self.assert_same(["--color=never", path], env={"CLICOLOR_FORCE": "1"})
        forced = self.assert_same([path], env={"CLICOLOR_FORCE": "1"})
        self.assertIn(b"\x1b[", forced.stdout)
        plain = self.assert_same([path], env={"CLICOLOR_FORCE": "1", "NO_COLOR": "1"})
        self.assertNotIn(b"\x1b[", plain.stdout)
        # Before the subcommand, as the binary's global option.
        ours = run([sys.executable, "-m", "gotopy", "--color", "always", "check", path])
        self.assertEqual(ours.stdout, coloured.stdout)


class ErrFixturesGiveTheirHeaderCodes(unittest.TestCase):
    def test_codes(self) -> None:
        paths = sorted((FIXTURES / "err").glob("*.py"))
        self.assertTrue(paths)
        # One run per option setting; JSON names each diagnostic's file.
        found: dict[str, set[str]] = {str(path.relative_to(ROOT)): set() for path in paths}
        for all_scopes in (False, True):
            group = [
                str(path.relative_to(ROOT))
                for path in paths
                if asks_all_scopes(path.read_text(encoding="utf-8")) == all_scopes
            ]
            if not group:
                continue
            flags = ["--all-scopes"] if all_scopes else []
            result = package(["--format", "json", *flags, *group])
            self.assertEqual(result.status, 1, repr(result))
            for diagnostic in json.loads(result.stdout):
                if diagnostic["severity"] == "error":
                    found[diagnostic["path"]].add(diagnostic["code"])
        for path in paths:
            with self.subTest(fixture=path.name):
                expected = {
                    code
                    for code in re.findall(r"\bG\d{3}\b", header(path.read_text(encoding="utf-8")))
                    if not code.startswith("G1")
                }
                self.assertTrue(expected, "the header must name the error codes it expects")
                self.assertEqual(found[str(path.relative_to(ROOT))], expected)


class Usage(unittest.TestCase):
    def test_usage_errors_exit_with_status_2(self) -> None:
        for args in ([], ["check"], ["check", "--format", "xml", "x.py"], ["frobnicate"]):
            with self.subTest(args=args):
                result = run([sys.executable, "-m", "gotopy", *args])
                self.assertEqual(result.status, 2, repr(result))

    def test_help(self) -> None:
        result = run([sys.executable, "-m", "gotopy", "check", "--help"])
        self.assertEqual(result.status, 0, repr(result))
        self.assertIn(b"--all-scopes", result.stdout)


if __name__ == "__main__":
    unittest.main()
