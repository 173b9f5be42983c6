"""The command line of the Python package: arguments, files, streams and exit statuses.

It mirrors the ``gotopy`` binary's ``check`` (src/cli.rs) and leaves everything else to the
native module: decoding, checking and rendering are gotopy's own Rust functions, so the
diagnostics, JSON and summary line are the binary's byte for byte. Only what touches the
process lives here: argument parsing, reading files and standard input, walking
directories, deciding colour from the streams and the environment, and the exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from gotopy import _gotopy

# Exit statuses, as the binary's.
SUCCESS = 0
FOUND_ERRORS = 1
BAD_INPUT = 2
# `server`'s, when the session did not end with shutdown and then exit (LSP asks for 1).
SESSION_FAILED = 1


def main(argv: Sequence[str] | None = None, prog: str = "gotopy") -> int:
    """Runs the command line and returns the exit status: as the ``gotopy`` command the
    package installs, or with ``prog="python -m gotopy"`` (``__main__``)."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check(args)
    if args.command == "run":
        return _run(args)
    if args.command == "compile":
        return _compile_files(args)
    if args.command == "translate":
        return _translate(args)
    if args.command == "server":
        return _serve(args)
    parser.error("a subcommand is required")  # exits with status 2
    return BAD_INPUT


def _parser(prog: str) -> argparse.ArgumentParser:
    # `--color` is accepted before or after the subcommand, as the binary's global option.
    color = argparse.ArgumentParser(add_help=False)
    color.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        metavar="WHEN",
        default=argparse.SUPPRESS,
        help="when to colour diagnostics: auto (default), always or never",
    )
    # `--all-scopes`, as `check` and `run` of the binary take it.
    scopes = argparse.ArgumentParser(add_help=False)
    scopes.add_argument(
        "--all-scopes",
        action="store_true",
        help="rewrite every scope that contains markers, module and class bodies included",
    )
    parser = argparse.ArgumentParser(
        prog=prog,
        description="goto, label and switch for Python",
        parents=[color],
    )
    parser.add_argument("--version", action="version", version=f"gotopy {_gotopy.VERSION}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        parents=[color, scopes],
        help="check Python files for goto, label and switch errors without running them",
        description="Check Python files for goto, label and switch errors without running them.",
    )
    check.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files and directories to check (directories recursively, *.py); - reads stdin",
    )
    check.add_argument(
        "--format",
        choices=_gotopy.FORMATS,
        default=_gotopy.FORMATS[0],
        help="how diagnostics are printed",
    )
    compile_ = commands.add_parser(
        "compile",
        parents=[color, scopes],
        help="compile Python files with goto into standard .pyc files that need no gotopy to run",
        description="Compile Python files with goto into the standard cache files of this "
        "interpreter (__pycache__/NAME.cpython-3XY.pyc), which a plain CPython of the same "
        "version runs without gotopy installed.",
    )
    compile_.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and directories to compile (directories recursively, *.py)"
    )
    compile_.add_argument(
        "--out-dir",
        metavar="DIR",
        help="write sourceless DIR/<path>.pyc files instead of __pycache__ beside the sources",
    )
    compile_.add_argument(
        "--invalidation-mode",
        choices=["timestamp", "checked-hash", "unchecked-hash"],
        help="how CPython decides the file is stale, as py_compile's option (default: "
        "timestamp, or checked-hash when SOURCE_DATE_EPOCH is set)",
    )
    translate = commands.add_parser(
        "translate",
        parents=[color, scopes],
        help="translate Python files with goto to plain structured Python for any Python 3.8+",
        description="Translate Python files with goto to plain structured Python that runs on "
        "any Python 3.8+ without gotopy, as `gotopy translate` does.",
    )
    translate.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and directories to translate; - reads stdin"
    )
    where = translate.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", metavar="OUT", help="the output of a single input; - is stdout")
    where.add_argument(
        "--out-dir",
        metavar="DIR",
        help="DIR/<path relative to its directory argument> for each input (a file: DIR/<its name>)",
    )
    run = commands.add_parser(
        "run",
        parents=[color, scopes],
        help="run a Python program with goto, as `python FILE ARGS...` does",
        description="Run a Python program with goto, as `python FILE ARGS...` does.",
    )
    run.add_argument("file", metavar="FILE", help="the program")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="its arguments")
    commands.add_parser(
        "server",
        parents=[scopes],
        help="serve the Language Server Protocol over stdin and stdout, for editors",
        description="Serve the Language Server Protocol over standard input and output, for "
        "editors: diagnostics as you type, labels as symbols (docs/editors.md). A file's "
        "`# gotopy: all-scopes` line and the client's initialization option allScopes ask for "
        "every scope too.",
    )
    return parser


def _serve(args: argparse.Namespace) -> int:
    try:
        _gotopy.serve(all_scopes=args.all_scopes)
    except OSError as error:
        print(f"gotopy server: {error}", file=sys.stderr)
        return SESSION_FAILED
    return SUCCESS


def _run(args: argparse.Namespace) -> int:
    """Runs FILE as ``__main__``, compiled with goto, with the import hook installed, as
    ``python FILE`` runs it: the same module globals, and an uncaught exception printed by
    ``sys.excepthook`` from the program's own frames, exit status 1."""
    from gotopy import _compile, _hook

    path = os.path.abspath(args.file)
    try:
        with open(args.file, "rb") as file:
            data = file.read()
    except OSError as error:
        _write(sys.stderr, f"error: cannot read {args.file}: {_reason(error)}\n")
        return BAD_INPUT
    all_scopes = args.all_scopes or _hook.asks_all_scopes(data)
    try:
        code = _compile.compile_source(data, path, all_scopes=all_scopes)
    except _compile.GotoSyntaxError as error:
        _write(sys.stderr, error.report or f"{error}\n")
        return FOUND_ERRORS
    main = _main_module(path)
    sys.argv[:] = [args.file, *args.args]
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    _hook.install()
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - printed as the interpreter prints it
        # The first frame is this function's; the program's own start after it. CPython
        # prints the exception's own traceback, so that is where it is dropped.
        if error.__traceback__ is not None:
            error.__traceback__ = error.__traceback__.tb_next
        sys.excepthook(type(error), error, error.__traceback__)
        if isinstance(error, KeyboardInterrupt):
            _die_of_interrupt()
        return FOUND_ERRORS
    return SUCCESS


def _main_module(path: str):
    """A new ``__main__`` with the globals ``python FILE`` gives it on this version."""
    import builtins
    import importlib.machinery
    import types

    main = types.ModuleType("__main__")
    namespace = main.__dict__
    if sys.version_info < (3, 14):
        namespace["__annotations__"] = {}
    namespace["__builtins__"] = builtins
    if sys.version_info < (3, 15):
        namespace["__cached__"] = None
    namespace["__file__"] = path
    namespace["__loader__"] = importlib.machinery.SourceFileLoader("__main__", path)
    sys.modules["__main__"] = main
    return main


def _die_of_interrupt() -> None:
    """Ends the process by SIGINT, as CPython does after an uncaught ``KeyboardInterrupt``,
    so that a shell sees the interrupt."""
    import signal

    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def _compile_files(args: argparse.Namespace) -> int:
    """Writes a standalone ``.pyc`` for every input; exit statuses as ``check``'s."""
    import py_compile

    from gotopy import _pyc

    if "-" in args.paths:
        _write(sys.stderr, "gotopy: error: compile writes a .pyc beside its source: standard input has none\n")
        return BAD_INPUT
    found, problems = _collect_sources(args.paths)
    mode = (
        py_compile.PycInvalidationMode[args.invalidation_mode.upper().replace("-", "_")]
        if args.invalidation_mode
        else _pyc.default_mode()
    )
    color = _styled(getattr(args, "color", "auto"), sys.stderr)
    jobs = _pyc.jobs_for(found, args.out_dir)
    progress = len(jobs) >= _pyc.PROGRESS_FROM and sys.stderr.isatty()
    outcomes = _pyc.compile_all(jobs, args.all_scopes, mode, color, progress)
    for outcome in outcomes:
        if outcome.report:
            _write(sys.stderr, outcome.report)
        if outcome.unreadable is not None:
            problems.append(outcome.unreadable)
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    if problems:
        return BAD_INPUT
    return FOUND_ERRORS if any(o.failed for o in outcomes) else SUCCESS


def _translate(args: argparse.Namespace) -> int:
    """Writes the translation of every input; exit statuses as ``check``'s."""
    found, problems = _collect_sources(args.paths)
    if args.output is not None and (len(found) != 1 or problems):
        _write(sys.stderr, "gotopy: error: `-o` takes exactly one input file; use `--out-dir`\n")
        return BAD_INPUT
    color = _styled(getattr(args, "color", "auto"), sys.stderr)
    failed = False
    for path, directory in found:
        if args.output is not None:
            output = args.output
        elif path == "-":
            problems.append("standard input (`-`) has no name to write under `--out-dir`; give its output with `-o`")
            continue
        else:
            relative = os.path.relpath(path, directory) if directory else os.path.basename(path)
            output = os.path.join(args.out_dir, relative)
        if path != "-" and output != "-" and os.path.exists(output) and os.path.samefile(path, output):
            problems.append(f"{output}: the output would overwrite its source")
            continue
        try:
            text, checked = _translate_input(None if path == "-" else path, args.all_scopes)
        except _Unreadable as problem:
            problems.append(str(problem))
            continue
        # Warnings too, and no summary line, as the binary's `translate` and `compile`.
        report = _gotopy.render_text([checked], color=color, summary=False)
        if report:
            _write(sys.stderr, report)
        if text is None:
            failed = True
            continue
        try:
            if output == "-":
                _write(sys.stdout, text)
            else:
                if os.path.dirname(output):
                    os.makedirs(os.path.dirname(output), exist_ok=True)
                with open(output, "w", encoding="utf-8", newline="") as file:
                    file.write(text)
        except OSError as error:
            problems.append(f"{output}: cannot write: {_reason(error)}")
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    if problems:
        return BAD_INPUT
    return FOUND_ERRORS if failed else SUCCESS


def _translate_input(path: str | None, all_scopes: bool):
    """The translation of a file, or of standard input for ``None``, and its check."""
    return _read_input(path, lambda shown, data: _gotopy.translate(shown, data, all_scopes=all_scopes))


def _check(args: argparse.Namespace) -> int:
    inputs, problems = _collect_inputs(args.paths)
    checked = []
    for path in inputs:
        try:
            checked.append(_check_input(path, args.all_scopes))
        except _Unreadable as problem:
            problems.append(str(problem))
    try:
        color = _styled(getattr(args, "color", "auto"), sys.stdout)
        report = _gotopy.render(args.format, checked, color=color)
        _write(sys.stdout, report)
    except (OSError, ValueError) as error:
        # A report that cannot be made or written is a failure, never an empty result.
        problems.append(_output_problem(error))
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    if problems:
        return BAD_INPUT
    if any(one.has_errors for one in checked):
        return FOUND_ERRORS
    return SUCCESS


class _Unreadable(Exception):
    """An input that cannot be read or decoded; the message is the binary's."""


def _check_input(path: str | None, all_scopes: bool) -> _gotopy.Checked:
    """Checks a file, or standard input for ``None``."""
    return _read_input(path, lambda shown, data: _gotopy.check(shown, data, all_scopes=all_scopes))


def _read_input(path: str | None, work):
    """``work(shown, data)`` for a file, or standard input for ``None``, under the name it is
    reported by; a file that cannot be read or decoded raises ``_Unreadable``."""
    shown = "<stdin>" if path is None else path
    try:
        if path is None:
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as file:
                data = file.read()
    except OSError as error:
        raise _Unreadable(f"{shown}: cannot read: {_reason(error)}") from error
    try:
        return work(shown, data)
    except ValueError as error:
        raise _Unreadable(f"{shown}: {error}") from error


def _collect_inputs(paths: Sequence[str]) -> tuple[list[str | None], list[str]]:
    """The command-line paths as inputs (``None`` for standard input), directories expanded
    in the binary's order; paths that cannot be expanded come back as messages."""
    found, problems = _collect_sources(paths)
    return [None if path == "-" else path for path, _ in found], problems


def _collect_sources(paths: Sequence[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Each input path with the directory argument it was found under (``None`` for a
    path given as it is, ``-`` included), directories expanded in the binary's order;
    paths that cannot be expanded come back as messages."""
    inputs: list[tuple[str, str | None]] = []
    problems: list[str] = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            found = _walk(path, path, problems)
            if not found:
                problems.append(f"{path}: no Python files (`*.py`) found")
            inputs.extend((str(one), path) for one in found)
        else:
            inputs.append((path, None))
    return inputs, problems


def _walk(root: str, directory: str, problems: list[str]) -> list[str | None]:
    """The Python files under ``directory`` (``root``, the argument, or a directory inside
    it), depth first, each directory's entries in byte order of their names, symbolic links
    not followed: the binary's walk, with its messages."""
    found: list[str | None] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: os.fsencode(entry.name))
    except OSError as error:
        problems.append(f"{root}: cannot read {directory}: {_reason(error)}")
        return found
    for entry in entries:
        path = os.path.join(directory, entry.name)
        if entry.is_dir(follow_symlinks=False):
            found.extend(_walk(root, path, problems))
        elif entry.is_file(follow_symlinks=False) and _is_python(entry.name):
            found.append(path)
    return found


def _is_python(name: str) -> bool:
    # Rust's `Path::extension`: `.py` alone is a hidden file without an extension.
    return name.endswith(".py") and len(name) > len(".py")


def _reason(error: OSError) -> str:
    """An I/O error in words, without the error number, as the binary words it."""
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    return (error.strerror or str(error)).lower()


def _output_problem(error: Exception) -> str:
    if isinstance(error, OSError):
        return f"cannot write to standard output: {_reason(error)}"
    return str(error)


def _write(stream, text: str) -> None:
    """Writes UTF-8 bytes, as the binary does, whatever the locale's encoding."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()


def _styled(when: str, stream) -> bool:
    """Whether to colour ``stream``: anstream's rule, which the binary follows."""
    if when == "always":
        return True
    if when == "never":
        return False
    environ = os.environ
    if environ.get("NO_COLOR"):
        return False
    if environ.get("CLICOLOR_FORCE"):
        return True
    clicolor = environ.get("CLICOLOR")
    if clicolor == "0":
        return False
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    term = environ.get("TERM")
    return terminal and (
        (term is not None and term != "dumb")
        or clicolor is not None
        or "CI" in environ
    )
