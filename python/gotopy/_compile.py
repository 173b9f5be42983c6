"""gotopy's compile path on CPython: check and plan (the Rust front end), prepare
CPython's own tree (``_prepare``), compile it with the running interpreter, and lower the
markers of every rewritten code object (``_lower``).
"""

from __future__ import annotations

import ast
import json
import sys
import types
from collections.abc import Callable
from typing import Any

from gotopy import _gotopy, _prepare, _versions
from gotopy._bytecode import Body, BytecodeError, code_objects, replace_nested
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


def plan(data: bytes, path: str, all_scopes: bool = False, color: bool = False) -> dict[str, Any]:
    """The front end's plan for a module, its warnings rendered under ``"warnings"``, or its
    first error as ``GotoSyntaxError``."""
    if not _versions.SUPPORTED:
        raise RuntimeError(f"gotopy supports CPython 3.11 to 3.15, not {_versions.VERSION}")
    answer = json.loads(_gotopy.plan(path, data, all_scopes=all_scopes, color=color))
    if "plan" in answer:
        the_plan: dict[str, Any] = answer["plan"]
        the_plan["warnings"] = answer["warnings"]
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
) -> types.CodeType:
    """Compiles a module's source with goto: ``compile(data, path, "exec")`` with every
    marker of every rewritten scope lowered; errors are ``SyntaxError``. ``the_plan`` is
    the module's plan when the caller has it; ``edit`` makes more edits to the prepared
    tree (standalone ``.pyc`` files, ``gotopy._pyc``)."""
    if the_plan is None:
        the_plan = plan(data, path, all_scopes)
    if not the_plan["scopes"] and edit is None:
        # Nothing to rewrite: CPython's own compile, byte for byte.
        return compile(data, path, "exec", dont_inherit=True, optimize=optimize)
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
        raise _internal(path, str(mismatch)) from None
    except (RecursionError, MemoryError) as error:
        message = (
            f"CPython {_versions.VERSION[0]}.{_versions.VERSION[1]}'s `ast` module cannot hold "
            f"this module, which nests too deeply ({type(error).__name__}: {error}); gotopy "
            "compiles CPython's own syntax tree, so split the deepest statement (a long `elif` "
            "chain nests one level per `elif`)"
        )
        raise refusal(path, data, message, 1, 1) from None
    finally:
        sys.setrecursionlimit(limit)
    places = (_prepare.with_items(tree), _prepare.finally_bodies(tree))
    return lower_module(code, the_plan, path, data, places)


def lower_module(
    code: types.CodeType,
    the_plan: dict[str, Any],
    path: str,
    data: bytes,
    places: tuple[dict[tuple[int, int], list[Span]], list[Span]],
) -> types.CodeType:
    """``code`` with the code object of every planned scope lowered."""
    new: dict[int, types.CodeType] = {}
    for scope in the_plan["scopes"]:
        found = _find_scope(code, scope)
        if found is None:
            raise _internal(path, f"cannot find the code object of `{scope['qualname']}`")
        try:
            new[id(found)] = Lowering(Body.decode(found), scope, the_plan, *places).lower()
        except LowerError as error:
            message, span = error.args
            raise refusal(path, data, message, span[0], (span[2] or 0) + 1) from None
        except BytecodeError as error:
            raise _internal(path, f"the rewritten `{scope['qualname']}` fails the check: {error}") from None
    return replace_nested(code, new)


def refusal(path: str, data: bytes, message: str, line: int, column: int) -> GotoSyntaxError:
    """A ``G200`` refusal at ``line`` and ``column`` (one-based) of the module."""
    report = f"{path}:{line}:{column}: error[G200]: {message}\n"
    error = {"code": "G200", "message": message, "line": line, "column": column}
    return _error(path, _gotopy.decode_source(data), error, report)


def _find_scope(code: types.CodeType, scope: dict[str, Any]) -> types.CodeType | None:
    """The code object with the scope's qualified name that holds its first marker."""
    keywords = [tuple(m["keyword"]) for m in scope["labels"] + scope["gotos"]]
    candidates = [c for c in code_objects(code) if c.co_qualname == scope["qualname"]]
    for candidate in candidates:
        positions = set(candidate.co_positions())
        if any(k in positions for k in keywords):
            return candidate
    return candidates[0] if len(candidates) == 1 else None


def _internal(path: str, message: str) -> SyntaxError:
    exc = GotoSyntaxError(f"G900: internal error: {message} ({REPORT})", (path, 1, 1, None))
    exc.code = "G900"
    return exc
