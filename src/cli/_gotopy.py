"""The ``gotopy`` binary's stand-in for the package's native module ``gotopy._gotopy``, for
``gotopy compile --python``: the package's own Python code runs in the named interpreter,
where gotopy need not be installed, and asks the binary (``GOTOPY_BIN``) for what the
native module would give, through its hidden ``plan`` command.
"""

from __future__ import annotations

import io
import os
import subprocess
import tokenize


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
