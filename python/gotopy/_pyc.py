"""``python -m gotopy compile``: standard ``.pyc`` files that run on a plain CPython.

Each module is compiled as the import hook compiles it (``gotopy._compile``), with one more
edit to the prepared tree (``standalone``): the statements that import ``goto`` or
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

import ast
import importlib.util
import os
import py_compile
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import _bootstrap_external as _external_module  # type: ignore[attr-defined]
from typing import Any

from gotopy import _compile, _hook, _prepare
from gotopy._bytecode import Body, code_objects
from gotopy._cli import _reason
from gotopy._lower import NAME_LOADS, name_of

# The modules whose imports a standalone file leaves out, and the decorators that opt in.
PACKAGES = ("goto", "gotopy")
OPT_IN = ("goto", "with_goto", "switch")
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


def standalone(tree: ast.Module, plan: dict[str, Any]) -> None:
    """Takes out of ``tree`` the imports of ``goto`` and ``gotopy``, ``gotopy.install()``
    statements, and the opt-in decorators of the functions the plan rewrites; records the
    names those imports bound in ``plan["standalone"]`` for ``still_needed``."""
    rewritten = {scope["qualname"] for scope in plan["scopes"] if scope["kind"] == "function"}
    removed: set[str] = set()
    _strip_body(tree.body, "", rewritten, removed)
    plan["standalone"] = removed


def _strip_body(root: list[ast.stmt], prefix: str, rewritten: set[str], removed: set[str]) -> None:
    """Strips ``root`` and every body nested in it (iteratively: an `elif` chain nests as
    deep as it is long), each with the qualified-name prefix of its scope."""
    work = [(root, prefix)]
    while work:
        body, prefix = work.pop()
        kept: list[ast.stmt] = []
        for stmt in body:
            if isinstance(stmt, ast.Import) and all(a.name.split(".")[0] in PACKAGES for a in stmt.names):
                removed.update((a.asname or a.name).split(".")[0] for a in stmt.names)
                continue
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and (stmt.module or "").split(".")[0] in PACKAGES:
                removed.update(a.asname or a.name for a in stmt.names)
                continue
            if _is_install(stmt):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + stmt.name
                if qualname in rewritten:
                    _drop_opt_in(stmt)
                work.append((stmt.body, qualname + ".<locals>."))
            elif isinstance(stmt, ast.ClassDef):
                work.append((stmt.body, prefix + stmt.name + "."))
            else:
                work.extend((inner, prefix) for inner in _prepare.child_bodies(stmt))
            kept.append(stmt)
        # A body left empty by the removals still needs a statement (a module may be empty).
        body[:] = kept or [ast.copy_location(ast.Pass(), stmt) for stmt in body[:1]]


def _is_install(stmt: ast.stmt) -> bool:
    """``gotopy.install()`` (or ``goto.install()``) as a statement."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "install"
        and isinstance(func.value, ast.Name)
        and func.value.id in PACKAGES
    )


def _drop_opt_in(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Removes the opt-in decorators. The function's first line stays the first
    decorator's, as CPython records it (``co_firstlineno``), so ``inspect`` and the line
    table read as they would with the decorators."""
    first = function.decorator_list[0].lineno if function.decorator_list else None
    function.decorator_list = [d for d in function.decorator_list if _decorator_name(d) not in OPT_IN]
    if first is not None and not function.decorator_list:
        function.lineno = first


def _decorator_name(decorator: ast.expr) -> str | None:
    if isinstance(decorator, ast.Name):
        return decorator.id
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return None


def still_needed(code: types.CodeType, names: set[str]) -> tuple[str, Any] | None:
    """The first load, in any code object of the module, of a name the removed imports
    bound: ``(name, position)``, or ``None``."""
    for inner in code_objects(code):
        for instr in Body.decode(inner).instrs():
            if instr.op not in NAME_LOADS or instr.name.startswith("LOAD_FAST"):
                continue
            name = name_of(inner, instr)
            if name in names:
                line = instr.position[0] or inner.co_firstlineno
                return name, (line, *instr.position[1:])
    return None


def compile_standalone(data: bytes, path: str, all_scopes: bool, color: bool) -> tuple[types.CodeType, str]:
    """The module's code object for a standalone ``.pyc`` and its rendered warnings; errors
    are ``SyntaxError``. A module asks for all scopes as it does of the import hook."""
    plan = _compile.plan(data, path, all_scopes or _hook.asks_all_scopes(data), color)
    code = _compile.compile_source(data, path, the_plan=plan, edit=standalone)
    needed = still_needed(code, plan["standalone"])
    if needed is not None:
        name, position = needed
        raise _compile.late_error(
            path,
            data,
            plan,
            f"`{name}` is still needed at run time here, so this module cannot run where "
            "gotopy is not installed",
            position,
            "this is a marker in a scope that is not rewritten, or the name used as a value: "
            "decorate the function with `@goto`, or compile with --all-scopes",
        )
    return code, plan["warnings"]


def compile_job(job: Job, all_scopes: bool, mode: py_compile.PycInvalidationMode, color: bool) -> Outcome:
    """Compiles one file and writes its ``.pyc``."""
    try:
        with open(job.source, "rb") as file:
            data = file.read()
        status = os.stat(job.source)
    except OSError as error:
        return Outcome(unreadable=f"{job.source}: cannot read: {_reason(error)}")
    try:
        code, warnings = compile_standalone(data, job.source, all_scopes, color)
    except ValueError as error:  # bytes the file's encoding cannot decode
        return Outcome(unreadable=f"{job.source}: {error}")
    except SyntaxError as error:
        report = getattr(error, "report", "") or f"{job.source}:{error.lineno}: error: {error.msg}\n"
        return Outcome(report=report, failed=True)
    except Exception as error:  # noqa: BLE001 - a failure inside gotopy stops this file only
        report = f"{job.source}: error[G900]: internal error: {type(error).__name__}: {error} ({_compile.REPORT})\n"
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
        return Outcome(report=warnings, unreadable=f"{job.target}: cannot write: {_reason(error)}")
    return Outcome(report=warnings)


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


def default_mode() -> py_compile.PycInvalidationMode:
    """``py_compile``'s default: hash-checked when ``SOURCE_DATE_EPOCH`` is set (for
    reproducible builds), else the source's timestamp."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return py_compile.PycInvalidationMode.CHECKED_HASH
    return py_compile.PycInvalidationMode.TIMESTAMP
