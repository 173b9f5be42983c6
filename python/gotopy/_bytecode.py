"""CPython code objects as editable instruction lists, for the running interpreter.

Every opcode fact comes from the interpreter itself: numbers from ``opcode.opmap``, inline
cache sizes from ``opcode._inline_cache_entries``, which opcodes jump from ``opcode.hasjrel``,
stack effects from ``dis.stack_effect``. The few facts that differ between versions and are
not in those tables are in ``gotopy._versions``.

A ``Body`` holds ``Instr`` items and ``Label`` items: a label marks the position of the
instruction after it, jumps and exception handlers name labels, and no offset is kept.
``Body.decode`` reads a code object; ``Body.assemble`` lays it out again (relative jumps,
``EXTENDED_ARG`` prefixes until sizes settle, zeroed inline caches, the location table, the
exception table, the stack size) and checks it first: every jump lands on an instruction,
every path reaches each instruction with the same stack depth, no pop goes below zero, and a
handler never unwinds to a depth its instructions do not have. CPython checks none of this
(``code.replace`` takes anything), so this check is what stands between a rewrite and a
crashed interpreter.

The decoder, the check and the assembler are the native module's (``python/src/bytecode.rs``,
given this module's opcode tables): they work on parallel arrays, where jumps and handlers
name instructions by index. ``Body.items``, the list of ``Instr`` and ``Label`` objects the
lowering edits, is built from those arrays the first time it is asked for, and turned back
into arrays to be checked and assembled; a body nobody asked for is assembled from what the
decoder gave, without a Python object per instruction.
"""

from __future__ import annotations

import dis
import opcode
import sys
import types
from dataclasses import dataclass
from typing import Any

from gotopy import _gotopy
from gotopy import _versions

OP = {name: number for name, number in opcode.opmap.items() if number < 256}
NAME = {number: name for name, number in OP.items()}
EXTENDED_ARG = OP["EXTENDED_ARG"]


def _cache_sizes() -> list[int]:
    entries = opcode._inline_cache_entries  # type: ignore[attr-defined]
    if isinstance(entries, list):
        return [entries[op] if op < len(entries) else 0 for op in range(256)]
    return [entries.get(NAME.get(op, ""), 0) for op in range(256)]


CACHES = _cache_sizes()
JUMPS = frozenset(op for op in opcode.hasjrel if op < 256)
# Encoded backwards; END_ASYNC_FOR (3.14+) has a target but is not a jump.
BACKWARD = frozenset(
    OP[name] for name in OP if "JUMP_BACKWARD" in name or name == "END_ASYNC_FOR"
)
NOT_CONTROL = frozenset(OP[name] for name in ("END_ASYNC_FOR",) if name in OP)
UNCONDITIONAL = frozenset(
    OP[name]
    for name in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
    if name in OP
)
TERMINAL = frozenset(
    OP[name] for name in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE") if name in OP
)
_HASARG = frozenset(getattr(opcode, "hasarg", range(opcode.HAVE_ARGUMENT, 256)))


BytecodeError = _gotopy.BytecodeError


class Label:
    """A position in an instruction list: the instruction after it."""

    __slots__ = ()


@dataclass(frozen=True)
class Handler:
    """An exception-table entry: where to go, the depth to unwind to, whether to push the
    offset of the raising instruction."""

    target: Label
    depth: int
    lasti: bool

    @property
    def entry_depth(self) -> int:
        return self.depth + 1 + self.lasti


Position = tuple[int | None, int | None, int | None, int | None]


@dataclass(eq=False)
class Instr:
    op: int
    arg: int = 0
    target: Label | None = None
    handler: Handler | None = None
    position: Position = (None, None, None, None)
    # Set on what gotopy adds: an unconditional jump whose direction the layout decides.
    inserted: bool = False

    @property
    def name(self) -> str:
        return NAME[self.op]

    def like(self, op: int, arg: int = 0, target: Label | None = None) -> Instr:
        """A new instruction at this one's position and under its handler."""
        return Instr(op, arg, target, self.handler, self.position, True)


Item = Instr | Label


def stack_effect(op: int, arg: int, jump: bool) -> int:
    """``dis.stack_effect``, as fixed by ``_versions`` (the native check remembers each)."""
    effect = dis.stack_effect(op, arg if op in _HASARG else None, jump=jump)
    return _versions.stack_effect_fix(NAME[op], effect)


# What the native module is given: this interpreter's opcode facts.
OPCODE_TABLES: dict[str, Any] = dict(
    caches=CACHES,
    names=[NAME.get(op, f"<{op}>") for op in range(256)],
    jumps=sorted(JUMPS),
    backward=sorted(BACKWARD),
    not_control=sorted(NOT_CONTROL),
    unconditional=sorted(UNCONDITIONAL),
    terminal=sorted(TERMINAL),
    extended_arg=EXTENDED_ARG,
    jump_forward=OP["JUMP_FORWARD"],
    jump_backward=OP["JUMP_BACKWARD"],
    merged_location_runs=_versions.MERGED_LOCATION_RUNS,
    stack_effect=stack_effect,
)
_OPCODES = _gotopy.Opcodes(**OPCODE_TABLES)


class Body:
    """A code object's instructions (``items``) and constants (``constants``), to edit and
    assemble; ``code`` is the code object they came from."""

    def __init__(self, code: types.CodeType, decoded: _gotopy.Instructions) -> None:
        self.code = code
        self.constants: list[object] = list(code.co_consts)
        self._decoded = decoded
        self._items: list[Item] | None = None

    @classmethod
    def decode(cls, code: types.CodeType) -> Body:
        decoded = _OPCODES.decode(code.co_code, code.co_exceptiontable, code.co_linetable, code.co_firstlineno)
        return cls(code, decoded)

    @property
    def items(self) -> list[Item]:
        if self._items is None:
            self._items = _items(self._decoded)
        return self._items

    @items.setter
    def items(self, items: list[Item]) -> None:
        self._items = items

    def instrs(self) -> list[Instr]:
        return [item for item in self.items if isinstance(item, Instr)]

    def assemble(self) -> types.CodeType:
        """The edited code object, after the check."""
        code, lines, table, depth = _OPCODES.assemble(self._arrays(), self.code.co_firstlineno)
        return self.code.replace(
            co_code=code,
            co_consts=tuple(self.constants),
            co_linetable=lines,
            co_exceptiontable=table,
            co_stacksize=max(depth, self.code.co_stacksize),
        )

    def _arrays(self) -> _gotopy.Instructions:
        """The instructions as the native module takes them: as decoded, or as edited."""
        if self._items is None:
            return self._decoded
        instrs = self.instrs()
        at_label = self._label_indices()
        handlers: dict[int, int] = {}
        table: list[tuple[int, int, bool]] = []

        def index(label: Label, instr: Instr) -> int:
            found = at_label.get(id(label))
            if found is None:
                raise BytecodeError(f"{instr.name} names a label that is not placed")
            return found

        handler_of: list[int | None] = []
        for instr in instrs:
            handler = instr.handler
            if handler is None:
                handler_of.append(None)
                continue
            key = handlers.get(id(handler))
            if key is None:
                key = handlers[id(handler)] = len(table)
                table.append((index(handler.target, instr), handler.depth, handler.lasti))
            handler_of.append(key)
        return _gotopy.Instructions(
            [i.op for i in instrs],
            [i.arg for i in instrs],
            [None if i.target is None else index(i.target, i) for i in instrs],
            handler_of,
            table,
            [i.position for i in instrs],
            [i.inserted for i in instrs],
        )

    def _label_indices(self) -> dict[int, int]:
        """The index (among instructions) each placed label names, by the label's id."""
        at: dict[int, int] = {}
        count = 0
        for item in self.items:
            if isinstance(item, Label):
                at[id(item)] = count
            else:
                count += 1
        return at


def _items(decoded: _gotopy.Instructions) -> list[Item]:
    """The editable list of what the decoder gave: a label before each instruction that a
    jump or handler names."""
    ops, args, targets, handler_of, table, positions = decoded.view()
    labels: dict[int, Label] = {}
    for at in [*targets, *(entry[0] for entry in table)]:
        if at is not None and at not in labels:
            labels[at] = Label()
    handlers = [Handler(labels[at], depth, lasti) for at, depth, lasti in table]
    items: list[Item] = []
    for index, op in enumerate(ops):
        label = labels.get(index)
        if label is not None:
            items.append(label)
        target, handler = targets[index], handler_of[index]
        items.append(
            Instr(
                op,
                args[index],
                None if target is None else labels[target],
                None if handler is None else handlers[handler],
                positions[index],
            )
        )
    return items


def successors(instrs: list[Instr], index: int, at_label: dict[int, int]) -> list[int]:
    """Where control goes after instruction ``index`` (handlers not included)."""
    instr = instrs[index]
    found = []
    if instr.target is not None and instr.op not in NOT_CONTROL:
        found.append(at_label[id(instr.target)])
    if instr.op not in UNCONDITIONAL and instr.op not in TERMINAL:
        found.append(index + 1)
    return found


def depths(
    body: Body, seeds: dict[int, int] | None = None, known: list[int | None] | None = None
) -> list[int | None]:
    """The stack depth before each instruction (``None`` where unreachable), after the
    check; ``seeds`` are more entry points (instruction index: depth). With ``known``, the
    depths an earlier call gave for the same code, only what the seeds reach is added."""
    found, _ = _OPCODES.depths(body._arrays(), seeds or {}, known)
    return found


def code_objects(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in it, outermost first."""
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found.extend(code_objects(constant))
    return found


def replace_nested(
    code: types.CodeType,
    new: dict[int, types.CodeType],
    placed: list[types.CodeType] | None = None,
    along: set[int] | None = None,
) -> types.CodeType:
    """``code`` with every nested code object whose id is in ``new`` replaced, at any depth;
    ``placed`` gets each replacement as it ends up in the tree (a copy, where something
    nested in it was replaced too). ``along``, the ids of the replaced code objects and of
    every code object they are nested in, spares looking into the others."""
    if along is not None and id(code) not in along:
        return code
    replaced = id(code) in new
    if replaced:
        code = new[id(code)]
    consts = tuple(
        replace_nested(c, new, placed, along) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    if any(a is not b for a, b in zip(consts, code.co_consts)):
        code = code.replace(co_consts=consts)
    if replaced and placed is not None:
        placed.append(code)
    return code


assert sys.version_info >= (3, 11)
