"""gotopy's compile path on CPython: the front end checks and plans the module
(``_gotopy.plan``), ``_prepare`` makes the plan's edits to CPython's own tree when it has
any, the running interpreter compiles the tree (or else the source itself), and the native
module lowers the markers of every rewritten code object (``Plan.lower``).

``compile_source`` is the entry the import hook, the decorator, ``gotopy.compile`` (the
native module's ``compile``, which takes its arguments as the built-in does),
``python -m gotopy`` and the standalone ``.pyc`` files share (bytes and a path, the plan
when the caller has it).
"""

from __future__ import annotations

import builtins
import weakref

from gotopy import _gotopy

# What the path of a module without edits to CPython's tree needs is imported here; the
# rest (`_prepare` with `ast` and `json`, `warnings` for a plan beside the compile) where
# it is first needed, so that the first `@goto` of a program does not pay for it
# (python/benches/startup.py). Not `typing.TYPE_CHECKING`: type checkers read this name as
# true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    import warnings


def compile_source(
    data: bytes,
    path: str,
    *,
    all_scopes: bool = False,
    optimize: int = -1,
    the_plan: _gotopy.Plan | None = None,
    standalone: bool = False,
    through_tree: bool = False,
    scope_line: int | None = None,
    mode: str = "exec",
    flags: int = 0,
) -> types.CodeType:
    """Compiles a module's source with goto: ``compile(data, path, mode, flags)`` with every
    marker of every rewritten scope lowered; errors are ``SyntaxError``. ``the_plan`` is
    the module's plan when the caller has it; ``standalone`` also makes the plan's edits of
    a standalone ``.pyc`` file (``gotopy._pyc``); ``through_tree`` takes the round trip
    through CPython's tree even when the plan edits none (the tests and the benchmark
    compare the two routes); ``scope_line`` also rewrites the function or class defined on
    that line (the decorator called as ``goto(f)``)."""
    code = None
    if the_plan is None and not (standalone or through_tree) and _gotopy.beside_pays(data):
        the_plan, code = plan_beside(data, path, all_scopes, scope_line, mode, flags, optimize)
    elif the_plan is None:
        the_plan = _gotopy.plan(path, data, all_scopes=all_scopes, scope_line=scope_line)
    if code is None:
        code = unlowered(
            data, path, the_plan, standalone, through_tree, mode=mode, flags=flags, optimize=optimize
        )
    return lower(code, the_plan)


def plan_beside(
    data: bytes, path: str, all_scopes: bool, scope_line: int | None, mode: str, flags: int, optimize: int
) -> tuple[_gotopy.Plan, types.CodeType | None]:
    """The plan of a module, or its first error as ``GotoSyntaxError``, made while CPython
    compiles the source as it is; with that code when the plan needs it (it edits no tree),
    else ``None``, and the caller compiles as it would have without this. The warnings of
    this compile are held, and shown only with its code: each then once, as ``compile()``
    shows them. Only where no other thread runs Python: holding them takes the warnings of
    the whole process for the time of the compile."""
    import warnings

    def source_code() -> tuple[types.CodeType | None, list[warnings.WarningMessage]]:
        # The filters stay the caller's: one that makes a warning an error fails this compile,
        # and the caller's raises it as CPython does.
        with warnings.catch_warnings(record=True) as held:
            try:
                code: types.CodeType = builtins.compile(
                    data, path, mode, flags, dont_inherit=True, optimize=optimize
                )
            except Exception:  # noqa: BLE001 - compiled again by the caller, which raises it
                return None, held
            return code, held

    the_plan, (code, held) = _gotopy.plan_beside(path, data, source_code, all_scopes=all_scopes, scope_line=scope_line)
    if code is None or the_plan.edits_tree:
        return the_plan, None
    # As CPython's compiler warns (no module, no registry), through the same filters: a
    # warning once a process is shown again, the registries emptied when the filters
    # changed back.
    for warning in held:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return the_plan, code


def unlowered(
    data: bytes,
    path: str,
    the_plan: _gotopy.Plan,
    standalone: bool = False,
    through_tree: bool = False,
    *,
    mode: str = "exec",
    flags: int = 0,
    optimize: int = -1,
) -> types.CodeType:
    """CPython's code of the module, markers not yet lowered: ``compile()`` of its source as
    it is when the plan edits no tree (nor, with ``standalone``, a standalone file's) and
    ``through_tree`` does not ask for the tree, else of CPython's own tree of the source with
    those edits made (the round trip through `ast` objects). Where CPython cannot compile
    the source, what ``compile()`` raises (``_prepare.compiled``)."""
    if not (standalone or through_tree) and not the_plan.edits_tree:
        # Nothing to rewrite, or markers to lower in CPython's own code of the source: the
        # same code objects as compiling the prepared tree, without the round trip through
        # `ast` objects (which costs more than the compile itself).
        code: types.CodeType = builtins.compile(
            data, path, mode, flags, dont_inherit=True, optimize=optimize
        )
        return code
    import json

    from gotopy import _prepare

    plan = json.loads(the_plan.json)
    try:
        code = _prepare.compiled(
            data,
            path,
            lambda tree: _prepare.apply(tree, plan, standalone),
            deep=the_plan.deep,
            mode=mode,
            flags=flags,
            optimize=optimize,
        )
    except _prepare.PlanMismatch as mismatch:
        raise the_plan.late_error(str(mismatch), None) from None
    return code


def lower(code: types.CodeType, the_plan: _gotopy.Plan) -> types.CodeType:
    """``code`` with the code object of every planned scope lowered."""
    if not the_plan.rewrites:
        # Nothing to lower (a module without markers, or a standalone edit alone): no walk
        # over its code objects.
        return code
    module, placed = the_plan.lower(code)
    for rewritten in placed:
        _REWRITTEN[id(rewritten)] = rewritten
    return module


# The code objects gotopy rewrote and that are still alive, by identity: the decorator
# leaves them as they are without looking into them. Threads share it without a lock: it is
# never iterated, each of its dict's operations is atomic, and a dead entry's removal
# (`_remove_dead_weakref`) removes only an entry that is still dead, not one a thread put in
# under the same identity since.
_REWRITTEN: weakref.WeakValueDictionary[int, types.CodeType] = weakref.WeakValueDictionary()


def rewritten_by_gotopy(code: types.CodeType) -> bool:
    """Whether this very code object is one gotopy rewrote (in this process)."""
    return _REWRITTEN.get(id(code)) is code
