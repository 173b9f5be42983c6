"""``python -m gotopy compile``: standard ``.pyc`` files that run on a plain CPython.

Each module is compiled as the import hook compiles it (``gotopy._compile``), with one more
edit to the prepared tree (the plan's ``standalone``): the statements that import ``goto`` or
``gotopy`` and the opt-in decorators of the functions gotopy rewrote are taken out, since
the rewritten code needs neither. Whatever still names what those imports bound (markers in
a scope that is not rewritten, ``goto`` used as a value) would fail where gotopy is not
installed, so such a module is refused (``G200``) with the place, never written.

The file is CPython's own format, written as ``py_compile`` writes it: the header for the
chosen invalidation mode (source timestamp and size, or a checked or unchecked source
hash), then ``marshal`` of the code object, beside the source in ``__pycache__`` under the
name ``importlib.util.cache_from_source`` gives (``-O`` levels included), or sourceless
into another tree with ``--out-dir``.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import _bootstrap_external as _external_module  # type: ignore[attr-defined]
from typing import Any

from gotopy import _compile, _gotopy, _hook

# `py_compile`'s own helpers: the header of each invalidation mode, the atomic write.
_external: Any = _external_module
# Batches this large show a progress bar on a terminal, as the binary's `compile` does.
PROGRESS_FROM = 32


@dataclass
class Job:
    """One source file and where its ``.pyc`` goes."""

    source: str
    target: str


@dataclass
class Outcome:
    """What compiling one file gave: diagnostics to print (warnings included), whether it
    failed, and an unreadable input's message."""

    report: str = ""
    failed: bool = False
    unreadable: str | None = None


def compile_standalone(data: bytes, path: str, all_scopes: bool, color: bool) -> tuple[types.CodeType, str]:
    """The module's code object for a standalone ``.pyc`` and its rendered warnings; errors
    are ``SyntaxError``. A module asks for all scopes as it does of the import hook. The
    imports of ``goto`` and ``gotopy`` and the opt-in decorators are left out (the plan's
    ``standalone``); whatever still names what those imports bound (markers in a
    scope that is not rewritten, ``goto`` used as a value) would fail where gotopy is not
    installed, so such a module is refused with the place."""
    plan = _gotopy.plan(path, data, all_scopes=all_scopes or _hook.asks_all_scopes(data), color=color)
    code = _compile.compile_source(data, path, the_plan=plan, standalone=True)
    needed = _gotopy.still_needed(code, plan.imported)
    if needed is not None:
        raise plan.late_error(*needed)
    return code, plan.warnings


def compile_job(job: Job, all_scopes: bool, mode: py_compile.PycInvalidationMode, color: bool) -> Outcome:
    """Compiles one file and writes its ``.pyc``."""
    try:
        with open(job.source, "rb") as file:
            data = file.read()
        status = os.stat(job.source)
    except OSError as error:
        return Outcome(unreadable=f"{job.source}: cannot read: {os_error_words(error)}")
    try:
        code, warnings = compile_standalone(data, job.source, all_scopes, color)
    except ValueError as error:  # bytes the file's encoding cannot decode
        return Outcome(unreadable=f"{job.source}: {error}")
    except SyntaxError as error:
        report = getattr(error, "report", "") or f"{job.source}:{error.lineno}: error: {error.msg}\n"
        return Outcome(report=report, failed=True)
    except (RecursionError, MemoryError) as error:
        # CPython cannot compile the source: its own error, as `compile()` raises it.
        notes = "".join(f"\n{note}" for note in getattr(error, "__notes__", ()))
        return Outcome(report=f"{job.source}: error: {type(error).__name__}: {error}{notes}\n", failed=True)
    except Exception as error:  # noqa: BLE001 - a failure inside gotopy stops this file only
        report = f"{job.source}: error[G900]: internal error: {type(error).__name__}: {error} ({_gotopy.REPORT})\n"
        return Outcome(report=report, failed=True)
    if mode == py_compile.PycInvalidationMode.TIMESTAMP:
        pyc = _external._code_to_timestamp_pyc(code, status.st_mtime, status.st_size)
    else:
        checked = mode == py_compile.PycInvalidationMode.CHECKED_HASH
        pyc = _external._code_to_hash_pyc(code, importlib.util.source_hash(data), checked)
    try:
        directory = os.path.dirname(job.target)
        if directory:
            os.makedirs(directory, exist_ok=True)
        _external._write_atomic(job.target, pyc, _external._calc_mode(job.source))
    except OSError as error:
        return Outcome(report=warnings, unreadable=f"{job.target}: cannot write: {os_error_words(error)}")
    return Outcome(report=warnings)


def os_error_words(error: OSError) -> str:
    """An I/O error in words, without the error number, as the binary words it (the
    command line's and the ``.pyc`` workers' messages)."""
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    return (error.strerror or str(error)).lower()


def jobs_for(inputs: list[tuple[str, str | None]], out_dir: str | None) -> list[Job]:
    """A job per ``(file, the directory argument it was found under)``: the cache file
    beside the source, or ``--out-dir``'s sourceless layout (the path relative to the
    directory argument, or the file's name, with ``.py`` replaced by ``.pyc``)."""
    jobs = []
    for source, root in inputs:
        if out_dir is None:
            target = importlib.util.cache_from_source(source)
        else:
            relative = os.path.relpath(source, root) if root is not None else os.path.basename(source)
            target = os.path.join(out_dir, relative[: -len(".py")] + ".pyc")
        jobs.append(Job(source, target))
    return jobs


def compile_all(
    jobs: list[Job], all_scopes: bool, mode: py_compile.PycInvalidationMode, color: bool, progress: bool
) -> list[Outcome]:
    """Every job's outcome, in order: in worker processes, one per core, for more than a
    few files, with a progress bar on standard error when ``progress``."""
    if len(jobs) < 4:
        return [compile_job(job, all_scopes, mode, color) for job in jobs]
    outcomes: list[Outcome] = []
    workers = min(len(jobs), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(compile_job, job, all_scopes, mode, color) for job in jobs]
        for done, future in enumerate(futures, 1):
            outcomes.append(future.result())
            if progress:
                _progress(done, len(jobs))
    if progress:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    return outcomes


def _progress(done: int, total: int) -> None:
    width = 40
    filled = width * done // total
    sys.stderr.write(f"\rcompiling [{'#' * filled}{'-' * (width - filled)}] {done}/{total}")
    sys.stderr.flush()
