"""``gotopy._gotopy`` for ``gotopy compile --python INTERPRETER``, where the package's
native module is not installed: the binary runs the package's own driver
(``python -m gotopy compile``'s modules) in that interpreter, with this module in the native
module's place. Each function the driver calls is answered by the binary, which runs
as a helper (``gotopy __native``, started once per process on first use, one JSON object a
line each way) with the same Rust code as the native module; what crosses is bytes in
hexadecimal, the plan, and the code objects the binary lowers or looks into, with their
constants as ``gotopy::cpython::code::Constant`` tells them apart.

Only what the package's ``compile`` uses is here; the binary writes the first lines of
this file (``VERSION``, ``REPORT``, ``NATIVE``).
"""

import json
import os
import subprocess
import sys
import threading
import types


class GotoSyntaxError(SyntaxError):
    """A module gotopy rejects: its first error, with the ``report`` of all of them (what the
    driver reads of the native module's exception)."""


def _syntax_error(path, rejection):
    """The exception of ``gotopy::cpython::plan::Rejection``, as the native module makes it."""
    if not rejection["errors"]:
        return SyntaxError(rejection["report"].strip(), (path, 1, 1, None))
    first = rejection["errors"][0]
    where = (path, first["line"], first["column"], first["text"], first["end_line"], first["end_column"])
    error = GotoSyntaxError(f"{first['code']}: {first['message']}", where)
    error.code, error.report = first["code"], rejection["report"]
    return error


def frameless(function, importing=False):  # noqa: ARG001 - the native module's signature
    """The native module raises its errors without the frames below the caller's; no such
    frames matter here, where only the driver calls."""
    return function


def on_deep_stack(work):
    """``work()`` on a thread with the native module's deep stack. Only the driver's
    process compiles here, one file at a time, so setting the process's stack size for
    the thread and back is safe."""
    done = []

    def run():
        try:
            done.append((work(), None))
        except BaseException as error:  # noqa: BLE001 - raised again on the caller's thread
            done.append((None, error))

    previous = threading.stack_size(255 << 20)  # the native module's `DEEP_STACK`
    try:
        thread = threading.Thread(target=run, name="gotopy-tree")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    code, error = done[0]
    if error is not None:
        raise error.with_traceback(None)
    return code


class _Helper:
    """The binary answering this process (a forked worker starts its own)."""

    def __init__(self):
        self.owner = os.getpid()
        self.process = subprocess.Popen(
            [NATIVE, "__native", "{}.{}".format(*sys.version_info)],  # noqa: F821 - written above
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.dropped = []

    def ask(self, request):
        if self.dropped:
            request["drop"], self.dropped = self.dropped, []
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the gotopy binary stopped answering")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        if "rejected" in answer:
            raise _syntax_error(answer["path"], answer["rejected"])
        if "value_error" in answer:
            raise ValueError(answer["value_error"])
        return answer


_helper = None


def _ask(request):
    global _helper
    if _helper is None or _helper.owner != os.getpid():
        _helper = _Helper()
    return _helper.ask(request)


def asks_all_scopes(data):
    return _ask({"asks_all_scopes": data.hex()})["asks"]


class Plan:
    """A module the front end accepted, and its plan, which the helper holds by ``id``."""

    def __init__(self, answer):
        self.__dict__.update(answer)

    def __del__(self):
        if _helper is not None and _helper.owner == os.getpid():
            _helper.dropped.append(self.id)

    def lower(self, module):
        found = _tree_of(module)
        scopes = {scope["qualname"] for scope in json.loads(self.json)["scopes"]}
        answer = _ask({"lower": {
            "plan": self.id,
            "nodes": [[parent, code.co_qualname] for code, parent in found],
            "codes": {index: _described(code) for index, (code, _) in enumerate(found) if code.co_qualname in scopes},
        }})
        return _rebuilt(found, {index: new for index, new in answer["lowered"]})

    def late_error(self, message, span, help=None):  # noqa: A002 - the native module's name
        try:
            _ask({"late_error": {"plan": self.id, "message": message, "span": span, "help": help}})
        except GotoSyntaxError as error:
            return error
        raise RuntimeError("the gotopy binary did not reject a late error")


def plan(path, data, *, all_scopes=False, color=False, scope_line=None):
    request = {"path": path, "data": data.hex(), "all_scopes": all_scopes, "color": color, "scope_line": scope_line}
    return Plan(_ask({"plan": request})["plan"])


def still_needed(module, names):
    """The first load, in a code object of ``module``, of one of ``names``: ``(message,
    position, help)``, or ``None``. Only code objects that name one are sent."""
    wanted = set(names)
    codes = [
        _described(code)
        for code, _ in _tree_of(module)
        if wanted & {*code.co_names, *code.co_varnames, *code.co_cellvars, *code.co_freevars}
    ]
    if not codes:
        return None
    found = _ask({"still_needed": {"codes": codes, "names": names}})["found"]
    if found is None:
        return None
    message, position, help = found  # noqa: A001 - the native module's name
    return message, tuple(part if part >= 0 else None for part in position), help


def _tree_of(module):
    """The module's code objects in pre-order, each with the index of its parent."""
    found = []
    work = [(module, None)]
    while work:
        code, parent = work.pop()
        index = len(found)
        found.append((code, parent))
        nested = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        work.extend((c, index) for c in reversed(nested))
    return found


def _constant(value):
    """A constant as ``gotopy::cpython::code::Constant`` serializes it."""
    kind = type(value)
    if value is None:
        return "none"
    if kind is int:
        return {"int": format(value, "x")}
    if kind is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "other"
        return {"str": value}
    if kind is bytes:
        return {"bytes": list(value)}
    return "other"


def _python_constant(value):
    """A constant the binary added, as a Python object."""
    if value in ("none", "other"):
        return None
    ((kind, inner),) = value.items()
    if kind == "int":
        return int(inner, 16)
    if kind == "bytes":
        return bytes(inner)
    if kind == "tuple":
        return tuple(_python_constant(item) for item in inner)
    if kind == "search_function":
        # The search function of computed gotos in many frames: its code, compiled here.
        file, name = SEARCH  # noqa: F821 - written above
        module = compile(inner, file, "exec", dont_inherit=True)
        return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name)
    return inner  # "str", "bool"


_DESCRIBED = (
    "co_qualname", "co_firstlineno", "co_names", "co_varnames", "co_cellvars", "co_freevars",
    "co_flags", "co_argcount", "co_kwonlyargcount", "co_stacksize",
)


def _described(code):
    """A code object as the binary reads it (``Described`` in src/cli/cpython.rs)."""
    described = {name: getattr(code, name) for name in _DESCRIBED}
    for name in ("co_code", "co_exceptiontable", "co_linetable"):
        described[name] = getattr(code, name).hex()
    described["co_consts"] = [_constant(c) for c in code.co_consts]
    return described


def _rebuilt(found, replaced):
    """The module with each lowered code object (by pre-order index) put in, every code
    object on the way to one rebuilt around it; and the lowered code objects as placed."""
    along = set()
    for index in replaced:
        at = index
        while at is not None and at not in along:
            along.add(at)
            at = found[at][1]
    placed = {}
    for index, lowered in replaced.items():
        code = found[index][0]
        placed[index] = code.replace(
            co_code=bytes.fromhex(lowered["code"]),
            co_consts=code.co_consts + tuple(_python_constant(c) for c in lowered["added"]),
            co_names=code.co_names + tuple(lowered["names"]),
            co_linetable=bytes.fromhex(lowered["locations"]),
            co_exceptiontable=bytes.fromhex(lowered["exceptions"]),
            co_stacksize=lowered["stacksize"],
        )
    index_of = {id(code): index for index, (code, _) in enumerate(found)}

    def build(index):
        code = placed.get(index, found[index][0])
        if index not in along:
            return code
        consts = tuple(
            build(index_of[id(c)]) if isinstance(c, types.CodeType) and id(c) in index_of else c
            for c in code.co_consts
        )
        if any(a is not b for a, b in zip(consts, code.co_consts)):
            code = code.replace(co_consts=consts)
        if index in placed:
            placed[index] = code
        return code

    return build(0), list(placed.values())
