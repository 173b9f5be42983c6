"""gotopy's compile path on CPython: the front end checks and plans the module
(``_gotopy.plan``), ``_prepare`` makes the plan's edits to CPython's own tree when it has
any, the running interpreter compiles the tree (or else the source itself), and the native
module lowers the markers of every rewritten code object (``Plan.lower``).
"""

from __future__ import annotations

import ast
import gc
import json
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from gotopy import _gotopy, _prepare

# The recursion limit while CPython converts between its tree and `ast` objects.
_AST_DEPTH = 20_000

REPORT = "this is a bug in gotopy; please report it with the file that triggers it"


class GotoSyntaxError(SyntaxError):
    """A goto, label or switch error, with the diagnostic's code (``G001``...)."""

    code: str = ""
    report: str = ""


def rejected(path: str, data: bytes, answer: str) -> SyntaxError:
    """The ``SyntaxError`` of a module the front end or the rewrite rejects, from the JSON of
    ``_gotopy.Rejected``: its first error, with the rendered report of all of them."""
    found: dict[str, Any] = json.loads(answer)
    if not found["errors"]:
        return SyntaxError(found["report"].strip(), (path, 1, 1, None))
    error = found["errors"][0]
    line = error.get("line", 1)
    lines = _gotopy.decode_source(data).splitlines()
    text = lines[line - 1] + "\n" if 0 < line <= len(lines) else None
    exc = GotoSyntaxError(
        f"{error['code']}: {error['message']}",
        (path, line, error.get("column", 1), text, error.get("end_line", line), error.get("end_column", 1)),
    )
    exc.code = error["code"]
    exc.report = found["report"]
    return exc


def plan(
    data: bytes, path: str, all_scopes: bool = False, color: bool = False, scope_line: int | None = None
) -> _gotopy.Plan:
    """The front end's plan for a module, or its first error as ``GotoSyntaxError``;
    ``scope_line`` also rewrites the function or class defined on that line."""
    try:
        return _gotopy.plan(path, data, all_scopes=all_scopes, color=color, scope_line=scope_line)
    except _gotopy.Rejected as error:
        raise rejected(path, data, error.args[0]) from None


def compile_source(
    data: bytes,
    path: str,
    *,
    all_scopes: bool = False,
    optimize: int = -1,
    the_plan: _gotopy.Plan | None = None,
    edit: Callable[[ast.Module], None] | None = None,
    scope_line: int | None = None,
) -> types.CodeType:
    """Compiles a module's source with goto: ``compile(data, path, "exec")`` with every
    marker of every rewritten scope lowered; errors are ``SyntaxError``. ``the_plan`` is
    the module's plan when the caller has it; ``edit`` makes more edits to the prepared
    tree (standalone ``.pyc`` files, ``gotopy._pyc``); ``scope_line`` also rewrites the
    function or class defined on that line (the decorator called as ``goto(f)``)."""
    if the_plan is None:
        the_plan = plan(data, path, all_scopes, scope_line=scope_line)
    if edit is None and not the_plan.edits_tree:
        # Nothing to rewrite, or markers to lower in CPython's own code of the source: the
        # same code objects as compiling the prepared tree, without the round trip through
        # `ast` objects (which costs more than the compile itself).
        code = compile(data, path, "exec", dont_inherit=True, optimize=optimize)
        return lower(code, the_plan, path, data)
    limit = sys.getrecursionlimit()
    # CPython's conversions between its syntax tree and `ast` objects count against the
    # recursion limit, which a long `elif` chain reaches on 3.11 (each `elif` nests).
    sys.setrecursionlimit(max(limit, _AST_DEPTH))
    # The tree's objects hold no cycles, yet a large module's millions of them set off the
    # cyclic collector again and again as they are made (a function of 16,000 blocks: the
    # round trip through `ast` took 2.5 times `compile()` on 3.11 with it, 1.6 without).
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = ast.parse(data, path)
        _prepare.apply(tree, json.loads(the_plan.json))
        if edit is not None:
            edit(tree)
        code = compile(tree, path, "exec", dont_inherit=True, optimize=optimize)
    except _prepare.PlanMismatch as mismatch:
        raise _late(path, data, the_plan.late_error(str(mismatch), None)) from None
    except (RecursionError, MemoryError) as error:
        version = "{}.{}".format(*sys.version_info[:2])
        message = (
            f"CPython {version}'s `ast` module cannot hold this module, which nests too deeply "
            f"({type(error).__name__}: {error})"
        )
        help = (
            "gotopy compiles CPython's own syntax tree: split the deepest statement (a long "
            "`elif` chain nests one level per `elif`)"
        )
        raise _late(path, data, the_plan.late_error(message, None, help)) from None
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
    return lower(code, the_plan, path, data)


def _late(path: str, data: bytes, error: BaseException) -> SyntaxError:
    return rejected(path, data, error.args[0])


def lower(code: types.CodeType, the_plan: _gotopy.Plan, path: str, data: bytes) -> types.CodeType:
    """``code`` with the code object of every planned scope lowered."""
    if not the_plan.rewrites:
        # Nothing to lower (a module without markers, or a standalone edit alone): no walk
        # over its code objects.
        return code
    try:
        module, placed = the_plan.lower(code)
    except _gotopy.Rejected as error:
        raise _late(path, data, error) from None
    for rewritten in placed:
        _REWRITTEN[id(rewritten)] = rewritten
    return module


# The code objects gotopy rewrote and that are still alive, by identity: the decorator
# leaves them as they are without looking into them.
_REWRITTEN: weakref.WeakValueDictionary[int, types.CodeType] = weakref.WeakValueDictionary()


def rewritten_by_gotopy(code: types.CodeType) -> bool:
    """Whether this very code object is one gotopy rewrote (in this process)."""
    return _REWRITTEN.get(id(code)) is code
