"""Digests of the code objects the CPython backend emits, on the running interpreter, for
`tests/cpython.rs`: one line per file, `NAME COMPILED DECORATED`, under a line that names
the interpreter and one that starts each section.

- COMPILED: `gotopy.compile` of the file (the compile path), or the code and a digest
  of the message of its refusal;
- DECORATED: `gotopy.goto` applied to every code object of the file as CPython compiles it
  from a string (the decorator without source), each rewritten or refused, or `-`.

A digest covers every field of every code object, nested ones included, with constants by
type and `repr`: two code objects have one digest when they are equal field by field,
whatever `marshal` would write for them (its bytes depend on reference counts).

    python cpython.py ROOT [stdlib]

The sections: the fixtures and examples of ROOT; 500 programs of the differential
generator (seed 11); with `stdlib`, the standard library, a goto loop added to each file.

This is a snapshot, not an oracle: it shows that restructuring changed no emitted byte.
"""

from __future__ import annotations

import hashlib
import os
import sys
import types
import warnings
from pathlib import Path

import gotopy
from gotopy._runtime import code_objects

# Added to each standard-library file, so that every module has a function to lower.
GOTO_LOOP = b"""

@goto
def _gotopy_emitted(n):
    label .top
    if n:
        n -= 1
        goto .top
    return n
"""


def canonical(value: object) -> object:
    """``value`` as nested tuples of plain data, equal exactly when the values are."""
    if isinstance(value, types.CodeType):
        return (
            "code",
            value.co_argcount,
            value.co_posonlyargcount,
            value.co_kwonlyargcount,
            value.co_stacksize,
            value.co_flags,
            value.co_code,
            tuple(canonical(c) for c in value.co_consts),
            value.co_names,
            value.co_varnames,
            value.co_freevars,
            value.co_cellvars,
            value.co_filename,
            value.co_name,
            value.co_qualname,
            value.co_firstlineno,
            value.co_linetable,
            value.co_exceptiontable,
        )
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical(item) for item in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(repr(canonical(item)) for item in value)))
    return (type(value).__name__, repr(value))


def digest(value: object) -> str:
    return hashlib.sha256(repr(canonical(value)).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def refusal(error: BaseException) -> str:
    text = str(getattr(error, "msg", error))
    code = getattr(error, "code", "") or text.split(":")[0]
    return f"{code}:{digest(text)}"


def compiled(data: bytes, name: str) -> str:
    all_scopes = b"# gotopy: all-scopes" in b"\n".join(data.splitlines()[:5])
    try:
        return digest(gotopy.compile(data, name, dont_inherit=True, all_scopes=all_scopes))
    except SyntaxError as error:
        return "refused:" + refusal(error)
    except Exception as error:  # noqa: BLE001 - recorded, so that a change shows
        return f"failed:{type(error).__name__}:{digest(str(error))}"


def decorated(data: bytes, name: str) -> str:
    try:
        # A name that is no file: the decorator has no source to read.
        module = compile(data, name if name.startswith("<") else f"<{name}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return "-"
    outcomes = []
    for code in code_objects(module):
        try:
            outcomes.append(digest(gotopy.goto(code)))
        except SyntaxError as error:
            outcomes.append("refused:" + refusal(error))
        except Exception as error:  # noqa: BLE001
            outcomes.append(f"failed:{type(error).__name__}:{digest(str(error))}")
    return digest(outcomes)


def line(name: str, data: bytes, decorator: bool = True) -> str:
    return f"{name} {compiled(data, name)} {decorated(data, name) if decorator else '-'}"


# The generator's programs the digests are recorded for.
# 500, not 2,000: each takes about 15 ms on each of five versions, and these digests are a
# snapshot; the differential test of `python/tests/test_run.py` runs 2,000 against an oracle.
SEED, COUNT = 11, 500


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    root = Path(argv[0])
    print(f"# CPython {sys.version.split()[0]}")
    print("# fixtures")
    for directory in ("fixtures/ok", "fixtures/err", "examples"):
        for path in sorted((root / directory).glob("*.py")):
            print(line(f"{directory}/{path.name}", path.read_bytes()))
    print(f"# programs {SEED} {COUNT}")
    sys.path.insert(0, str(root / "tests/differential"))
    import programs as generator  # noqa: PLC0415

    checked, _ = generator.generate(SEED, COUNT)
    plain, _ = generator.generate(SEED, COUNT, switches=False, finally_bodies=False)
    for index, (source, simple) in enumerate(zip(checked, plain)):
        name = f"<program {SEED}:{index}>"
        print(f"{name} {compiled(source.encode(), name)} {decorated(simple.encode(), name)}")
    if argv[1:] != ["stdlib"]:
        return
    print("# stdlib")
    library = Path(os.__file__).parent
    # A file that names where the interpreter is installed (`_sysconfigdata_*`, where
    # tools/pythons points pip's wheels at its own tree) differs from clone to clone.
    prefix = os.fsencode(sys.base_prefix)
    for path in sorted(library.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if prefix in data:
            continue
        name = str(path.relative_to(library))
        recorded = line(name, data + GOTO_LOOP, decorator=False)
        # A file this CPython cannot compile (the library's own bad-syntax test data) is
        # left out. Only when gotopy did not compile it is CPython asked: the one compile
        # per file that this saves is a third of the section's time.
        if recorded.startswith((f"{name} refused:", f"{name} failed:")):
            try:
                compile(data, str(path), "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
        print(recorded)


if __name__ == "__main__":
    main(sys.argv[1:])
