"""What `gotopy compile --python INTERPRETER` runs in that interpreter, where gotopy need not
be installed: the interpreter compiles what the binary gives it and writes the `.pyc` files;
the binary checks, plans and lowers (src/cli/cpython.rs). One JSON object a line each way.

First this script says what the interpreter is: `{"version", "cache_tag"}`. Then, for each
file, the binary sends `{"compile": ...}` (the path, the source in hexadecimal, the plan's
edits to CPython's tree, the rewritten functions whose opt-in decorators a standalone file
leaves out, and the scopes it rewrites), and the script answers with the module's code
objects in pre-order: every one's qualified name and parent, and the tables and names of
those the binary may lower or look into; or with what went wrong. Then the binary sends
`{"write": ...}` (each rewritten code object's new tables and constants, the `.pyc` file's
path and invalidation mode), and the script puts the module back together, marshals it and
writes the file as `py_compile` does.

The edits to the tree are the package's own (`_prepare`, the module next to this script).
"""

import importlib.util
import json
import os
import sys
import types
from importlib import _bootstrap_external as external

import _prepare


def tree_of(module):
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


def constant(value):
    """A constant as the binary tells them apart."""
    kind = type(value)
    if value is None:
        return None
    if kind is int:
        return {"int": format(value, "x")}
    if kind is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return {"other": True}
        return {"str": value}
    if kind is bytes:
        return {"bytes": value.hex()}
    return {"other": True}


def python_constant(value):
    """A constant the binary added, as a Python object."""
    if value is None:
        return None
    if "int" in value:
        return int(value["int"], 16)
    if "str" in value:
        return value["str"]
    if "bool" in value:
        return bool(value["bool"])
    if "tuple" in value:
        return tuple(python_constant(item) for item in value["tuple"])
    if "search" in value:
        # The search function of computed gotos in many frames: its code, compiled here.
        module = compile(value["search"], value["file"], "exec", dont_inherit=True)
        return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == value["name"])
    return bytes.fromhex(value["bytes"])


def described(code, parent, full):
    entry = {"qualname": code.co_qualname, "parent": parent}
    if full:
        entry.update(
            code=code.co_code.hex(),
            exceptions=code.co_exceptiontable.hex(),
            locations=code.co_linetable.hex(),
            first_line=code.co_firstlineno,
            names=list(code.co_names),
            varnames=list(code.co_varnames),
            cellvars=list(code.co_cellvars),
            freevars=list(code.co_freevars),
            constants=[constant(c) for c in code.co_consts],
            flags=code.co_flags,
            argcount=code.co_argcount,
            kwonlyargcount=code.co_kwonlyargcount,
            stacksize=code.co_stacksize,
        )
    return entry


def compile_module(request):
    """The module compiled from the prepared tree, and its description for the binary."""
    data = bytes.fromhex(request["data"])
    path = request["path"]
    removed = set()

    def edit(tree):
        if request["plan"] is not None:
            _prepare.apply(tree, request["plan"])
        removed.update(_prepare.standalone(tree, request["functions"]))

    try:
        module = _prepare.compiled(data, path, edit, deep=request["deep"])
    except _prepare.PlanMismatch as mismatch:
        return None, {"late": str(mismatch), "help": None}
    except SyntaxError as error:
        return None, {"syntax_error": [error.lineno or 1, str(error.msg)]}
    except (RecursionError, MemoryError) as error:
        # CPython cannot compile the source: its own error, as `compile()` raises it.
        notes = "".join(f"\n{note}" for note in getattr(error, "__notes__", ()))
        return None, {"raised": f"{type(error).__name__}: {error}{notes}"}
    scopes = set(request["scopes"])
    codes = []
    for code, parent in tree_of(module):
        names = set(code.co_names) | set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
        codes.append(described(code, parent, code.co_qualname in scopes or bool(names & removed)))
    return module, {"codes": codes, "removed": sorted(removed)}


def rebuilt(module, replaced):
    """The module with each rewritten code object (by pre-order index) put in, and every
    code object on the way to one rebuilt around it."""
    found = tree_of(module)
    along = set()
    for index in replaced:
        at = index
        while at is not None and at not in along:
            along.add(at)
            at = found[at][1]
    new = {}
    for index, lowered in replaced.items():
        code = found[index][0]
        constants = code.co_consts + tuple(python_constant(c) for c in lowered["added"])
        new[index] = code.replace(
            co_code=bytes.fromhex(lowered["code"]),
            co_consts=constants,
            co_names=code.co_names + tuple(lowered["names"]),
            co_linetable=bytes.fromhex(lowered["locations"]),
            co_exceptiontable=bytes.fromhex(lowered["exceptions"]),
            co_stacksize=lowered["stacksize"],
        )
    index_of = {id(code): index for index, (code, _) in enumerate(found)}

    def build(index):
        code = new.get(index, found[index][0])
        if index not in along:
            return code
        consts = tuple(
            build(index_of[id(c)]) if isinstance(c, types.CodeType) and id(c) in index_of else c
            for c in code.co_consts
        )
        if any(a is not b for a, b in zip(consts, code.co_consts)):
            code = code.replace(co_consts=consts)
        return code

    return build(0)


def write(module, request, data):
    """Writes the `.pyc` file as `py_compile` does: its header for the invalidation mode,
    then the marshalled module, atomically, with the source's permissions."""
    source = request["source"]
    mode = request["mode"]
    if mode == "timestamp":
        stat = os.stat(source)
        pyc = external._code_to_timestamp_pyc(module, stat.st_mtime, stat.st_size)
    else:
        pyc = external._code_to_hash_pyc(module, importlib.util.source_hash(data), mode == "checked-hash")
    target = request["target"]
    directory = os.path.dirname(target)
    if directory:
        os.makedirs(directory, exist_ok=True)
    external._write_atomic(target, pyc, external._calc_mode(source))


def main():
    out = sys.stdout
    out.write(json.dumps({"version": list(sys.version_info[:2]), "cache_tag": sys.implementation.cache_tag}) + "\n")
    out.flush()
    module = data = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if "compile" in request:
                data = bytes.fromhex(request["compile"]["data"])
                module, answer = compile_module(request["compile"])
            else:
                replaced = {int(index): lowered for index, lowered in request["write"]["replace"]}
                write(rebuilt(module, replaced), request["write"], data)
                answer = {"written": True}
        except OSError as error:
            # Writing the file failed: the binary says why, in its own words for `errno`.
            answer = {"errno": error.errno} if error.errno else {"error": f"OSError: {error}"}
        except Exception as error:  # noqa: BLE001 - a failure here stops this file only
            answer = {"error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
