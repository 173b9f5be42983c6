"""The front end's edits applied to CPython's own syntax tree.

gotopy's front end (Rust) decides what the tree needs so that every label survives CPython's
dead-code removal, every ``with`` statement a goto may leave has its normal exit compiled, and
every goto out of a ``try`` with ``finally`` has its copy of the ``finally`` body; it names
each place by its source position (``gotopy::cpython::plan``).
This module finds those places in ``ast.parse``'s tree of the same source and makes the
edits, so that everything gotopy did not touch is compiled exactly as CPython compiles it.
For a standalone ``.pyc`` file it also takes out what only gotopy needs, as the plan says.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import contextlib
import gc
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from gotopy import _gotopy

# A source position as CPython's code objects give it (``gotopy::tables::Position``):
# line, end line, column, end column.
Position = tuple[int, int, int, int]
Node = TypeVar("Node", bound=ast.AST)

_GUARDED = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Assert)
_WITH = (ast.With, ast.AsyncWith)


class PlanMismatch(Exception):
    """An edit of the plan names a place that CPython's tree does not have."""


# The least recursion limit while CPython converts between its tree and `ast` objects and
# compiles the tree (a long `elif` chain nests one level per `elif`): 3.11 counts both
# against it, the conversions one a level and the compiler up to three (its
# `COMPILER_STACK_FRAME_SCALE`), so the round trip takes at least four times the caller's
# limit, and holds what `compile()` of the source holds (3.12 and later bound them by C
# recursion instead, which no limit changes).
AST_DEPTH = 20_000
# The recursion limit and the collector are the process's, and threads compile at once. The
# round trips share theirs: the first of overlapping round trips saves them and changes them,
# the last puts them back (each saving and restoring its own left the limit raised for good,
# or ran a thread's round trip under the caller's limit, whenever two overlapped). A compile
# of the source as it is (``compiled``'s ``source_code``) needs the caller's own limit, which
# no round trip may raise meanwhile: it waits for them to end, and they for it.
_settings = threading.Condition()
_round_trips = 0
_exact = False  # a compile of the source holds the limit (``exact_limit``)
_saved: tuple[int, bool] = (0, False)


@contextlib.contextmanager
def tree_round_trip() -> Iterator[None]:
    """What a module's round trip through `ast` objects needs, for what runs inside: a
    recursion limit of at least ``AST_DEPTH`` and four times the caller's, and the cyclic
    collector off. The tree's objects hold no cycles, yet a large module's millions of them
    set off the collector again and again as they are made (a function of 16,000 blocks:
    the round trip took 2.5 times `compile()` on 3.11 with it, 1.6 without); free the tree
    inside, or the first allocation after would start a collection over every node (0.6 s on
    3.13). Round trips that overlap, on any threads, share these settings: the caller's limit
    is the one the first of them found."""
    global _round_trips, _saved
    with _settings:
        _settings.wait_for(lambda: not _exact)
        if _round_trips == 0:
            limit = sys.getrecursionlimit()
            _saved = (limit, gc.isenabled())
            sys.setrecursionlimit(max(4 * limit, AST_DEPTH))
            gc.disable()
        _round_trips += 1
    try:
        yield
    finally:
        with _settings:
            _round_trips -= 1
            if _round_trips == 0:
                limit, collecting = _saved
                sys.setrecursionlimit(limit)
                if collecting:
                    gc.enable()
                _settings.notify_all()


@contextlib.contextmanager
def exact_limit(more: int) -> Iterator[None]:
    """The caller's recursion limit and ``more`` levels for what runs inside, with no round
    trip raising it meanwhile (on another thread): it waits for those under way to end, and
    those that start wait for it."""
    global _exact
    with _settings:
        _settings.wait_for(lambda: not _exact and _round_trips == 0)
        _exact = True
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + more)
    try:
        yield
    finally:
        with _settings:
            sys.setrecursionlimit(limit)
            _exact = False
            _settings.notify_all()


def compiled(
    data: bytes,
    path: str,
    edit: Callable[[ast.Module], None],
    *,
    deep: bool,
    mode: str = "exec",
    flags: int = 0,
    optimize: int = -1,
) -> types.CodeType:
    """CPython's code of its own tree of the source ``data`` with ``edit`` made to it: what
    ``compile(data, path, mode, flags, optimize=optimize)`` gives, with the front end's
    edits. Where CPython cannot compile the source, this raises what that ``compile()``
    raises (``RecursionError``, ``MemoryError``, ``SyntaxError``), and nothing else stops
    what it compiles.

    ``deep`` is the front end's word that the module nests deeply enough for CPython's own
    limits to be near (``Plan.deep``). The source is then compiled first, as it is, so that
    the verdict is CPython's on the source: the round trip may hold more than the compiler
    (3.11's raised limit) or less (the conversions recurse too), and it runs on a thread
    with a deep stack (``_gotopy.on_deep_stack``), where it holds what the compiler held on
    this one. Without,
    ``compile()`` of the source is asked only when the round trip fails."""

    # gotopy's own frames, which plain Python would not have, count against no limit of
    # CPython's (3.11 and 3.12.0 to 3.12.1 compile three levels less per frame of the caller).
    own = _own_frames()

    def source_code() -> types.CodeType:
        with exact_limit(own):
            code: types.CodeType = builtins.compile(data, path, mode, flags, dont_inherit=True, optimize=optimize)
        return code

    def round_trip() -> types.CodeType:
        with tree_round_trip():
            tree = builtins.compile(data, path, mode, flags | ast.PyCF_ONLY_AST, dont_inherit=True)
            edit(tree)
            code: types.CodeType = builtins.compile(tree, path, mode, flags, dont_inherit=True, optimize=optimize)
            del tree  # freed while the collector is off
        return code

    if deep:
        # Its warnings are the round trip's to show, which its compile gives again.
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source_code()
    try:
        if not deep:
            return round_trip()
        code = _gotopy.on_deep_stack(round_trip)
        if code is None:
            # Not on this thread's stack: the conversions between CPython's tree and `ast`
            # objects recurse by a count of C calls no limit bounds (3.12 and 3.13), which a
            # small stack does not hold (CPython 3.12.9's own `ast` crashes on the main thread
            # of Windows at 2,892 levels of `elif`).
            raise RecursionError("no thread with a stack deep enough for this module's tree could be started")
        return code
    except (RecursionError, MemoryError) as error:
        if not deep:
            try:
                source_code()
            except (RecursionError, MemoryError, SyntaxError) as theirs:
                raise theirs.with_traceback(None) from None
        # The compiler takes the source, the `ast` module not its tree: CPython 3.12.0 and
        # 3.12.1 convert at most 1,500 levels (their C recursion limit, 8,000 from 3.12.2).
        version = "{}.{}.{}".format(*sys.version_info[:3])
        error.add_note(
            f"CPython {version} compiles this module's source, but its `ast` module cannot hold "
            "the module's tree, which gotopy compiles with its edits: split the deepest "
            "statement (a long `elif` chain nests one level per `elif`)"
        )
        raise


def _own_frames() -> int:
    """How many frames from the caller's out are gotopy's own: its package's modules (by
    name: a program that embeds them gives them no file, nor ``gotopy compile --python``'s
    copy) and ``runpy``'s running ``python -m gotopy``; so that ``compile()`` has the room
    it has without gotopy, in the frame that asked (``python FILE`` compiles before any
    frame)."""
    count = 0
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if not (name in ("gotopy", "runpy") or name.startswith("gotopy.")):
            break
        count += 1
        frame = frame.f_back
    return count


def apply(tree: ast.Module, plan: dict[str, Any], standalone: bool = False) -> None:
    """Makes the plan's edits to ``tree`` in place (with ``standalone``, those of a
    standalone ``.pyc`` file too: the plan's ``standalone``), or raises ``PlanMismatch``."""
    guards = {tuple(span) for span in plan["guards"]}
    trampolines: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for trampoline in plan["trampolines"]:
        trampolines.setdefault(tuple(trampoline["try_at"]), []).append(trampoline)
    placed = _Editor(guards, {tuple(span) for span in plan["negated"]}, trampolines)
    for scope in plan["scopes"]:
        for switch in scope["switches"]:
            placed.switches[tuple(switch["at"])] = switch
            for case in switch["cases"]:
                placed.cases[tuple(case["keyword"][::2])] = tuple(case["keyword"])
    if standalone:
        placed.strip = {tuple(at) for at in plan["standalone"]["statements"]}
        for line, *at in plan["standalone"]["decorators"]:
            placed.decorators.setdefault(line, set()).add(tuple(at))
    planned = len(guards) + len(placed.switches) + len(placed.cases) + len(placed.strip)
    planned += sum(map(len, trampolines.values())) + sum(map(len, placed.decorators.values()))
    # Every edit is of a statement whose lines hold the edit's first line: only the
    # statements that hold one are looked at, and only their bodies entered.
    starts = [span[0] for span in guards]
    starts += [line for line, _ in (*trampolines, *placed.strip)] + list(placed.decorators)
    starts += [line for line, _ in (*placed.switches, *placed.cases)]
    placed.visit_body(tree.body, sorted(set(starts)))
    missing = planned - len(placed.guarded) - placed.trampolines - placed.dispatches - placed.stripped
    if missing:
        raise PlanMismatch(f"{missing} of the front end's edits found no place in the tree")


def _copied(tree: Node | list[Node]) -> Any:
    """A copy of a syntax tree, a node or a list of them: what ``copy.deepcopy`` gives,
    several times faster (only nodes and lists are copied; every other value in a tree, a
    name, a number, a constant's value, is immutable). Each goto out of a ``try`` copies its
    ``finally`` body."""
    if isinstance(tree, list):
        return [_copied(item) if isinstance(item, _TREE) else item for item in tree]
    copied = tree.__class__.__new__(tree.__class__)
    fields = copied.__dict__
    for name, value in tree.__dict__.items():
        fields[name] = _copied(value) if isinstance(value, _TREE) else value
    return copied


_TREE = (ast.AST, list)


def _position(node: ast.expr | ast.stmt) -> Position:
    return (node.lineno, node.end_lineno or node.lineno, node.col_offset, node.end_col_offset or 0)


def _at(node: Node, span: Position) -> Node:
    """``node`` with every position set to ``span``."""
    line, end_line, column, end_column = span
    node.lineno, node.end_lineno = line, end_line  # type: ignore[attr-defined]
    node.col_offset, node.end_col_offset = column, end_column  # type: ignore[attr-defined]
    return node


def _name(word: str, span: Position) -> ast.expr:
    return _at(ast.Name(id=word, ctx=ast.Load()), span)


def _marker(word: str, span: Position) -> ast.stmt:
    """``word.word`` as a statement: what ``case[...]`` and a switch's two places become."""
    return _at(ast.Expr(value=_at(ast.Attribute(value=_name(word, span), attr=word, ctx=ast.Load()), span)), span)


def _value_statement(value: ast.expr, plan: dict[str, Any]) -> ast.stmt:
    """``value`` as a statement whose value CPython computes (then pops, which gotopy
    undoes), spanning the plan's subject."""
    if isinstance(value, ast.Constant):
        # An expression statement that is a constant is not compiled at all.
        value = _at(ast.BoolOp(op=ast.Or(), values=[value, _copied(value)]), _position(value))
    return _at(ast.Expr(value=value), tuple(plan["subject"]))  # type: ignore[arg-type]


def _switch(stmt: ast.While, plan: dict[str, Any]) -> ast.stmt:
    """The statement ``while switch *subject: body`` as ``while label: subject;
    switch.switch; body; break``, in place; returns the end marker to put after it."""
    subject = _value_statement(stmt.test.right, plan)  # type: ignore[attr-defined]
    stmt.test = _name("label", tuple(plan["header"]))  # type: ignore[arg-type]
    last = _position(stmt.body[-1])
    stmt.body = [
        subject,
        _marker("switch", tuple(plan["dispatch"])),  # type: ignore[arg-type]
        *stmt.body,
        _at(ast.Break(), last),
    ]
    return _marker("switch", tuple(plan["end"]))  # type: ignore[arg-type]


class _Editor:
    def __init__(
        self, guards: set[Position], negated: set[Position], trampolines: dict[tuple[int, int], list[dict[str, Any]]]
    ):
        self.guards = guards
        self.negated = negated
        self.by_try = trampolines
        self.guarded: set[Position] = set()
        self.trampolines = 0
        # Switches by where their statement starts, and the keyword span of each case by
        # where the case starts.
        self.switches: dict[tuple[int, int], dict[str, Any]] = {}
        self.cases: dict[tuple[int, int], Position] = {}
        self.dispatches = 0
        # A standalone file's: the statements to take out by where they start, and the
        # decorators to take out by their function's line and where each starts.
        self.strip: set[tuple[int, int]] = set()
        self.decorators: dict[int, set[tuple[int, int]]] = {}
        self.stripped = 0

    def visit_body(self, root: list[ast.stmt], lines: list[int]) -> None:
        """Edits the statements of ``root`` and of the bodies nested in it that hold one of
        ``lines`` (sorted), each body after the bodies nested in it (a trampoline copies a
        `finally` body already edited, a switch wraps a body whose cases are already
        markers). Iterative: an `elif` chain nests as deep as it is long."""
        order = [(root, _holding(root, lines))]
        for body, held in order:
            for at in held:
                order.extend((inner, _holding(inner, lines)) for inner in child_bodies(body[at]))
        for body, held in reversed(order):
            first = body[0] if body else None
            # Back to front: an edit inserts statements after its own only.
            for at in reversed(held):
                self.edit_statement(body, at)
            if first is not None and not body:  # all taken out: a body needs a statement
                body.append(ast.copy_location(ast.Pass(), first))

    def edit_statement(self, body: list[ast.stmt], at: int) -> None:
        """Makes the plan's edits of ``body[at]``, in place."""
        stmt = body[at]
        span = _position(stmt)
        start = (stmt.lineno, stmt.col_offset)
        if start in self.strip:
            del body[at]
            self.stripped += 1
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.lineno in self.decorators:
            dropped = self.decorators[stmt.lineno]
            kept = [d for d in stmt.decorator_list if (d.lineno, d.col_offset) not in dropped]
            self.stripped += len(stmt.decorator_list) - len(kept)
            if stmt.decorator_list and not kept:
                # The function's first line stays the first decorator's, as CPython records
                # it (`co_firstlineno`): `inspect` and the line table read as they would.
                stmt.lineno = stmt.decorator_list[0].lineno
            stmt.decorator_list = kept
        if isinstance(stmt, ast.While) and start in self.switches:
            plan = self.switches[start]
            body.insert(at + 1, _switch(stmt, plan))
            self.guarded.add(tuple(plan["header"]))  # type: ignore[arg-type]
            self.dispatches += 1
            return
        if isinstance(stmt, ast.Expr) and start in self.cases:
            body[at] = _marker("case", self.cases[start])
            self.dispatches += 1
        elif isinstance(stmt, _GUARDED) and span in self.guards:
            guard = ast.If(test=_name("label", span), body=[stmt], orelse=[])
            body[at] = _at(guard, span)
            self.guarded.add(span)
        elif isinstance(stmt, _WITH) and span in self.guards:
            # A `with` whose body may end abruptly: the body behind a guard, so that
            # CPython compiles the normal exit a goto out of it copies.
            guard = ast.If(test=_name("label", span), body=stmt.body, orelse=[])
            stmt.body = [_at(guard, span)]  # type: ignore[attr-defined]
            self.guarded.add(span)
        elif isinstance(stmt, (ast.If, ast.While)) and _position(stmt.test) in self.guards:
            # A literal test: `label`, or `not label` where it was false.
            test = _position(stmt.test)
            self.guarded.add(test)
            stmt.test = _name("label", test)
            if test in self.negated:
                stmt.test = _at(ast.UnaryOp(op=ast.Not(), operand=stmt.test), test)
        trampolines = self.by_try.get(start, [])
        if trampolines and isinstance(stmt, _TRY):
            copies = [_trampoline(stmt, t) for t in trampolines]
            body[at + 1 : at + 1] = copies
            self.trampolines += len(copies)


def _holding(body: list[ast.stmt], lines: list[int]) -> list[int]:
    """The indexes, ascending, of the statements of ``body`` whose lines hold one of
    ``lines`` (sorted): by bisecting the statements for each line, or the lines for each
    statement, whichever are fewer, so that a long body with few edits costs their number
    and an `elif` chain nested a thousand deep costs its length, not their product."""
    if not body:
        return []
    low = bisect.bisect_left(lines, body[0].lineno)
    high = bisect.bisect_right(lines, _last_line(body[-1]))
    if high - low < len(body):
        held: set[int] = set()
        for line in lines[low:high]:
            # The last statement starting by the line, and those before it on the line.
            at = bisect.bisect_right(body, line, key=_first_line) - 1
            while at >= 0 and at not in held and _last_line(body[at]) >= line:
                held.add(at)
                at -= 1
        return sorted(held)
    return [
        at
        for at, stmt in enumerate(body)
        if (index := bisect.bisect_left(lines, stmt.lineno, low, high)) < high and lines[index] <= _last_line(stmt)
    ]


def _first_line(stmt: ast.stmt) -> int:
    return stmt.lineno


def _last_line(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno


_TRY: tuple[type, ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _trampoline(stmt: ast.stmt, trampoline: dict[str, Any]) -> ast.stmt:
    """``if label: <finally body>; goto .name``, the added nodes spanning the plan's span."""
    span: Position = tuple(trampoline["span"])  # type: ignore[assignment]
    goto = _at(ast.Attribute(value=_name("goto", span), attr=trampoline["name"], ctx=ast.Load()), span)
    body = _copied(stmt.finalbody) + [_at(ast.Expr(value=goto), span)]  # type: ignore[attr-defined]
    return _at(ast.If(test=_name("label", span), body=body, orelse=[]), span)


def child_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    found = []
    for field in ("body", "orelse", "finalbody"):
        value = getattr(stmt, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            found.append(value)
    for handler in getattr(stmt, "handlers", ()):
        found.append(handler.body)
    for case in getattr(stmt, "cases", ()):
        found.append(case.body)
    return found


