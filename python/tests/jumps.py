"""Assigns ``frame.f_lineno`` (a debugger's ``jump``) from every line event to every line
and reports what each jump did: ``python jumps.py FILE OUT [all]``.

FILE runs as ``python -m gotopy run FILE`` runs it, under a tracer. The first time a frame
of a code object gotopy rewrote (its bytes differ from CPython's own compile of the file;
with ``all``, any code object of FILE) reports a line event on a line, the tracer forks once
for each line of that code object (lines of one kind, whose text differs only in its
numbers, stand for each other past the first few: see ``KIND_KEPT``): the child assigns the
line to ``f_lineno`` and, if CPython accepts the jump, runs on until the frame returns or
yields (1 s at most, its output thrown away), while the parent waits and then goes on
untouched. OUT gets one JSON object per attempt: ``{"code", "first", "generator", "from",
"to", "outcome"}`` (``first`` the code's first line, ``generator`` whether it is a generator
or coroutine), the outcome ``jumped`` (the frame ran on and returned, yielded, raised or ran
its 200 lines), ``refused`` (``ValueError``), ``timeout``, ``system-error`` (a
``SystemError`` in the frame after the jump) or ``signal NAME`` (the interpreter died).
"""

from __future__ import annotations

import collections
import inspect
import json
import linecache
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import Any

from gotopy import _cli

REFUSED, SYSTEM_ERROR = 3, 4
# How many lines a child runs after its jump before it counts as having jumped well: a
# jump the interpreter took wrongly breaks it within the next few instructions, while the
# program, left to finish, can run long loops (the eleven nested ones) for every jump.
LINES_AFTER = 200
# How many lines of one kind (the same text at the same indentation but for its numbers:
# `label .line_07`, `out.append(7)`) a code object's jumps go from and to. Such lines
# compile to the same instructions but for their constants, under the same blocks when
# they follow each other, so CPython decides a jump to or from any of them as it does for
# the first ones; generated code repeats a kind many times, and every pair is a fork (a
# few milliseconds each: the 61 numbered lines of one fixture were 20,000 of them).
KIND_KEPT = 6
Tracer = Callable[[FrameType, str, Any], Any]


GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def main() -> int:
    fixture, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(fixture, "rb") as file:
        plain = {identity(code) for code in codes(compile(file.read(), fixture, "exec"))}
    every_code = sys.argv[3:] == ["all"]
    seen: set[tuple[object, int]] = set()
    results: list[dict[str, object]] = []
    # Set in a child: the frames traced before the fork keep this tracer, and a child that
    # explored too would fork grandchildren, which outlive its timer and never end.
    in_child = False

    def calls(frame: FrameType, event: str, arg: object) -> Tracer | None:
        code = frame.f_code
        explored = every_code or identity(code) not in plain
        return lines if code.co_filename == fixture and explored else None

    def lines(frame: FrameType, event: str, arg: object) -> Tracer | None:
        if in_child:
            return None
        if event == "line" and (frame.f_code, frame.f_lineno) not in seen:
            seen.add((frame.f_code, frame.f_lineno))
            if frame.f_lineno in kept(frame.f_code):
                return explore(frame)
        return lines

    kept_of: dict[CodeType, list[int]] = {}

    def kept(code: CodeType) -> list[int]:
        """The lines of ``code`` its jumps go from and to, in order."""
        if code not in kept_of:
            kinds: collections.Counter[str] = collections.Counter()
            kept_of[code] = []
            for line in sorted({line for _, _, line in code.co_lines() if line is not None}):
                kind = re.sub(r"[0-9]+", "#", linecache.getline(fixture, line).rstrip())
                kinds[kind] += 1
                if kinds[kind] <= KIND_KEPT:
                    kept_of[code].append(line)
        return kept_of[code]

    def explore(frame: FrameType) -> Tracer | None:
        origin = frame.f_lineno
        code = frame.f_code
        for target in kept(code):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                return jump(frame, target)
            _, status = os.waitpid(pid, 0)
            results.append(
                {
                    "code": code.co_qualname,
                    "first": code.co_firstlineno,
                    "generator": bool(code.co_flags & GENERATOR_FLAGS),
                    "from": origin,
                    "to": target,
                    "outcome": outcome(status),
                }
            )
        return lines

    def jump(frame: FrameType, target: int) -> Tracer | None:
        """In the child: jump, then run until the frame is done."""
        nonlocal in_child
        in_child = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        sys.settrace(lambda *_: None)
        try:
            frame.f_lineno = target
        except ValueError:
            os._exit(REFUSED)
        budget = LINES_AFTER

        def until_done(frame: FrameType, event: str, arg: Any) -> Tracer | None:
            nonlocal budget
            if event == "exception" and issubclass(arg[0], SystemError):
                os._exit(SYSTEM_ERROR)
            budget -= event == "line"
            if event == "return" or budget < 0:
                os._exit(0)
            return until_done

        return until_done

    sys.settrace(calls)
    try:
        _cli.main(["run", fixture])
    except SystemExit:
        pass
    finally:
        sys.settrace(None)
    with open(out, "w", encoding="utf-8") as file:
        for result in results:
            file.write(json.dumps(result) + "\n")
    return 0


def identity(code: CodeType) -> tuple[str, int, bytes]:
    """What tells a code object from the others of its file, and whether gotopy rewrote
    it: its qualified name, first line and bytecode."""
    return code.co_qualname, code.co_firstlineno, code.co_code


def codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and every code object nested in it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from codes(const)


def outcome(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code == -signal.SIGALRM:
        return "timeout"
    if code < 0:
        return f"signal {signal.Signals(-code).name}"
    return {0: "jumped", REFUSED: "refused", SYSTEM_ERROR: "system-error"}.get(code, f"exit {code}")


if __name__ == "__main__":
    sys.exit(main())
