"""The names programs use: the markers ``goto``, ``label``, ``switch``, ``case`` and the
decorators ``goto``, ``with_goto``, ``switch`` (SPEC sections 2 and 6).

Code compiled by gotopy (``python -m gotopy run``, modules imported through
``gotopy.install()``, ``gotopy.compile``) already has real jumps, and the decorators leave
it as it is. Applied to a function CPython compiled itself, ``@goto`` compiles the
function's module from its source through gotopy (found as ``inspect`` finds it: the file,
else ``linecache``, which holds IPython's and Jupyter's cells, a zip file's modules through
their loader, and any text a code generator registers), takes the code object of the same
function (same qualified name, first line and variables) and puts it in ``f.__code__``, so
the function object itself, its ``__dict__``, defaults, annotations, docstring,
``__wrapped__`` and closure are kept. Without any source it rewrites what the bytecode
alone proves right, and refuses the rest with ``SyntaxError``.
"""

from __future__ import annotations

import os
import time
from _thread import _local

from gotopy import _gotopy
from gotopy._marker import _CODE, Marker

# What a program that imports the markers pays for: this module, `_marker` and the native
# module. The compile path (`_compile`, with `ast` and the plan's edits) is imported by the
# first decorator that rewrites, and `typing`, `types` and `threading` not at all (see
# `TYPE_CHECKING` in `_marker`); python/tests/test_programs.py counts the modules.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType
    from typing import Any, NoReturn

    _ByName = dict[tuple[str, int], list[CodeType]]


class _Recent(_local):
    """What this thread's decorators compiled last (``_module_code``): the module for each way
    of asking, with its code objects by qualified name and first line, so that a module of
    thousands of decorated functions is compiled once and each decorator finds its function
    without a walk over all of them. One per thread: decorators run while a module loads, and
    threads load modules at once (a dict shared by them was iterated, cleared and read by
    several at a time)."""

    def __init__(self) -> None:
        self.modules: dict[tuple[str, bytes, int | None], tuple[CodeType, _ByName]] = {}


_recent = _Recent()

# The source `_source` read last: its path, what says it is unchanged (a file's identity,
# size and time of change, or the list `linecache` holds; `None`: nothing does) and its
# bytes, so that the decorators of one module do not each read, decode and hash all of it.
# Shared by the threads: one tuple, replaced whole, so that a thread reads one source's
# three parts together.
_last_source: tuple[str, object, bytes] | None = None

# A file changed this recently may change again without its status showing it (its time
# has the file system's granularity), so its status vouches for nothing yet, as git treats
# a racily clean file.
_SETTLED_NS = 2_000_000_000


def _module_code(path: str, data: bytes, scope_line: int | None = None) -> tuple[CodeType, _ByName]:
    """The module compiled through gotopy, with the scope defined on ``scope_line`` (a
    function or class) rewritten too, decorated or not; ``0`` rewrites every scope. With it,
    its code objects by qualified name and first line, outermost first."""
    from gotopy import _compile

    key = (path, data, scope_line)
    modules = _recent.modules
    if key not in modules:
        if not any(k[:2] == (path, data) for k in modules):
            modules.clear()  # one module at a time: decorators run while a module loads
        module = _compile.compile_source(
            data, path, all_scopes=scope_line == 0, scope_line=scope_line or None
        )
        by_name: _ByName = {}
        for inner in code_objects(module):
            by_name.setdefault((inner.co_qualname, inner.co_firstlineno), []).append(inner)
        modules[key] = (module, by_name)
    return modules[key]


def _same_function(new: CodeType, old: CodeType) -> bool:
    return (
        new.co_qualname == old.co_qualname
        and new.co_firstlineno == old.co_firstlineno
        and new.co_varnames == old.co_varnames
        and new.co_freevars == old.co_freevars
        and new.co_cellvars == old.co_cellvars
        and new.co_argcount == old.co_argcount
        and new.co_kwonlyargcount == old.co_kwonlyargcount
    )


def _source(code: CodeType, module_globals: dict[str, Any] | None) -> bytes | None:
    """The source of the module ``code`` was compiled from, as ``inspect`` finds it: the
    file, else ``linecache`` (an IPython or Jupyter cell, a module in a zip file through its
    loader, text a code generator registered); ``None`` when there is none."""
    global _last_source
    path = code.co_filename
    last = _last_source  # read once: another thread may replace it meanwhile
    if last is not None and last[0] != path:
        last = None
    try:
        status = os.stat(path)
        seen: object = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
        if last is not None and last[1] == seen:
            return last[2]
        with open(path, "rb") as file:
            data = file.read()
        if time.time_ns() - status.st_mtime_ns < _SETTLED_NS:
            seen = None
    except OSError:
        import linecache

        lines = linecache.getlines(path, module_globals)
        if not lines:
            return None
        if last is not None and last[1] is lines:
            return last[2]
        seen, data = lines, _gotopy.source_bytes("".join(lines), path)
    if last is not None and last[2] == data:
        data = last[2]  # the same object, whose hash is computed once
    _last_source = (path, seen, data)
    return data


def rewrite_code(code: CodeType, module_globals: dict[str, Any] | None = None) -> CodeType:
    """The code object of the same function (or class or module body) compiled by gotopy
    from its source, or ``code`` itself when it has no markers left (it was compiled by
    gotopy, or never had any). ``module_globals`` are the function's, for ``linecache`` to
    ask the module's loader for its source."""
    from gotopy import _compile

    if _compile.rewritten_by_gotopy(code):
        return code
    misuse = None
    if not _gotopy.has_markers(code):
        # Nothing to rewrite, unless the markers are there but misused: then the source
        # says what is wrong (check's own error), or the rewrite without source refuses.
        misuse = _gotopy.misused_markers(code)
        if misuse is None:
            return code
    path = code.co_filename
    data = _source(code, module_globals)
    if data is None:
        if misuse is not None:
            _refuse_without_source(code, *misuse)
        return _without_source(code)
    # The function as the source decorates it; else (`f = goto(f)`, a class body) asked for
    # by its line; a module's code object asks for every scope. `code` is CPython's compile
    # of the same source, so a scope gotopy did not rewrite has the same bytes.
    same: list[CodeType] = []
    for scope_line in (None, 0 if code.co_qualname == "<module>" else code.co_firstlineno):
        _, by_name = _module_code(path, data, scope_line)
        named = by_name.get((code.co_qualname, code.co_firstlineno), [])
        same = [candidate for candidate in named if _same_function(candidate, code)]
        for candidate in same:
            if candidate.co_code != code.co_code:
                return candidate
    if same:
        # The front end finds no marker in it (a global named `case`, say): nothing to do.
        return code
    if not os.path.exists(path):
        # No file: what `linecache` holds under the name is another text, not changed source
        # (`python -c` registers its own as `<string>` from 3.13, the name every `exec` of a
        # string gets).
        if misuse is not None:
            _refuse_without_source(code, *misuse)
        return _without_source(code)
    raise SyntaxError(
        f"G200: `{code.co_qualname}` is not in {path} as it is now (was the file changed after "
        "it was imported?)",
        (path, code.co_firstlineno, 1, None),
    )


def _without_source(code: CodeType) -> CodeType:
    """The rewrite from bytecode alone (a function compiled from a string), or
    ``SyntaxError`` for what it cannot prove."""
    try:
        return _gotopy.rewrite_without_source(code)
    except _gotopy.Refused as error:
        _refuse_without_source(code, *error.args)
    except _gotopy.BytecodeError as error:
        raise SyntaxError(
            f"G900: internal error: the rewritten `{code.co_qualname}` fails the check: "
            f"{error} ({_gotopy.REPORT})",
            (code.co_filename, code.co_firstlineno, 1, None),
        ) from None


def _refuse_without_source(code: CodeType, message: str, position: Any, help: str) -> NoReturn:
    line = position[0] or code.co_firstlineno
    # Without the source, CPython's byte column is the best column there is.
    column = (position[2] or 0) + 1
    raise SyntaxError(
        f"G200: {message} (`{code.co_qualname}` has no source: no file, nothing in linecache; {help})",
        (code.co_filename, line, column, None),
    ) from None


def code_objects(code: CodeType) -> list[CodeType]:
    """``code`` and every code object nested in it, outermost first."""
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, _CODE):
            found.extend(code_objects(constant))
    return found


class _Marker(Marker):
    """A marker whose decorator raises its errors from native code (``_gotopy.frameless``),
    so that their tracebacks end at the user's decorator, not in gotopy."""

    __call__ = _gotopy.frameless(Marker.__call__)


goto = _Marker("goto", rewrite_code)
with_goto = goto
label = _Marker("label", rewrite_code)
switch = _Marker("switch", rewrite_code)
case = _Marker("case", rewrite_code)
