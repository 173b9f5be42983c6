"""The ``gotopy`` binary's stand-in for the package's native module ``gotopy._gotopy``, for
``gotopy compile --python``: the package's own Python code runs in the named interpreter,
where gotopy need not be installed, and asks the binary (``GOTOPY_BIN``) for what the
native module would give, through its hidden ``plan`` command; and, in Python, the bytecode layer's native half
(``python/src/bytecode.rs``): the same decoder, check and assembler over the same arrays,
with the same messages, which ``python/tests/test_run.py`` (class ``StandIn``) holds equal
to the native ones over the standard library.
"""

from __future__ import annotations

import bisect
import io
import os
import subprocess
import tokenize
from collections.abc import Callable
from typing import Any


def plan(
    path: str, data: bytes, *, all_scopes: bool = False, color: bool = False, scope_line: int | None = None
) -> str:
    """The front end's plan as JSON, from the binary; ``ValueError`` when it refuses the
    bytes (an encoding it cannot decode)."""
    command = [os.environ["GOTOPY_BIN"], "--color", "always" if color else "never", "plan", path]
    if all_scopes:
        command.append("--all-scopes")
    if scope_line is not None:
        command += ["--scope-line", str(scope_line)]
    return _ask(command, data)


def late_error(
    path: str,
    data: bytes,
    *,
    internal: bool,
    message: str,
    help: str,
    span: tuple[int, int, int, int],
    color: bool = False,
) -> str:
    """The report of an error in the code CPython compiled from the plan, from the binary."""
    command = [os.environ["GOTOPY_BIN"], "--color", "always" if color else "never", "late-error", path]
    command += ["--message", message, "--instead", help, "--span", *map(str, span)]
    if internal:
        command.append("--internal")
    return _ask(command, data)


def _ask(command: list[str], data: bytes) -> str:
    run = subprocess.run(command, input=data, capture_output=True, check=False)
    if run.returncode != 0:
        raise ValueError(run.stderr.decode("utf-8", "replace").strip())
    return run.stdout.decode("utf-8")


def decode_source(data: bytes) -> str:
    """The source as CPython decodes it, for the text of a ``SyntaxError``."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise ValueError(str(error)) from None


class BytecodeError(Exception):
    """A code object that cannot be decoded, or an edited one that fails the check."""


Position = tuple[int | None, int | None, int | None, int | None]
_NO_POSITION: Position = (None, None, None, None)


class Instructions:
    """A decoded (or edited) code object's instructions, as parallel arrays; jump targets
    and handlers name instructions by index."""

    def __init__(
        self,
        ops: list[int],
        args: list[int],
        targets: list[int | None],
        handler_of: list[int | None],
        handlers: list[tuple[int, int, bool]],
        positions: list[Position],
        inserted: list[bool],
    ) -> None:
        if any(len(column) != len(ops) for column in (args, targets, handler_of, positions, inserted)):
            raise BytecodeError("the instruction arrays differ in length")
        if any(h is not None and h >= len(handlers) for h in handler_of):
            raise BytecodeError("an instruction names no handler entry")
        self.ops, self.args, self.targets = list(ops), list(args), list(targets)
        self.handler_of, self.handlers = list(handler_of), list(handlers)
        self.positions, self.inserted = list(positions), list(inserted)

    def view(
        self,
    ) -> tuple[bytes, list[int], list[int | None], list[int | None], list[tuple[int, int, bool]], list[Position]]:
        """``(ops, args, targets, handler_of, handlers, positions)``, ``ops`` as bytes (as
        PyO3 gives a ``Vec<u8>``)."""
        return (
            bytes(self.ops),
            list(self.args),
            list(self.targets),
            list(self.handler_of),
            list(self.handlers),
            list(self.positions),
        )


def _prefixes(arg: int) -> int:
    return 0 if arg < 1 << 8 else 1 if arg < 1 << 16 else 2 if arg < 1 << 24 else 3


class Opcodes:
    """The running interpreter's opcode facts, and the decoder, check and assembler."""

    def __init__(
        self,
        *,
        caches: list[int],
        names: list[str],
        jumps: list[int],
        backward: list[int],
        not_control: list[int],
        unconditional: list[int],
        terminal: list[int],
        extended_arg: int,
        jump_forward: int,
        jump_backward: int,
        merged_location_runs: bool,
        stack_effect: Callable[[int, int, bool], int],
    ) -> None:
        self.caches, self.names = list(caches), list(names)
        self.jumps, self.backward = frozenset(jumps), frozenset(backward)
        self.not_control, self.unconditional = frozenset(not_control), frozenset(unconditional)
        self.terminal = frozenset(terminal)
        self.extended_arg, self.jump_forward, self.jump_backward = extended_arg, jump_forward, jump_backward
        self.merged_location_runs = merged_location_runs
        self.stack_effect = stack_effect
        self.effects: dict[tuple[int, int, bool], int] = {}

    def decode(self, code: bytes, exceptions: bytes, locations: bytes, first_line: int) -> Instructions:
        if len(code) % 2:
            raise BytecodeError("the code ends inside an instruction")
        units = len(code) // 2
        starts: list[tuple[int, int, int, int]] = []  # first unit, op unit, arg, end unit
        extended, start, at = 0, None, 0
        while at < units:
            op, arg = code[2 * at], code[2 * at + 1] | (extended << 8 & 0xFFFFFFFF)
            if start is None:
                start = at
            if op == self.extended_arg:
                extended = arg
                at += 1
                continue
            end = at + 1 + self.caches[op]
            starts.append((start, at, arg, end))
            extended, start, at = 0, None, end
        if start is not None or at != units:
            raise BytecodeError("the code ends inside an instruction")
        index_at = {first: index for index, (first, _, _, _) in enumerate(starts)}

        def instruction_at(unit: int) -> int:
            if unit not in index_at:
                raise BytecodeError(f"a jump or handler lands inside an instruction at {2 * unit}")
            return index_at[unit]

        positions = _decode_locations(locations, first_line, units)
        ops, args, targets, found = [], [], [], []
        for _, op_at, arg, end in starts:
            op = code[2 * op_at]
            target = None
            if op in self.jumps:
                target = instruction_at(end - arg if op in self.backward else end + arg)
            ops.append(op)
            args.append(arg)
            targets.append(target)
            found.append(positions[op_at])
        handler_of: list[int | None] = [None] * len(starts)
        handlers: list[tuple[int, int, bool]] = []
        firsts = [first for first, _, _, _ in starts]
        read = _Varints(exceptions)
        while read.at < len(exceptions):
            begin, length, target, packed = (read.big_endian() for _ in range(4))
            handlers.append((instruction_at(target), packed >> 1, bool(packed & 1)))
            for index in range(bisect.bisect_left(firsts, begin), bisect.bisect_left(firsts, begin + length)):
                handler_of[index] = len(handlers) - 1
        return Instructions(ops, args, targets, handler_of, handlers, found, [False] * len(ops))

    def depths(
        self, instructions: Instructions, seeds: dict[int, int] | None = None, known: list[int | None] | None = None
    ) -> tuple[list[int | None], int]:
        code = instructions
        count = len(code.ops)
        for index in range(count):
            handler = code.handler_of[index]
            for target in (code.targets[index], None if handler is None else code.handlers[handler][0]):
                if target is not None and target >= count:
                    raise BytecodeError(f"{self.names[code.ops[index]]} names a label after the last instruction")
        work: list[int] = []
        if known is None:
            depths: list[int | None] = [None] * count
            if count:
                depths[0] = 0
                work.append(0)
        elif len(known) == count:
            depths = list(known)
        else:
            raise BytecodeError("the known depths are for other code")
        for index, seeded in sorted((seeds or {}).items()):
            if index < count and depths[index] is None:
                depths[index] = seeded
                work.append(index)
        highest = max((d for d in depths if d is not None), default=0)

        def reach(to: int, depth: int, source: int) -> None:
            name = self.names[code.ops[source]]
            if to >= count:
                raise BytecodeError(f"{name} falls off the end of the code")
            if depth < 0:
                raise BytecodeError(f"{name} pops below the bottom of the stack")
            earlier = depths[to]
            if earlier is None:
                depths[to] = depth
                work.append(to)
            elif earlier != depth:
                raise BytecodeError(
                    f"{self.names[code.ops[to]]} is reached with stack depths {earlier} and {depth}"
                )

        while work:
            index = work.pop()
            depth = depths[index]
            assert depth is not None
            highest = max(highest, depth)
            handler = code.handler_of[index]
            if handler is not None:
                target, handler_depth, lasti = code.handlers[handler]
                if handler_depth > depth:
                    if code.inserted[index]:
                        name = self.names[code.ops[index]]
                        raise BytecodeError(f"{name} is under a handler deeper than its stack")
                else:
                    reach(target, handler_depth + 1 + lasti, index)
            for to, effect in self._successors(code, index):
                highest = max(highest, depth + max(effect, 0))
                reach(to, depth + effect, index)
        return depths, highest

    def _effect(self, op: int, arg: int, jump: bool) -> int:
        key = (op, arg, jump)
        if key not in self.effects:
            self.effects[key] = self.stack_effect(op, arg, jump)
        return self.effects[key]

    def _successors(self, code: Instructions, index: int) -> list[tuple[int, int]]:
        op, arg, target = code.ops[index], code.args[index], code.targets[index]
        edges = []
        if target is not None and op not in self.not_control:
            edges.append((target, self._effect(op, arg, True)))
        if op not in self.unconditional and op not in self.terminal:
            edges.append((index + 1, self._effect(op, arg, False)))
        return edges

    def assemble(self, instructions: Instructions, first_line: int) -> tuple[bytes, bytes, bytes, int]:
        code = instructions
        count = len(code.ops)
        if not count:
            raise BytecodeError("no instructions")
        _, highest = self.depths(code)
        ops, args = list(code.ops), list(code.args)
        sizes = [1 + _prefixes(arg) + self.caches[op] for op, arg in zip(ops, args)]
        while True:
            starts = [0]
            for size in sizes:
                starts.append(starts[-1] + size)
            changed = False
            for index, target in enumerate(code.targets):
                if target is None:
                    continue
                destination, end = starts[target], starts[index + 1]
                if code.inserted[index] and ops[index] in self.unconditional:
                    wanted = self.jump_backward if destination < end else self.jump_forward
                    if wanted != ops[index]:
                        ops[index] = wanted
                        changed = True
                distance = destination - end
                if ops[index] in self.backward:
                    distance = -distance
                if distance < 0:
                    raise BytecodeError(f"{self.names[ops[index]]} cannot reach its target in its direction")
                args[index] = distance
                size = 1 + _prefixes(distance) + self.caches[ops[index]]
                if size != sizes[index]:
                    sizes[index] = size
                    changed = True
            if not changed:
                break
        out = bytearray()
        for op, arg, size in zip(ops, args, sizes):
            for shift in range(size - 1 - self.caches[op], 0, -1):
                out += bytes((self.extended_arg, arg >> (8 * shift) & 0xFF))
            out += bytes((op, arg & 0xFF))
            out += bytes(2 * self.caches[op])
        return bytes(out), self._locations(code, sizes, first_line), self._exceptions(code, starts), highest

    def _exceptions(self, code: Instructions, starts: list[int]) -> bytes:
        merged: list[list[int]] = []  # start, end, target, depth, lasti
        for index, handler in enumerate(code.handler_of):
            if handler is None:
                continue
            to, unwind, pushes_lasti = code.handlers[handler]
            entry = [starts[index], starts[index + 1], starts[to], unwind, int(pushes_lasti)]
            if merged and merged[-1][1] == entry[0] and merged[-1][2:] == entry[2:]:
                merged[-1][1] = entry[1]
            else:
                merged.append(entry)
        out = bytearray()
        for start, end, target, depth, lasti in merged:
            for value, first in ((start, 128), (end - start, 0), (target, 0), (depth << 1 | lasti, 0)):
                groups = []
                while True:
                    groups.append(value & 63)
                    value >>= 6
                    if not value:
                        break
                for number, group in enumerate(reversed(groups)):
                    more = 64 if number < len(groups) - 1 else 0
                    out.append(group | more | (first if number == 0 else 0))
        return bytes(out)

    def _locations(self, code: Instructions, sizes: list[int], first_line: int) -> bytes:
        runs: list[list[Any]] = []
        for position, units in zip(code.positions, sizes):
            if runs and self.merged_location_runs and runs[-1][0] == position:
                runs[-1][1] += units
            else:
                runs.append([position, units])
        out = bytearray()
        line = first_line
        for position, units in runs:
            while units:
                size = min(units, 8)
                units -= size
                line = _location_entry(out, position, size, line)
        return bytes(out)


def _location_entry(out: bytearray, position: Position, size: int, line: int) -> int:
    start, end_line, column, end_column = position
    head = 128 | (size - 1)
    if start is None:
        out.append(head | 15 << 3)
        return line
    delta = start - line
    if column is None or end_column is None:
        if end_line in (start, None):
            out.append(head | 13 << 3)
            _write_signed(out, delta)
            return start
    elif end_line == start:
        if delta == 0 and column < 80 and 0 <= end_column - column < 16:
            out += bytes((head | (column // 8) << 3, (column % 8) << 4 | (end_column - column)))
            return start
        if 0 <= delta < 3 and column < 128 and end_column < 128:
            out += bytes((head | (10 + delta) << 3, column, end_column))
            return start
    lines = (end_line if end_line is not None else start) - start
    if lines < 0:
        raise BytecodeError("a position ends on a line before it starts")
    out.append(head | 14 << 3)
    _write_signed(out, delta)
    for value in (lines, column + 1 if column is not None else 0, end_column + 1 if end_column is not None else 0):
        _write(out, value)
    return start


def _write(out: bytearray, value: int) -> None:
    while value >= 64:
        out.append(64 | value & 63)
        value >>= 6
    out.append(value)


def _write_signed(out: bytearray, value: int) -> None:
    _write(out, (-value) << 1 | 1 if value < 0 else value << 1)


class _Varints:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise BytecodeError("a table of the code object ends inside an entry")
        self.at += 1
        return self.data[self.at - 1]

    def big_endian(self) -> int:
        byte = self.byte()
        value = byte & 63
        while byte & 64:
            byte = self.byte()
            value = value << 6 | byte & 63
        return value

    def little_endian(self) -> int:
        byte = self.byte()
        value, shift = byte & 63, 0
        while byte & 64:
            byte = self.byte()
            shift += 6
            if shift > 30:
                raise BytecodeError("a location table entry holds a number too large")
            value |= (byte & 63) << shift
        return value

    def column(self) -> int | None:
        """A column of the long form: 0 for ``None``, else one more than the column."""
        value = self.little_endian()
        return None if value == 0 else _in_range(value - 1)

    def signed(self) -> int:
        value = self.little_endian()
        return -(value >> 1) if value & 1 else value >> 1


def _in_range(value: int) -> int:
    """A line or column that ``co_positions()`` can give (``None`` has forms of its own)."""
    if not 0 <= value < 1 << 31:
        raise BytecodeError("a position out of range")
    return value


def _decode_locations(table: bytes, first_line: int, units: int) -> list[Position]:
    positions: list[Position] = []
    read = _Varints(table)
    line = first_line
    while read.at < len(table) and len(positions) < units:
        head = read.byte()
        if not head & 128:
            raise BytecodeError("the location table is out of step")
        code, size = head >> 3 & 15, (head & 7) + 1
        position: Position
        if code == 15:
            position = _NO_POSITION
        elif code == 14:
            line += read.signed()
            end_line = line + read.little_endian()
            start, end = read.column(), read.column()
            position = (_in_range(line), _in_range(end_line), start, end)
        elif code == 13:
            line += read.signed()
            position = (_in_range(line), line, None, None)
        elif code >= 10:
            line += code - 10
            column = read.byte()
            position = (_in_range(line), line, column, read.byte())
        else:
            second = read.byte()
            column = code << 3 | second >> 4
            position = (_in_range(line), line, column, column + (second & 15))
        positions.extend([position] * size)
    if len(positions) < units:
        raise BytecodeError("the location table is shorter than the code")
    return positions[:units]
