"""The tools people already run keep working on goto code, on the running interpreter:
``dis``, ``inspect``, ``traceback``, ``sys.settrace``, pdb, cProfile and ``profile``,
coverage.py (every ``ok`` fixture 100% covered), ``frame.f_lineno`` jumps (never a crash),
the type checkers, and the linters with the configuration ``docs/tools.md`` gives.

Needs the package installed in the running interpreter (tests/cpython.rs); coverage.py
everywhere, and mypy, pyright, ruff, pylint and flake8-bugbear on one version, as
tests/common/cpython.rs installs them. A tool that is not installed skips its tests.
"""

from __future__ import annotations

import collections
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
HERE = Path(__file__).resolve().parent


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


TOOLS_PROGRAM = '''\
from goto import goto, label


@goto
def countdown(n):
    out = []
    label .top
    if n <= 0:
        return out
    out.append(n)
    n -= 1
    goto .top


@goto
def fails(n):
    goto .bad
    n += 1
    label .bad
    return 1 // n


if __name__ == "__main__":
    print(countdown(3))
'''


class Tools(unittest.TestCase):
    """Tools keep working on rewritten code: dis, inspect, traceback, settrace, pdb,
    coverage."""

    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.path = Path(self.directory.name, "tools_program.py")
        self.path.write_text(TOOLS_PROGRAM)
        spec = importlib.util.spec_from_file_location("tools_program", self.path)
        assert spec and spec.loader
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)

    def tearDown(self) -> None:
        self.directory.cleanup()

    def test_dis_shows_the_jump_and_no_marker(self) -> None:
        import dis

        instructions = list(dis.get_instructions(self.module.countdown))
        names = {i.argval for i in instructions if i.opname.startswith("LOAD_GLOBAL")}
        self.assertNotIn("goto", names)
        self.assertNotIn("label", names)
        self.assertTrue(any(i.opname == "JUMP_BACKWARD" for i in instructions))
        self.assertEqual(self.module.countdown(3), [3, 2, 1])
        # Every source line of the body starts instructions (the label's a `NOP`, as for
        # `pass`), and `dis.dis`'s listing names no marker.
        listing = io.StringIO()
        dis.dis(self.module.countdown, file=listing)
        starts = {i.positions.lineno for i in instructions if i.positions and i.positions.lineno}
        first = self.module.countdown.__code__.co_firstlineno
        self.assertEqual(sorted(starts - {first}), [first + n for n in (2, 3, 4, 5, 6, 7, 8)])
        self.assertNotIn("goto", listing.getvalue())
        self.assertNotIn("label", listing.getvalue())

    def test_inspect_source_and_signature(self) -> None:
        import inspect

        self.assertIn("label .top", inspect.getsource(self.module.countdown))
        self.assertEqual(str(inspect.signature(self.module.countdown)), "(n)")

    def test_traceback_points_at_the_source_line(self) -> None:
        import traceback

        try:
            self.module.fails(0)
        except ZeroDivisionError as error:
            frame = traceback.extract_tb(error.__traceback__)[-1]
        else:
            self.fail("the goto skipped `n += 1`: 1 // 0 must raise")
        self.assertEqual((frame.lineno, frame.line), (20, "return 1 // n"))

    def test_settrace_reports_the_lines_that_run(self) -> None:
        lines: list[int] = []
        code = self.module.countdown.__code__

        def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
            if frame.f_code is code and event == "line":
                lines.append(frame.f_lineno)
            return tracer

        sys.settrace(tracer)
        try:
            self.module.countdown(1)
        finally:
            sys.settrace(None)
        # Every statement that runs, in order, as for the same loop written with `while`:
        # the goto line between two rounds, and the label's line where the goto lands.
        self.assertEqual(lines, [6, 7, 8, 10, 11, 12, 7, 8, 9])

    def pdb(self, commands: str) -> str:
        """What pdb prints running the program with these commands; the program ran to
        its end."""
        run = subprocess.run(
            [sys.executable, "-m", "pdb", str(self.path)],
            input=commands,
            capture_output=True,
            text=True,
            cwd=self.directory.name,
        )
        self.assertIn("[3, 2, 1]", run.stdout, run.stdout + run.stderr)
        return run.stdout

    def test_pdb_steps_over_a_goto(self) -> None:
        stdout = self.pdb("break tools_program.py:12\ncontinue\nnext\nnext\np n\nclear 1\ncontinue\n")
        # After `goto .top` the next line shown is the test at the top, and n went down.
        after = stdout.split("goto .top", 1)[1]
        self.assertIn("-> if n <= 0:", after)
        self.assertIn("\n2\n", after.replace("(Pdb) ", "\n"))

    def test_pdb_stops_on_a_label_line_and_steps_from_a_goto_to_its_label(self) -> None:
        stdout = self.pdb(
            "break tools_program.py:7\ncontinue\np n\nclear 1\n"
            "break tools_program.py:12\ncontinue\nstep\np n\nclear 2\ncontinue\n"
        )
        shown = stdout.replace("(Pdb) ", "\n")
        # Where each stop is: the breakpoint on the label, the goto, then one `step` later
        # the label again; `n` as the loop left it.
        stops = re.findall(r"tools_program\.py\((\d+)\)countdown\(\)\n-> (.*)", shown)
        self.assertEqual(
            stops, [("7", "label .top"), ("12", "goto .top"), ("7", "label .top")], shown
        )
        self.assertEqual(re.findall(r"^(\d+)$", shown, re.M), ["3", "2"], shown)

    def test_profilers_name_the_rewritten_function_and_its_line(self) -> None:
        import cProfile
        import profile
        import pstats

        # The oracle: where CPython's own compile of the file puts the function.
        plain = compile(self.path.read_text(), str(self.path), "exec")
        first = next(c.co_firstlineno for c in plain.co_consts if getattr(c, "co_name", "") == "countdown")
        for profiler in (cProfile.Profile(), profile.Profile()):
            with self.subTest(profiler=type(profiler).__module__):
                profiler.runcall(self.module.countdown, 4)
                stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
                calls = {key: value[1] for key, value in stats.items() if key[2] == "countdown"}
                self.assertEqual(calls, {(str(self.path), first, "countdown"): 1})

    def test_coverage_reports_the_rewritten_lines_as_run(self) -> None:
        if not installed("coverage"):
            self.skipTest("coverage is not installed here (tests/cpython.rs installs it)")
        env = {k: v for k, v in os.environ.items() if k != "COVERAGE_PROCESS_START"}
        common = dict(capture_output=True, text=True, cwd=self.directory.name, env=env)
        run = subprocess.run([sys.executable, "-m", "coverage", "run", str(self.path)], **common)
        self.assertEqual(run.returncode, 0, run.stderr)
        report = subprocess.run(
            [sys.executable, "-m", "coverage", "json", "-o", "-", "--include", "*tools_program.py"],
            **common,
        )
        data = json.loads(report.stdout)
        executed = set(next(iter(data["files"].values()))["executed_lines"])
        self.assertLessEqual({6, 8, 9, 10, 11, 12}, executed)


class Coverage(unittest.TestCase):
    """coverage.py on goto code: labels and cases are line events as ``pass`` is, so every
    ``ok`` fixture reports 100% of its lines and branches, with the core coverage.py picks
    for branch coverage on that version: its C tracer before 3.14, ``sys.monitoring``
    (``COVERAGE_CORE=sysmon``; before 3.14 it cannot measure branches) from 3.14. Lines no
    run reaches carry ``# pragma: no cover`` and branches never taken ``# pragma: no
    branch`` (coverage.py's own exclusions, written from reading each program). Runs on 3.12
    and 3.14, or on every version with ``GOTOPY_COVERAGE_ALL=1``, which also runs the C
    tracer on 3.14 and later (a user's choice there, not the default)."""

    def test_every_ok_fixture_is_fully_covered(self) -> None:
        if not installed("coverage"):
            self.skipTest("coverage is not installed here (tests/cpython.rs installs it)")
        if sys.version_info[:2] not in {(3, 12), (3, 14)} and not os.environ.get("GOTOPY_COVERAGE_ALL"):
            self.skipTest("runs on 3.12 and 3.14 (GOTOPY_COVERAGE_ALL=1: on every version)")
        fixtures = sorted((FIXTURES / "ok").glob("*.py"))
        cores = ["sysmon"] if sys.version_info >= (3, 14) else ["ctrace"]
        if os.environ.get("GOTOPY_COVERAGE_ALL") and sys.version_info >= (3, 14):
            cores.insert(0, "ctrace")
        for core in cores:
            with self.subTest(core=core), tempfile.TemporaryDirectory() as directory:
                env = {k: v for k, v in os.environ.items() if k != "COVERAGE_PROCESS_START"}
                env["COVERAGE_CORE"] = core
                common = dict(capture_output=True, text=True, cwd=ROOT, env=env)
                data = str(Path(directory, ".coverage"))
                for path in fixtures:
                    run = subprocess.run(
                        [sys.executable, "-m", "coverage", "run", "--branch", "--parallel-mode",
                         f"--data-file={data}", "-m", "gotopy", "run", str(path)],
                        **common,
                    )
                    self.assertEqual(run.returncode, 0, f"{path.name}: {run.stderr}")
                report_file = str(Path(directory, "report.json"))
                only = ["--include", str(FIXTURES / "ok" / "*.py")]
                for command in (["combine", "--quiet"], ["json", "-o", report_file, *only]):
                    done = subprocess.run(
                        [sys.executable, "-m", "coverage", *command, f"--data-file={data}"],
                        **common,
                    )
                    self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                report = json.loads(Path(report_file).read_text())["files"]
                self.assertEqual(len(report), len(fixtures))
                for name, measured in sorted(report.items()):
                    summary = measured["summary"]
                    not_run = (measured["missing_lines"], measured["missing_branches"])
                    self.assertEqual(not_run, ([], []), f"{core}: {name}")
                    self.assertEqual(summary["percent_covered"], 100.0, f"{core}: {name}")

    def test_lines_after_a_goto_are_reported_as_missed(self) -> None:
        if not installed("coverage"):
            self.skipTest("coverage is not installed here (tests/cpython.rs installs it)")
        program = (
            "from goto import goto, label\n\n\n@goto\ndef skip(n):\n    goto .over\n"
            "    n += 1\n    label .over\n    return n\n\n\nprint(skip(1))\n"
        )
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "skip.py").write_text(program)
            env = {k: v for k, v in os.environ.items() if k != "COVERAGE_PROCESS_START"}
            common = dict(capture_output=True, text=True, cwd=directory, env=env)
            # Only the program measured: where the standard library lives in a zip (the
            # embeddable CPython for Windows), coverage does not know it for its own.
            run = subprocess.run(
                [sys.executable, "-m", "coverage", "run", "--branch", "--include=skip.py", "skip.py"], **common
            )
            self.assertEqual(run.stdout, "1\n", run.stderr)
            report = subprocess.run([sys.executable, "-m", "coverage", "json", "-o", "-"], **common)
            measured = next(iter(json.loads(report.stdout)["files"].values()))
        # Only `n += 1`, which the goto jumps over: the label's line ran.
        self.assertEqual(measured["missing_lines"], [7])
        self.assertEqual(measured["executed_lines"], [1, 4, 5, 6, 8, 9, 12])


# Plain code, no goto: a generator, a coroutine and an async generator, where CPython 3.11
# to 3.15 crash on a jump to the function's first line (its `RETURN_GENERATOR`) by
# themselves; the control of `Jumps`.
JUMP_CONTROL = """\
import asyncio


def gen(n):
    for i in range(n):
        yield i


async def coro(n):
    await asyncio.sleep(0)
    return n


async def agen(n):
    for i in range(n):
        yield i
        await asyncio.sleep(0)


async def main():
    return [x async for x in agen(2)] + [await coro(3)]


print(list(gen(2)), asyncio.run(main()))
"""


class Jumps(unittest.TestCase):
    """A debugger's ``jump`` (assigning ``frame.f_lineno``) in rewritten code either jumps
    or raises ``ValueError``, never crashes the interpreter: from the first line event of
    each line of every rewritten function of every ``ok`` fixture, to every line of that
    function (``jumps.py``; lines that differ only in their numbers stand for each other
    past the sixth of a function). A jump may land in a loop that does not end (a time-out, not a
    crash). The one crash allowed is CPython's own: a jump to the first line of a generator
    or coroutine, and only where the control, plain code without goto, crashes on this
    interpreter too. Each fixture runs on three of the five versions, in turn (``in_turn``),
    or on every version with ``GOTOPY_JUMPS_ALL=1``: every fork costs milliseconds, and CI's
    budget is the whole run's."""

    def explore(self, path: Path, *mode: str) -> list[dict[str, object]]:
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory, "jumps.jsonl")
            run = subprocess.run(
                [sys.executable, str(HERE / "jumps.py"), str(path), str(out), *mode],
                capture_output=True,
                text=True,
                cwd=directory,
            )
            self.assertEqual(run.returncode, 0, f"{path.name}: {run.stderr}")
            return [json.loads(line) for line in out.read_text().splitlines()]

    def test_every_jump_in_rewritten_code_jumps_or_is_refused(self) -> None:
        if not hasattr(os, "fork"):
            self.skipTest("jumps.py tries each jump in a child it forks, and this system has no fork")

        def at_generator_start(result: dict[str, object]) -> bool:
            return bool(result["generator"]) and result["to"] == result["first"]

        with tempfile.TemporaryDirectory() as directory:
            control = Path(directory, "control.py")
            control.write_text(JUMP_CONTROL)
            controlled = self.explore(control, "all")
        crashes = [r for r in controlled if str(r["outcome"]).startswith("signal")]
        # The control's crashes are all of that one kind, so that kind is CPython's.
        self.assertEqual([r for r in crashes if not at_generator_start(r)], [])
        cpython_crashes = bool(crashes)
        outcomes: collections.Counter[str] = collections.Counter()
        failures = []
        fixtures = sorted((FIXTURES / "ok").glob("*.py"))
        if not os.environ.get("GOTOPY_JUMPS_ALL"):
            fixtures = in_turn(fixtures)
        for path in fixtures:
            for result in self.explore(path):
                outcome = str(result["outcome"])
                if outcome.startswith("signal") and cpython_crashes and at_generator_start(result):
                    outcome = "CPython's own crash"
                elif outcome not in {"jumped", "refused", "timeout"}:
                    failures.append(f"{path.name}: {result}")
                outcomes[outcome] += 1
        self.assertEqual(failures, [], dict(outcomes))
        # Both answers came up, many times: the jumps were tried.
        self.assertGreater(outcomes["jumped"], 1000, dict(outcomes))
        self.assertGreater(outcomes["refused"], 100, dict(outcomes))


def in_turn(fixtures: list[Path]) -> list[Path]:
    """The three fifths of ``fixtures`` this version takes, by their place in the list:
    3.11 the first three of every five, 3.12 the second to the fourth, and so on, so that
    every fixture runs on three versions and every version on most shapes of its code."""
    turn = sys.version_info[1] - 11
    return [path for place, path in enumerate(fixtures) if (place - turn) % 5 < 3]


# A line that is one marker statement, as the fixtures write them.
MARKER_LINE = re.compile(r"^\s*(goto\s*[.*]|label\s*\.|while\s+switch\s*\*|case\s*\[)")
MARKER_NAMES = {"goto", "label", "switch", "case"}
EVERY_RUFF_RULE = 'extend-select = ["ALL"]\n'
# A fenced block of docs/tools.md whose first line names the file it is: `# pyproject.toml`.
DOCUMENTED_FILE = re.compile(r"^```\w+\n# ([\w.]+)\n(.*?)^```", re.M | re.S)


class Linters(unittest.TestCase):
    """ruff (every rule: a command line `--select` would override the configuration's
    `ignore`), pylint and flake8 with flake8-bugbear (their defaults), with the
    configuration ``docs/tools.md`` documents, report nothing on any marker line of the
    ``ok`` fixtures and the typing fixture; without it they do flag markers (so the tools
    saw them). Left out: an undefined name, a marker whose name the module does not import
    (``docs/tools.md`` says why), and the quote style of a case's string literal."""

    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.project = Path(self.directory.name)
        self.sources: dict[str, str] = {}
        for path in [*sorted((FIXTURES / "ok").glob("*.py")), HERE / "typing" / "markers.py"]:
            shutil.copy(path, self.project / path.name)
            self.sources[path.name] = path.read_text(encoding="utf-8")
        Path(self.project, "pyproject.toml").write_text(f"[tool.ruff.lint]\n{EVERY_RUFF_RULE}")

    def tearDown(self) -> None:
        self.directory.cleanup()

    def configure(self) -> None:
        documented = DOCUMENTED_FILE.findall((ROOT / "docs" / "tools.md").read_text(encoding="utf-8"))
        self.assertEqual(sorted(name for name, _ in documented), [".flake8", "pyproject.toml"])
        for name, text in documented:
            if name == "pyproject.toml":
                # Every ruff rule, as a project that selects them all in the same table.
                self.assertIn("[tool.ruff.lint]\n", text)
                text = text.replace("[tool.ruff.lint]\n", f"[tool.ruff.lint]\n{EVERY_RUFF_RULE}", 1)
            Path(self.project, name).write_text(text)

    def run_tool(self, *command: str) -> str:
        run = subprocess.run(
            [sys.executable, "-m", *command], capture_output=True, text=True, cwd=self.project
        )
        self.assertIn(run.returncode, range(0, 32), run.stderr)
        return run.stdout

    def ruff(self) -> list[tuple[str, int, str, str]]:
        out = self.run_tool("ruff", "check", "--no-cache", "--output-format", "json", ".")
        return [(Path(d["filename"]).name, d["location"]["row"], d["code"], d["message"]) for d in json.loads(out)]

    def pylint(self) -> list[tuple[str, int, str, str]]:
        out = self.run_tool("pylint", "--output-format=json", *sorted(self.sources))
        return [(Path(d["path"]).name, d["line"], d["message-id"], d["message"]) for d in json.loads(out)]

    def flake8(self) -> list[tuple[str, int, str, str]]:
        out = self.run_tool("flake8", "--format=%(path)s:%(row)d:%(code)s:%(text)s", ".")
        found = []
        for line in out.splitlines():
            path, row, code, text = line.split(":", 3)
            found.append((Path(path).name, int(row), code, text))
        return found

    def on_markers(self, found: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str, str]]:
        """The findings on marker lines, less an undefined marker name the module does not
        import."""
        kept = []
        for name, row, code, message in found:
            if not MARKER_LINE.match(self.sources[name].splitlines()[row - 1]):
                continue
            if code.startswith("Q0"):
                continue  # flake8-quotes on a case's string literal: the literal's style
            undefined = re.search(r"[`'](\w+)[`']", message) if code in {"F821", "E0602"} else None
            if undefined and undefined[1] in MARKER_NAMES and undefined[1] not in imported(self.sources[name]):
                continue
            kept.append((name, row, code, message))
        return kept

    def check(self, tool: str, rule: str) -> None:
        """Without the documented configuration `tool` reports `rule` on marker lines; with
        it, nothing."""
        if not installed(tool):
            self.skipTest(f"{tool} is not installed here (tests/common/cpython.rs installs it on 3.13)")
        if tool == "flake8" and not installed("bugbear"):
            self.skipTest("flake8-bugbear is not installed here")
        found = getattr(self, tool)
        flagged = {code for _, _, code, _ in self.on_markers(found())}
        self.assertIn(rule, flagged)
        self.configure()
        self.assertEqual(self.on_markers(found()), [])

    def test_ruff(self) -> None:
        self.check("ruff", "B018")

    def test_pylint(self) -> None:
        self.check("pylint", "W0104")

    def test_flake8_bugbear(self) -> None:
        self.check("flake8", "B018")


class PreCommit(unittest.TestCase):
    """The hook of ``.pre-commit-hooks.yaml``, run by ``pre-commit try-repo`` on a scratch
    repository: a file with goto that checks clean and a file without markers pass (exit
    0); a file with a goto error fails (exit 1) with its diagnostic. The hook repository is
    a commit of this working tree (tracked and new files), so the test sees what would be
    committed; pre-commit installs it as a user's machine would (``pip install .``, the
    extension built by cargo)."""

    def test_try_repo_runs_the_hook(self) -> None:
        if not installed("pre_commit"):
            self.skipTest("pre-commit is not installed here (tests/common/cpython.rs installs it on 3.13)")
        with tempfile.TemporaryDirectory() as directory:
            hooks = Path(directory, "hooks")
            listed = subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                capture_output=True, check=True, cwd=ROOT,
            ).stdout.decode().split("\0")
            for name in filter(None, listed):
                if Path(ROOT, name).is_file():
                    Path(hooks, name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(Path(ROOT, name), Path(hooks, name))
            commit(hooks)
            checked = Path(directory, "checked")
            checked.mkdir()
            shutil.copy(ROOT / "examples" / "countdown.py", checked / "good.py")
            shutil.copy(FIXTURES / "err" / "duplicate_label.py", checked / "bad.py")
            Path(checked, "plain.py").write_text("print('no markers')\n")
            commit(checked)
            env = dict(os.environ, PRE_COMMIT_HOME=str(Path(directory, "cache")))
            # A target directory of its own, kept between runs (the wheel the other tests
            # install is linked by zig, tools/dist, so its build cannot be shared), and an
            # unoptimised release profile: the test is that pre-commit installs the hook
            # and runs it, not how fast the extension runs, and an optimised build from
            # scratch would take minutes.
            env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "cpython" / "hook")
            env["CARGO_PROFILE_RELEASE_OPT_LEVEL"] = "0"
            env["CARGO_PROFILE_RELEASE_DEBUG"] = "false"

            def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "gotopy-check", "--files", *files],
                    capture_output=True, text=True, cwd=checked, env=env,
                )

            passed = try_repo("good.py", "plain.py")
            self.assertEqual(passed.returncode, 0, passed.stdout + passed.stderr)
            self.assertRegex(passed.stdout, r"gotopy check\.+Passed")
            failed = try_repo("good.py", "bad.py")
            self.assertEqual(failed.returncode, 1, failed.stdout + failed.stderr)
            self.assertRegex(failed.stdout, r"gotopy check\.+Failed")
            self.assertIn("error[G001]: duplicate label `.again`", failed.stdout)
            self.assertIn("checked 2 files: 1 error, 0 warnings", failed.stdout)


def commit(directory: Path) -> None:
    """Makes ``directory`` a git repository with everything in it committed."""
    git = ["git", "-c", "user.name=gotopy tests", "-c", "user.email=tests@gotopy.invalid"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot", "--no-gpg-sign"]):
        subprocess.run([*git, *command], check=True, cwd=directory, capture_output=True)


def imported(source: str) -> set[str]:
    """The names a module's imports bind."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


class Typing(unittest.TestCase):
    def test_mypy_accepts_every_marker(self) -> None:
        if not installed("mypy"):
            self.skipTest("mypy is not installed here (tests/cpython.rs installs it)")
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "markers.py"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent / "typing",
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_mypy_accepts_the_package_itself(self) -> None:
        if not installed("mypy"):
            self.skipTest("mypy is not installed here (tests/cpython.rs installs it)")
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--no-incremental", "-p", "gotopy", "-p", "goto"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_pyright_accepts_every_marker(self) -> None:
        if not installed("pyright"):
            self.skipTest("pyright is not installed here (tests/cpython.rs installs it on 3.13)")
        run = subprocess.run(
            [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, "--outputjson", "markers.py"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent / "typing",
        )
        report = json.loads(run.stdout)
        errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
        self.assertEqual(errors, [])
        # `goto *name` is a product whose value is unused: a warning (README, Editors).
        self.assertEqual(report["summary"]["errorCount"], 0)
