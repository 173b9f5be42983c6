"""The command line of the Python package: arguments, files, streams and exit statuses.

It mirrors the ``gotopy`` binary's command line (src/cli.rs): the same subcommands and
options where CPython allows, the same messages and exit statuses. Everything else is the
native module's: decoding, checking, rendering and the walk of directories are gotopy's own
Rust functions, so the diagnostics, JSON, summary line and the messages of paths are the
binary's byte for byte. Only what touches the process lives here: argument parsing (one
table, ``_COMMANDS``), reading files and standard input, deciding colour from the streams
and the environment, running the program, and the exit status.
"""

from __future__ import annotations

import _imp
import argparse
import importlib.util
import io
import linecache
import marshal
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from gotopy import _compile, _gotopy

# Exit statuses, as the binary's.
SUCCESS = 0
FOUND_ERRORS = 1
BAD_INPUT = 2
# `server`'s, when the session did not end with shutdown and then exit (LSP asks for 1).
SESSION_FAILED = 1


def main(argv: Sequence[str] | None = None, prog: str = "gotopy") -> int:
    """Runs the command line and returns the exit status: as the ``gotopy`` command the
    package installs, or with ``prog="python -m gotopy"`` (``__main__``)."""
    parser = argparse.ArgumentParser(prog=prog, description="goto, label and switch for Python")
    parser.add_argument("-V", "--version", action="version", version=f"gotopy {_gotopy.VERSION}")
    _add(parser, _COLOR)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, about, handler, arguments in _COMMANDS:
        summary = about[0].lower() + about[1:].split(". ")[0].rstrip(".")
        command = commands.add_parser(name, help=summary, description=about, usage=_USAGE.get(name))
        command.set_defaults(handler=handler, parser=command)
        for argument in (_COLOR, _ALL_SCOPES, *arguments):
            _add(command, argument)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error("a subcommand is required")  # exits with status 2
    try:
        status: int = args.handler(args)
    except _Stop as stop:
        _finish([str(stop)] if str(stop) else [])
        status = stop.status
    return status


# An argument as `add_argument` takes it, `(names, options)`; a list of them is a group of
# which exactly one must be given.
_Argument = tuple[tuple[str, ...], dict[str, Any]]
# `--color` is accepted before or after the subcommand, as the binary's global option.
_COLOR: _Argument = (
    ("--color",),
    {"choices": ["auto", "always", "never"], "metavar": "WHEN", "default": argparse.SUPPRESS,
     "help": "when to colour diagnostics: auto (default), always or never"},
)
_ALL_SCOPES: _Argument = (
    ("--all-scopes",),
    {"action": "store_true", "help": "rewrite every scope that contains markers, module and class bodies included"},
)


def _add(parser: argparse.ArgumentParser, argument: _Argument | list[_Argument]) -> None:
    if isinstance(argument, list):
        group = parser.add_mutually_exclusive_group(required=True)
        for names, options in argument:
            group.add_argument(*names, **options)
    else:
        parser.add_argument(*argument[0], **argument[1])


class _Stop(Exception):
    """Ends a command with ``status``, after ``gotopy: error: MESSAGE`` if there is one;
    ``check`` and ``translate`` go on after an input that cannot be read or decoded."""

    def __init__(self, status: int = BAD_INPUT, message: str = "") -> None:
        super().__init__(message)
        self.status = status


def _finish(problems: list[str], failed: bool = False) -> int:
    """Prints the inputs that could not be read or written; the exit status, as the
    binary's: those win over errors."""
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    return BAD_INPUT if problems else FOUND_ERRORS if failed else SUCCESS


def _serve(args: argparse.Namespace) -> int:
    try:
        _gotopy.serve(all_scopes=args.all_scopes)
    except OSError as error:
        print(f"gotopy server: {error}", file=sys.stderr)
        return SESSION_FAILED
    return SUCCESS


def _check(args: argparse.Namespace) -> int:
    found, problems = _gotopy.collect_sources(args.paths)
    checked, scopes = [], args.all_scopes
    for path, _ in found:
        try:
            checked.append(_read_input(path, lambda shown, data: _gotopy.check(shown, data, all_scopes=scopes)))
        except _Stop as problem:
            problems.append(str(problem))
    try:
        _write(sys.stdout, _gotopy.render(args.format, checked, color=_styled(args, sys.stdout)))
    except (OSError, ValueError) as error:
        # A report that cannot be made or written is a failure, never an empty result.
        problems.append(_output_problem(error))
    return _finish(problems, any(one.has_errors for one in checked))


def _compile_files(args: argparse.Namespace) -> int:
    """Writes a standalone ``.pyc`` for every input; exit statuses as ``check``'s."""
    import py_compile

    from gotopy import _pyc

    if "-" in args.paths:
        raise _Stop(BAD_INPUT, "compile writes a .pyc beside its source: standard input has none")
    found, problems = _gotopy.collect_sources(args.paths)
    mode = _pyc.default_mode()
    if args.invalidation_mode:
        mode = py_compile.PycInvalidationMode[args.invalidation_mode.upper().replace("-", "_")]
    jobs = _pyc.jobs_for(found, args.out_dir)
    progress = len(jobs) >= _pyc.PROGRESS_FROM and sys.stderr.isatty()
    outcomes = _pyc.compile_all(jobs, args.all_scopes, mode, _styled(args, sys.stderr), progress)
    for outcome in outcomes:
        _write(sys.stderr, outcome.report)
        problems.extend([outcome.unreadable] if outcome.unreadable is not None else [])
    return _finish(problems, any(o.failed for o in outcomes))


def _translate(args: argparse.Namespace) -> int:
    """Writes the translation of every input; exit statuses as ``check``'s."""
    found, problems = _gotopy.collect_sources(args.paths)
    scopes, migrate = args.all_scopes, args.migrate
    if args.output is not None and (len(found) != 1 or problems):
        raise _Stop(BAD_INPUT, "`-o` takes exactly one input file; use `--out-dir`")
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
            text, checked = _read_input(
                path, lambda shown, data: _gotopy.translate(shown, data, all_scopes=scopes, migrate=migrate)
            )
        except _Stop as problem:
            problems.append(str(problem))
            continue
        # Warnings too, and no summary line, as the binary's `translate` and `compile`.
        _write(sys.stderr, _gotopy.render_text([checked], color=_styled(args, sys.stderr), summary=False))
        failed |= text is None
        try:
            if text is None:
                continue
            if output == "-":
                _write(sys.stdout, text)
            else:
                if os.path.dirname(output):
                    os.makedirs(os.path.dirname(output), exist_ok=True)
                with open(output, "w", encoding="utf-8", newline="") as file:
                    file.write(text)
        except OSError as error:
            problems.append(f"{output}: cannot write: {_compile.os_error_words(error)}")
    return _finish(problems, failed)


def _compiled(args: argparse.Namespace, data: bytes, shown: str, warnings: bool = False) -> types.CodeType:
    """The program compiled with goto, its errors printed (its warnings too when
    ``warnings``, as for a build step); ``_Stop`` with status 1 when it has errors, 2 when
    it cannot be decoded."""
    all_scopes = args.all_scopes or _gotopy.asks_all_scopes(data)
    try:
        plan = _compile.plan(data, shown, all_scopes, _styled(args, sys.stderr))
        _write(sys.stderr, plan.warnings if warnings else "")
        return _compile.compile_source(data, shown, the_plan=plan)
    except ValueError as error:  # bytes the file's encoding cannot decode
        raise _Stop(BAD_INPUT, f"{shown}: {error}") from None
    except _compile.CPYTHON_ERRORS as error:
        if getattr(error, "report", ""):
            _write(sys.stderr, getattr(error, "report"))
        else:  # CPython's own (a module it cannot compile too), shown as `python` shows it
            sys.excepthook(type(error), error.with_traceback(None), None)
        raise _Stop(FOUND_ERRORS) from None


def _dis(args: argparse.Namespace) -> int:
    """The rewritten code of a file as the ``dis`` module lists it: every code object
    (``dis.dis`` of the module's), or each one ``--function`` names alone."""
    import dis

    from gotopy._runtime import code_objects

    if args.format == "dot":
        raise _Stop(BAD_INPUT, "--format dot draws RustPython's code, with the gotopy binary; the package "
                    "lists CPython's code as the dis module does (--format text)")
    shown, data = _input_bytes(args.path)
    code, name, out = _compiled(args, data, shown, warnings=True), args.function, io.StringIO()
    if name is None:
        dis.dis(code, file=out)
    for one in code_objects(code) if name is not None else ():
        if name in (one.co_qualname, one.co_qualname.rpartition(".")[2]):
            out.write(f"Disassembly of {one!r}:\n")
            dis.dis(one, file=out, depth=0)
    if not out.tell():
        raise _Stop(BAD_INPUT, f"{shown}: no code object named `{name}`")
    try:
        _write(sys.stdout, out.getvalue())
    except OSError as error:
        raise _Stop(BAD_INPUT, _output_problem(error)) from None
    return SUCCESS


def _run(args: argparse.Namespace) -> int:
    """Runs the program as ``python`` runs the same command line, compiled with goto and
    with the import hook installed: ``sys.argv``, ``sys.path[0]`` and the main module's
    globals as ``python`` sets them for a FILE (a CPython ``.pyc`` too, told by its
    extension or its magic number, as ``python`` tells it), ``-``, ``-c CODE`` or ``-m
    MODULE``; an uncaught exception printed by ``sys.excepthook`` from the program's own
    frames, exit status 1."""
    import importlib.machinery as machinery

    from gotopy import _hook, _main

    for option, given in (("-c", args.code), ("-m", args.module)):
        if given == []:
            args.parser.error(f"argument {option}: expected one argument")
    if args.code is None and args.module is None and args.file is None:
        args.parser.error("the following arguments are required: FILE, -, -c CODE or -m MODULE")
    given = args.code or args.module or [args.file, *args.args]
    argv = ["-c" if args.code else "-m" if args.module else args.file, *given[1:]]
    first, file, code = "", None, None  # `sys.path[0]`, `__file__`
    loader: Any = None
    if args.code:
        text = args.code[0]
        code = _compiled(args, _compile.source_bytes(text, "<string>"), "<string>")
        # From 3.13 `python -c` gives tracebacks the code's lines, as each version keeps them.
        if sys.version_info >= (3, 14):
            linecache._register_code(code, text, "<string>")  # type: ignore[attr-defined]
        elif sys.version_info >= (3, 13):
            linecache.cache["<string>"] = (len(text), None, [f"{line}\n" for line in text.splitlines()], "<string>")
    elif args.module:
        first = os.getcwd()
    elif args.file == "-":
        file, data = _input_bytes("-")
        code = _compiled(args, data, file)
        # sys.path[0] as CPython computes it (_PyPathConfig_ComputeSysPath0): the directory
        # of "-", '' on POSIX, and on Windows that of its full path, the working directory.
        if os.name == "nt":
            first = os.getcwd()
    else:
        shown, data = _input_bytes(args.file)
        file = os.path.abspath(args.file)
        # The script's directory, its links resolved where CPython resolves them (readlink;
        # not on Windows).
        first = os.path.dirname(file if os.name == "nt" else os.path.realpath(file))
        magic = importlib.util.MAGIC_NUMBER
        if args.file.endswith(".pyc") or data[:2] == magic[:2]:
            if data[:4] != magic:
                raise _Stop(BAD_INPUT, f"{shown}: not a .pyc file of this Python (bad magic number)")
            code, loader = marshal.loads(data[16:]), machinery.SourcelessFileLoader("__main__", file)
        else:
            code, loader = _compiled(args, data, shown), machinery.SourceFileLoader("__main__", file)
            # Named as CPython names a main script's code (absolute); the diagnostics
            # showed the path as given, as the binary shows it.
            _imp._fix_co_filename(code, file)  # type: ignore[attr-defined]
    main = _main_module(file, loader)
    sys.argv[:] = argv
    if not sys.flags.safe_path:
        sys.path[0] = first
    _hook.install()
    if code is None:  # `-m`: found as `python -m` finds it, once the hook is there
        found = _main.find(args.module[0])
        if isinstance(found, str):
            raise _Stop(BAD_INPUT, found)
        spec, code = found
        code = code or _compiled(args, _input_bytes(spec.origin)[1], spec.origin)
        _main.become_main(spec, main.__dict__)
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


def _main_module(file: str | None, loader: Any) -> types.ModuleType:
    """A new ``__main__`` with the globals ``python`` gives it on this version, for a
    program from ``file`` (``None`` for ``-c`` and ``-m``) loaded by ``loader`` (``None``:
    ``BuiltinImporter``, as for ``-c`` and ``-``)."""
    import builtins
    import importlib.machinery

    main = types.ModuleType("__main__")
    namespace = main.__dict__
    if sys.version_info < (3, 14):
        namespace["__annotations__"] = {}
    namespace["__builtins__"] = builtins
    if file is not None:
        if sys.version_info < (3, 15):
            namespace["__cached__"] = None
        namespace["__file__"] = file
    namespace["__loader__"] = loader or importlib.machinery.BuiltinImporter
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


def _input_bytes(path: str) -> tuple[str, bytes]:
    """The name a file (``-``: standard input) is shown under, and its bytes."""
    return _read_input(path, lambda shown, data: (shown, data))


def _read_input(path: str, work: Callable[[str, bytes], Any]) -> Any:
    """``work(shown, data)`` for a file, or standard input for ``-``, under the name it is
    reported by; a file that cannot be read or decoded raises ``_Stop``."""
    shown = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as file:
                data = file.read()
    except OSError as error:
        raise _Stop(BAD_INPUT, f"{shown}: cannot read: {_compile.os_error_words(error)}") from error
    try:
        return work(shown, data)
    except ValueError as error:
        raise _Stop(BAD_INPUT, f"{shown}: {error}") from error


def _output_problem(error: Exception) -> str:
    if isinstance(error, OSError):
        return f"cannot write to standard output: {_compile.os_error_words(error)}"
    return str(error)


def _write(stream, text: str) -> None:
    """Writes UTF-8 bytes, as the binary does, whatever the locale's encoding."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()


def _styled(args: argparse.Namespace, stream: Any) -> bool:
    """Whether to colour ``stream`` as ``--color`` says: anstream's rule, which the binary
    follows."""
    when = getattr(args, "color", "auto")
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


def _paths(what: str) -> _Argument:
    return (("paths",), {"nargs": "+", "metavar": "PATH", "help": f"files and directories to {what}"})


# The subcommands: each one's name, what it does (its description, whose first sentence
# is its line in the list), its function and its own arguments. Every one also takes
# `--color` (which `server` ignores, as the binary's) and `--all-scopes`.
_COMMANDS: list[tuple[str, str, Callable[[argparse.Namespace], int], list[Any]]] = [
    ("check", "Check Python files for goto, label and switch errors without running them.", _check, [
        _paths("check (directories recursively, *.py); - reads stdin"),
        (("--format",), {"choices": _gotopy.FORMATS, "default": _gotopy.FORMATS[0], "help": "how errors are printed"}),
    ]),
    ("compile", "Compile Python files with goto into standard .pyc files that need no gotopy to run. The cache "
     "files of this interpreter (__pycache__/NAME.cpython-3XY.pyc), which a plain CPython of the same version "
     "runs without gotopy installed.", _compile_files, [
        _paths("compile (directories recursively, *.py)"),
        (("--out-dir",), {"metavar": "DIR", "help": "sourceless DIR/<path>.pyc, not __pycache__ beside sources"}),
        (("--invalidation-mode",), {"choices": ["timestamp", "checked-hash", "unchecked-hash"], "help": "how CPython"
         " tells the file is stale, as py_compile's (default: timestamp, checked-hash with SOURCE_DATE_EPOCH)"}),
    ]),
    ("dis", "Print the rewritten code of a Python file for this interpreter, as the dis module lists it.", _dis, [
        (("path",), {"metavar": "FILE", "help": "the Python file; - reads stdin"}),
        (("--function",), {"metavar": "NAME", "help": "only the code objects named so (f, C.m, f.<locals>.g)"}),
        (("--format",), {"choices": ["text", "dot"], "default": "text", "help": "as dis lists it (dot: the binary's)"}),
    ]),
    ("translate", "Translate Python files with goto to plain structured Python for any Python 3.8+. It runs "
     "without gotopy, as `gotopy translate` writes it.", _translate, [
        _paths("translate; - reads stdin"),
        [
            (("-o", "--output"), {"metavar": "OUT", "help": "the output of a single input; - is stdout"}),
            (("--out-dir",), {"metavar": "DIR", "help": "DIR/<path relative to its directory argument>"}),
        ],
        (("--migrate",), {"action": "store_true", "help": "the program's new source: no header, nothing of gotopy"}),
    ]),
    ("run", "Run a Python program with goto, as `python` runs the same command line. Everything after FILE, "
     "-, CODE or MODULE is the program's (sys.argv[1:]).", _run, [
        (("-c",), {"dest": "code", "nargs": argparse.REMAINDER, "help": "run CODE, as python -c"}),
        (("-m",), {"dest": "module", "nargs": argparse.REMAINDER, "help": "run MODULE, as python -m"}),
        (("file",), {"nargs": "?", "metavar": "FILE", "help": "the program (a .py or .pyc file); - reads stdin"}),
        (("args",), {"nargs": argparse.REMAINDER, "metavar": "ARGS", "help": "its arguments"}),
    ]),
    ("server", "Serve the Language Server Protocol over stdin and stdout, for editors. Diagnostics as you type, "
     "labels as symbols (docs/editors.md); a file's `# gotopy: all-scopes` line and the client's "
     "initialization option allScopes ask for every scope too.", _serve, []),
]
# Usage lines argparse cannot write itself.
_USAGE = {"run": "%(prog)s [options] <FILE | - | -c CODE | -m MODULE> [ARGS]..."}
