"""The Python package's part of the command line: ``compile``'s driver. The command line
itself is gotopy's own, in the native module (``_gotopy.main``, the binary's
``gotopy::shell``): arguments, help, every command but ``compile``'s work, messages and exit
statuses are the binary's byte for byte. ``compile_files`` is here, in Python, because the
binary's ``gotopy compile --python`` runs it too, in an interpreter without the native
module.
"""

from __future__ import annotations

import sys

from gotopy import _gotopy

# Exit statuses, as the binary's.
SUCCESS = 0
FOUND_ERRORS = 1
BAD_INPUT = 2


def main(argv: list[str] | None = None, prog: str = "gotopy") -> int:
    """Runs the command line and returns the exit status: as the ``gotopy`` command the
    package installs, or with ``prog="python -m gotopy"`` (``__main__``)."""
    return _gotopy.main(sys.argv[1:] if argv is None else list(argv), prog)


def compile_files(
    sources: list[tuple[str, str | None]],
    problems: list[str],
    out_dir: str | None,
    mode: str,
    all_scopes: bool,
    color: bool,
) -> int:
    """Writes a standalone ``.pyc`` for every source (with the directory argument it was
    found under), after ``problems``, the paths that could not be expanded; exit statuses as
    ``check``'s. The package's ``compile`` and the binary's ``compile --python`` call it."""
    import py_compile

    from gotopy import _pyc

    invalidation = py_compile.PycInvalidationMode[mode.upper().replace("-", "_")]
    jobs = _pyc.jobs_for(sources, out_dir)
    progress = len(jobs) >= _pyc.PROGRESS_FROM and sys.stderr.isatty()
    outcomes = _pyc.compile_all(jobs, all_scopes, invalidation, color, progress)
    problems = list(problems)
    for outcome in outcomes:
        _write(sys.stderr, outcome.report)
        problems.extend([outcome.unreadable] if outcome.unreadable is not None else [])
    # The inputs that could not be read or written, whose status wins over errors.
    for message in problems:
        _write(sys.stderr, f"gotopy: error: {message}\n")
    return BAD_INPUT if problems else FOUND_ERRORS if any(o.failed for o in outcomes) else SUCCESS


def _write(stream, text: str) -> None:
    """Writes UTF-8 bytes, as the binary does, whatever the locale's encoding."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()
