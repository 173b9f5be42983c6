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
"""

from __future__ import annotations

import dis
import opcode
import sys
import types
from bisect import bisect_left
from dataclasses import dataclass, field

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


class BytecodeError(Exception):
    """A code object that cannot be decoded, or an edited one that fails the check."""


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


@dataclass(eq=False)
class Body:
    items: list[Item]
    code: types.CodeType
    constants: list[object] = field(default_factory=list)

    def instrs(self) -> list[Instr]:
        return [item for item in self.items if isinstance(item, Instr)]

    @classmethod
    def decode(cls, code: types.CodeType) -> Body:
        raw = code.co_code
        starts: list[tuple[int, int, int, int]] = []  # start, op position, arg, end
        extended = 0
        start = None
        at = 0
        while at < len(raw):
            op, arg = raw[at], raw[at + 1] | extended << 8
            if start is None:
                start = at
            if op == EXTENDED_ARG:
                extended = arg
                at += 2
                continue
            end = at + 2 + 2 * CACHES[op]
            starts.append((start, at, arg, end))
            extended, start = 0, None
            at = end
        if start is not None or at != len(raw):
            raise BytecodeError("the code ends inside an instruction")
        positions = list(code.co_positions())
        labels: dict[int, Label] = {}
        instrs: list[Instr] = []
        for _, at, arg, end in starts:
            op = raw[at]
            instr = Instr(op, arg, position=positions[at // 2])
            if op in JUMPS:
                distance = -arg if op in BACKWARD else arg
                instr.target = labels.setdefault(end + 2 * distance, Label())
            instrs.append(instr)
        offsets = [start for start, _, _, _ in starts]
        for entry in _versions.exception_entries(code.co_exceptiontable):
            begin, end, target, depth, lasti = entry
            handler = Handler(labels.setdefault(target, Label()), depth, lasti)
            # The instructions that start in [begin, end): a run, found by bisection (a
            # switch's search alternates handlers, so the table can be as long as the code).
            for instr in instrs[bisect_left(offsets, begin) : bisect_left(offsets, end)]:
                instr.handler = handler
        items: list[Item] = []
        missing = set(labels) - set(offsets)
        if missing:
            raise BytecodeError(f"a jump or handler lands inside an instruction at {min(missing)}")
        for instr, (start, _, _, _) in zip(instrs, starts):
            if start in labels:
                items.append(labels[start])
            items.append(instr)
        return cls(items, code, list(code.co_consts))

    def assemble(self) -> types.CodeType:
        """The edited code object, after the check."""
        instrs = self.instrs()
        if not instrs:
            raise BytecodeError("no instructions")
        at_label = self._label_indices()
        depth = max(d for d in _check_depths(instrs, at_label) if d is not None)
        sizes = [1 + _prefixes(i.arg) + CACHES[i.op] for i in instrs]
        while True:
            starts = [0]
            for size in sizes:
                starts.append(starts[-1] + size)
            changed = False
            for index, instr in enumerate(instrs):
                if instr.target is None:
                    continue
                destination = starts[at_label[id(instr.target)]]
                if instr.inserted and instr.op in UNCONDITIONAL:
                    backward = destination < starts[index + 1]
                    wanted = OP["JUMP_BACKWARD" if backward else "JUMP_FORWARD"]
                    if wanted != instr.op:
                        instr.op = wanted
                        changed = True
                end = starts[index + 1]
                distance = destination - end
                if instr.op in BACKWARD:
                    distance = -distance
                if distance < 0:
                    raise BytecodeError(f"{instr.name} cannot reach its target in its direction")
                instr.arg = distance
                size = 1 + _prefixes(instr.arg) + CACHES[instr.op]
                if size != sizes[index]:
                    sizes[index] = size
                    changed = True
            if not changed:
                break
        code = bytearray()
        for instr, size in zip(instrs, sizes):
            prefixes = size - 1 - CACHES[instr.op]
            for shift in range(prefixes, 0, -1):
                code += bytes((EXTENDED_ARG, (instr.arg >> (8 * shift)) & 0xFF))
            code += bytes((instr.op, instr.arg & 0xFF))
            code += bytes(2 * CACHES[instr.op])
        label_starts = {key: starts[index] for key, index in at_label.items()}
        table = _versions.encode_exceptions(
            [
                (starts[i], starts[i + 1], label_starts[id(h.target)], h.depth, h.lasti)
                for i, instr in enumerate(instrs)
                if (h := instr.handler) is not None
            ]
        )
        lines = _versions.encode_locations(
            [(instr.position, size) for instr, size in zip(instrs, sizes)],
            self.code.co_firstlineno,
        )
        return self.code.replace(
            co_code=bytes(code),
            co_consts=tuple(self.constants),
            co_linetable=lines,
            co_exceptiontable=table,
            co_stacksize=max(depth, self.code.co_stacksize),
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


def _prefixes(arg: int) -> int:
    return 0 if arg < 1 << 8 else 1 if arg < 1 << 16 else 2 if arg < 1 << 24 else 3


_EFFECTS: dict[tuple[int, int, bool], int] = {}


def stack_effect(op: int, arg: int, jump: bool) -> int:
    """``dis.stack_effect``, as fixed by ``_versions``; remembered, since the depth analysis
    asks for the same few instructions again and again."""
    key = (op, arg, jump)
    effect = _EFFECTS.get(key)
    if effect is None:
        effect = dis.stack_effect(op, arg if op in _HASARG else None, jump=jump)
        effect = _EFFECTS[key] = _versions.stack_effect_fix(NAME[op], effect)
    return effect


def successors(instrs: list[Instr], index: int, at_label: dict[int, int]) -> list[tuple[int, int]]:
    """Where control goes after instruction ``index``, with the stack effect of each edge
    (handlers not included)."""
    instr = instrs[index]
    edges = []
    if instr.target is not None and instr.op not in NOT_CONTROL:
        edges.append((at_label[id(instr.target)], stack_effect(instr.op, instr.arg, True)))
    if instr.op not in UNCONDITIONAL and instr.op not in TERMINAL:
        edges.append((index + 1, stack_effect(instr.op, instr.arg, False)))
    return edges


def depths(
    body: Body, seeds: dict[int, int] | None = None, known: list[int | None] | None = None
) -> list[int | None]:
    """The stack depth before each instruction (``None`` where unreachable), after the
    check; ``seeds`` are more entry points (instruction index: depth). With ``known``, the
    depths an earlier call gave for the same code, only what the seeds reach is added."""
    return _check_depths(body.instrs(), body._label_indices(), seeds, known)[:-1]


def _check_depths(
    instrs: list[Instr],
    at_label: dict[int, int],
    seeds: dict[int, int] | None = None,
    known: list[int | None] | None = None,
) -> list[int | None]:
    """The stack depth before each instruction, the same along every edge, and last the
    greatest depth reached."""
    for instr in instrs:
        for label in (instr.target, instr.handler and instr.handler.target):
            if label is not None and id(label) not in at_label:
                raise BytecodeError(f"{instr.name} names a label that is not placed")
            if label is not None and at_label[id(label)] >= len(instrs):
                raise BytecodeError(f"{instr.name} names a label after the last instruction")
    depths: list[int | None]
    if known is None:
        depths = [None] * len(instrs)
        depths[0] = 0
        work = [0]
    else:
        depths, work = list(known), []
    for index, depth in (seeds or {}).items():
        if depths[index] is None:
            depths[index] = depth
            work.append(index)
    highest = max((d for d in depths if d is not None), default=0)

    def reach(index: int, depth: int, source: Instr) -> None:
        if index >= len(instrs):
            raise BytecodeError(f"{source.name} falls off the end of the code")
        if depth < 0:
            raise BytecodeError(f"{source.name} pops below the bottom of the stack")
        if depths[index] is None:
            depths[index] = depth
            work.append(index)
        elif depths[index] != depth:
            raise BytecodeError(
                f"{instrs[index].name} is reached with stack depths {depths[index]} and {depth}"
            )

    while work:
        index = work.pop()
        instr = instrs[index]
        reached = depths[index]
        assert reached is not None
        depth = reached
        highest = max(highest, depth)
        if instr.handler is not None:
            if instr.handler.depth > depth:
                if instr.inserted:
                    raise BytecodeError(f"{instr.name} is under a handler deeper than its stack")
            else:
                reach(at_label[id(instr.handler.target)], instr.handler.entry_depth, instr)
        for to, effect in successors(instrs, index, at_label):
            highest = max(highest, depth + max(effect, 0))
            reach(to, depth + effect, instr)
    return [*depths, highest]


def code_objects(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in it, outermost first."""
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found.extend(code_objects(constant))
    return found


def replace_nested(
    code: types.CodeType, new: dict[int, types.CodeType], placed: list[types.CodeType] | None = None
) -> types.CodeType:
    """``code`` with every nested code object whose id is in ``new`` replaced, at any depth;
    ``placed`` gets each replacement as it ends up in the tree (a copy, where something
    nested in it was replaced too)."""
    replaced = id(code) in new
    if replaced:
        code = new[id(code)]
    consts = tuple(
        replace_nested(c, new, placed) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    if any(a is not b for a, b in zip(consts, code.co_consts)):
        code = code.replace(co_consts=consts)
    if replaced and placed is not None:
        placed.append(code)
    return code


assert sys.version_info >= (3, 11)
