"""The Python package's part of the command line: ``compile``, ``dis`` and ``run``, which need
the interpreter. The command line itself is gotopy's own, in the native module
(``_gotopy.main``, the binary's ``gotopy::shell``): arguments, help, ``check``,
``translate``, ``server``, messages and exit statuses are the binary's byte for byte, and it
calls the functions here with the parsed arguments. Only what needs this interpreter lives
here: reading a program, compiling and running it, listing its code, writing ``.pyc`` files.
"""

from __future__ import annotations

import _imp
import importlib.util
import io
import linecache
import marshal
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from gotopy import _compile, _gotopy

# Exit statuses, as the binary's.
SUCCESS = 0
FOUND_ERRORS = 1
BAD_INPUT = 2


def main(argv: list[str] | None = None, prog: str = "gotopy") -> int:
    """Runs the command line and returns the exit status: as the ``gotopy`` command the
    package installs, or with ``prog="python -m gotopy"`` (``__main__``)."""
    return _gotopy.main(sys.argv[1:] if argv is None else list(argv), prog)


class _Stop(Exception):
    """Ends a command with ``status``, after ``gotopy: error: MESSAGE`` if there is one."""

    def __init__(self, status: int = BAD_INPUT, message: str = "") -> None:
        super().__init__(message)
        self.status = status


def _command(function: Callable[..., int]) -> Callable[..., int]:
    """A command the native module calls: ``_Stop`` ends it with its status and message."""

    def command(**arguments: Any) -> int:
        try:
            return function(**arguments)
        except _Stop as stop:
            _finish([str(stop)] if str(stop) else [])
            return stop.status

    return command


def _finish(problems: list[str], failed: bool = False) -> int:
    """Prints the inputs that could not be read or written; the exit status, as the
    binary's: those win over errors."""
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    return BAD_INPUT if problems else FOUND_ERRORS if failed else SUCCESS


@_command
def compile_files(
    sources: list[tuple[str, str | None]],
    problems: list[str],
    out_dir: str | None,
    mode: str,
    all_scopes: bool,
    color: bool,
) -> int:
    """Writes a standalone ``.pyc`` for every source (with the directory argument it was
    found under), after ``problems``, the paths that could not be expanded; exit statuses as
    ``check``'s. The package's ``compile`` and the binary's ``compile --python`` call it."""
    import py_compile

    from gotopy import _pyc

    invalidation = py_compile.PycInvalidationMode[mode.upper().replace("-", "_")]
    jobs = _pyc.jobs_for(sources, out_dir)
    progress = len(jobs) >= _pyc.PROGRESS_FROM and sys.stderr.isatty()
    outcomes = _pyc.compile_all(jobs, all_scopes, invalidation, color, progress)
    problems = list(problems)
    for outcome in outcomes:
        _write(sys.stderr, outcome.report)
        problems.extend([outcome.unreadable] if outcome.unreadable is not None else [])
    return _finish(problems, any(o.failed for o in outcomes))


def _compiled(data: bytes, shown: str, all_scopes: bool, color: bool, warnings: bool = False) -> types.CodeType:
    """The program compiled with goto, its errors printed (its warnings too when
    ``warnings``, as for a build step); ``_Stop`` with status 1 when it has errors, 2 when
    it cannot be decoded."""
    all_scopes = all_scopes or _gotopy.asks_all_scopes(data)
    try:
        plan = _gotopy.plan(shown, data, all_scopes=all_scopes, color=color)
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


@_command
def dis(shown: str, data: bytes, function: str | None, all_scopes: bool, color: bool) -> int:
    """The rewritten code of a file (``data``, read from ``shown``) as the ``dis`` module
    lists it: every code object (``dis.dis`` of the module's), or each one ``function``
    names alone."""
    import dis

    from gotopy._runtime import code_objects

    code, out = _compiled(data, shown, all_scopes, color, warnings=True), io.StringIO()
    if function is None:
        dis.dis(code, file=out)
    for one in code_objects(code) if function is not None else ():
        if function in (one.co_qualname, one.co_qualname.rpartition(".")[2]):
            out.write(f"Disassembly of {one!r}:\n")
            dis.dis(one, file=out, depth=0)
    if not out.tell():
        raise _Stop(BAD_INPUT, f"{shown}: no code object named `{function}`")
    try:
        _write(sys.stdout, out.getvalue())
    except OSError as error:
        raise _Stop(BAD_INPUT, f"cannot write to standard output: {_compile.os_error_words(error)}") from None
    return SUCCESS


@_command
def run(
    kind: str, given: str, args: list[str], all_scopes: bool, color: bool, shown: str = "", data: bytes = b""
) -> int:
    """Runs the program as ``python`` runs the same command line, compiled with goto and
    with the import hook installed: ``sys.argv``, ``sys.path[0]`` and the main module's
    globals as ``python`` sets them for a FILE (``kind`` ``"file"``; a CPython ``.pyc`` too,
    told by its extension or its magic number, as ``python`` tells it), ``-``, ``-c CODE``
    (``"code"``) or ``-m MODULE`` (``"module"``), a file's bytes ``data`` read from ``shown``
    by the command line; an uncaught exception printed by
    ``sys.excepthook`` from the program's own frames, exit status 1."""
    import importlib.machinery as machinery

    from gotopy import _hook, _main

    argv = ["-c" if kind == "code" else "-m" if kind == "module" else given, *args]
    first, file, code = "", None, None  # `sys.path[0]`, `__file__`
    loader: Any = None
    if kind == "code":
        code = _compiled(_gotopy.source_bytes(given, "<string>"), "<string>", all_scopes, color)
        # From 3.13 `python -c` gives tracebacks the code's lines, as each version keeps them.
        if sys.version_info >= (3, 14):
            linecache._register_code(code, given, "<string>")  # type: ignore[attr-defined]
        elif sys.version_info >= (3, 13):
            linecache.cache["<string>"] = (len(given), None, [f"{line}\n" for line in given.splitlines()], "<string>")
    elif kind == "module":
        first = os.getcwd()
    elif given == "-":
        file = shown
        code = _compiled(data, file, all_scopes, color)
        # sys.path[0] as CPython computes it (_PyPathConfig_ComputeSysPath0): the directory
        # of "-", '' on POSIX, and on Windows that of its full path, the working directory.
        if os.name == "nt":
            first = os.getcwd()
    else:
        file = os.path.abspath(given)
        # The script's directory, its links resolved where CPython resolves them (readlink;
        # not on Windows).
        first = os.path.dirname(file if os.name == "nt" else os.path.realpath(file))
        magic = importlib.util.MAGIC_NUMBER
        if given.endswith(".pyc") or data[:2] == magic[:2]:
            if data[:4] != magic:
                raise _Stop(BAD_INPUT, f"{shown}: not a .pyc file of this Python (bad magic number)")
            code, loader = marshal.loads(data[16:]), machinery.SourcelessFileLoader("__main__", file)
        else:
            code, loader = _compiled(data, shown, all_scopes, color), machinery.SourceFileLoader("__main__", file)
            # Named as CPython names a main script's code (absolute); the diagnostics
            # showed the path as given, as the binary shows it.
            _imp._fix_co_filename(code, file)  # type: ignore[attr-defined]
    main = _main_module(file, loader)
    sys.argv[:] = argv
    if not sys.flags.safe_path:
        sys.path[0] = first
    _hook.install()
    if code is None:  # `-m`: found as `python -m` finds it, once the hook is there
        found = _main.find(given)
        if isinstance(found, str):
            raise _Stop(BAD_INPUT, found)
        spec, code = found
        code = code or _compiled(_read(spec.origin), spec.origin, all_scopes, color)
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


def _read(path: str) -> bytes:
    """A module's bytes; ``_Stop`` when it cannot be read."""
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise _Stop(BAD_INPUT, f"{path}: cannot read: {_compile.os_error_words(error)}") from error


def _write(stream, text: str) -> None:
    """Writes UTF-8 bytes, as the binary does, whatever the locale's encoding."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()
