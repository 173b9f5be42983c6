"""gotopy's compile path on CPython: check and plan (the Rust front end), prepare
CPython's own tree (``_prepare``) when the plan edits it, compile the tree or else the
source itself with the running interpreter, and lower the markers of every rewritten code
object (``_lower``).
"""

from __future__ import annotations

import ast
import json
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from gotopy import _gotopy, _prepare, _versions
from gotopy._bytecode import Body, BytecodeError, replace_nested
from gotopy._lower import Lowering, LowerError

Span = tuple[int, int, int, int]

# The recursion limit while CPython converts between its tree and `ast` objects.
_AST_DEPTH = 20_000

REPORT = "this is a bug in gotopy; please report it with the file that triggers it"


class GotoSyntaxError(SyntaxError):
    """A goto, label or switch error, with the diagnostic's code (``G001``...)."""

    code: str = ""
    report: str = ""


def _error(path: str, text: str | None, error: dict[str, Any], report: str) -> GotoSyntaxError:
    line = error.get("line", 1)
    source_line = None
    if text is not None:
        lines = text.splitlines()
        if 0 < line <= len(lines):
            source_line = lines[line - 1] + "\n"
    exc = GotoSyntaxError(
        f"{error['code']}: {error['message']}",
        (path, line, error.get("column", 1), source_line, error.get("end_line", line), error.get("end_column", 1)),
    )
    exc.code = error["code"]
    exc.report = report
    return exc


def plan(
    data: bytes, path: str, all_scopes: bool = False, color: bool = False, scope_line: int | None = None
) -> dict[str, Any]:
    """The front end's plan for a module, its warnings rendered under ``"warnings"``, or its
    first error as ``GotoSyntaxError``; ``scope_line`` also rewrites the function or class
    defined on that line, decorated or not."""
    if not _versions.SUPPORTED:
        raise RuntimeError(f"gotopy supports CPython 3.11 to 3.15, not {_versions.VERSION}")
    answer = json.loads(
        _gotopy.plan(path, data, all_scopes=all_scopes, color=color, scope_line=scope_line)
    )
    if "plan" in answer:
        the_plan: dict[str, Any] = answer["plan"]
        the_plan["warnings"] = answer["warnings"]
        the_plan["color"] = color  # for the errors found after planning
        return the_plan
    text = _gotopy.decode_source(data)
    if not answer["errors"]:
        raise SyntaxError(answer["report"].strip(), (path, 1, 1, None))
    raise _error(path, text, answer["errors"][0], answer["report"])


def compile_source(
    data: bytes,
    path: str,
    *,
    all_scopes: bool = False,
    optimize: int = -1,
    the_plan: dict[str, Any] | None = None,
    edit: Callable[[ast.Module, dict[str, Any]], None] | None = None,
    scope_line: int | None = None,
) -> types.CodeType:
    """Compiles a module's source with goto: ``compile(data, path, "exec")`` with every
    marker of every rewritten scope lowered; errors are ``SyntaxError``. ``the_plan`` is
    the module's plan when the caller has it; ``edit`` makes more edits to the prepared
    tree (standalone ``.pyc`` files, ``gotopy._pyc``); ``scope_line`` also rewrites the
    function or class defined on that line (the decorator called as ``goto(f)``)."""
    if the_plan is None:
        the_plan = plan(data, path, all_scopes, scope_line=scope_line)
    if edit is None and not _prepare.edits_tree(the_plan):
        # Nothing to rewrite, or markers to lower in CPython's own code of the source: the
        # same code objects as compiling the prepared tree, without the round trip through
        # `ast` objects (which costs more than the compile itself).
        code = compile(data, path, "exec", dont_inherit=True, optimize=optimize)
        return lower_module(code, the_plan, path, data) if the_plan["scopes"] else code
    limit = sys.getrecursionlimit()
    # CPython's conversions between its syntax tree and `ast` objects count against the
    # recursion limit, which a long `elif` chain reaches on 3.11 (each `elif` nests).
    sys.setrecursionlimit(max(limit, _AST_DEPTH))
    try:
        tree = ast.parse(data, path)
        _prepare.apply(tree, the_plan)
        if edit is not None:
            edit(tree, the_plan)
        code = compile(tree, path, "exec", dont_inherit=True, optimize=optimize)
    except _prepare.PlanMismatch as mismatch:
        raise late_error(path, data, the_plan, str(mismatch), None) from None
    except (RecursionError, MemoryError) as error:
        message = (
            f"CPython {_versions.VERSION[0]}.{_versions.VERSION[1]}'s `ast` module cannot hold "
            f"this module, which nests too deeply ({type(error).__name__}: {error})"
        )
        help = (
            "gotopy compiles CPython's own syntax tree: split the deepest statement (a long "
            "`elif` chain nests one level per `elif`)"
        )
        raise late_error(path, data, the_plan, message, None, help) from None
    finally:
        sys.setrecursionlimit(limit)
    return lower_module(code, the_plan, path, data)


def lower_module(code: types.CodeType, the_plan: dict[str, Any], path: str, data: bytes) -> types.CodeType:
    """``code`` with the code object of every planned scope lowered."""
    withs = {tuple(w["at"]): [tuple(span) for span in w["items"]] for w in the_plan["withs"]}
    finally_bodies = sorted({tuple(span) for span in the_plan["finally_bodies"]})
    new: dict[int, types.CodeType] = {}
    along: set[int] = set()
    for scope in the_plan["scopes"]:
        found_along = _find_scope(code, scope)
        where = _first_marker(scope)
        if found_along is None:
            message = f"cannot find the code object of `{scope['qualname']}`"
            raise late_error(path, data, the_plan, message, where)
        found = found_along[-1]
        along.update(map(id, found_along))
        try:
            new[id(found)] = Lowering(Body.decode(found), scope, the_plan, withs, finally_bodies).lower()
        except LowerError as error:
            message, span, help = error.args
            raise late_error(path, data, the_plan, message, span, help) from None
        except BytecodeError as error:
            message = f"the rewritten `{scope['qualname']}` fails the check: {error}"
            raise late_error(path, data, the_plan, message, where) from None
        except Exception as error:  # noqa: BLE001 - any other failure is gotopy's own
            message = f"rewriting `{scope['qualname']}` failed: {type(error).__name__}: {error}"
            raise late_error(path, data, the_plan, message, where) from error
    placed: list[types.CodeType] = []
    module = replace_nested(code, new, placed, along)
    for rewritten in placed:
        _REWRITTEN[id(rewritten)] = rewritten
    return module


# The code objects gotopy rewrote and that are still alive, by identity: the decorator
# leaves them as they are without looking into them.
_REWRITTEN: weakref.WeakValueDictionary[int, types.CodeType] = weakref.WeakValueDictionary()


def rewritten_by_gotopy(code: types.CodeType) -> bool:
    """Whether this very code object is one gotopy rewrote (in this process)."""
    return _REWRITTEN.get(id(code)) is code


def late_error(
    path: str,
    data: bytes,
    the_plan: dict[str, Any],
    message: str,
    span: Span | list[int | None] | None,
    help: str | None = None,
) -> GotoSyntaxError:
    """An error in the code CPython compiled from the plan, rendered by the front end as
    ``check`` renders its own: a construct refused by design (``G200``) when ``help`` says
    what to write instead, else a failure inside gotopy (``G900``); at ``span`` (CPython's
    ``(line, end_line, column, end_column)``), or the module's start."""
    line, end_line, column, end_column = span if span is not None else (1, 1, 0, 0)
    line = line or 1
    where = (line, end_line or line, column or 0, end_column or column or 0)
    color = bool(the_plan.get("color", False))
    answer = json.loads(
        _gotopy.late_error(
            path, data, internal=help is None, message=message, help=help or "", span=where, color=color
        )
    )
    return _error(path, _gotopy.decode_source(data), answer["errors"][0], answer["report"])


def _first_marker(scope: dict[str, Any]) -> Span | None:
    """Where a scope's first marker is, for an error about the whole scope."""
    spans = [tuple(m["keyword"]) for m in scope["labels"] + scope["gotos"] + scope["computed"]]
    spans += [tuple(switch["dispatch"]) for switch in scope["switches"]]
    return min(spans) if spans else None  # type: ignore[return-value]


def _find_scope(code: types.CodeType, scope: dict[str, Any]) -> list[types.CodeType] | None:
    """The code object with the scope's qualified name that holds its first marker, last
    after every code object it is nested in (``code`` first)."""
    keywords = [tuple(m["keyword"]) for m in scope["labels"] + scope["gotos"]]
    qualname = scope["qualname"]
    candidates: list[list[types.CodeType]] = []

    def look_into(path: list[types.CodeType]) -> None:
        if path[-1].co_qualname == qualname:
            candidates.append(path)
        for constant in path[-1].co_consts:
            if isinstance(constant, types.CodeType):
                look_into([*path, constant])

    look_into([code])
    for candidate in candidates:
        positions = set(candidate[-1].co_positions())
        if any(k in positions for k in keywords):
            return candidate
    return candidates[0] if len(candidates) == 1 else None


