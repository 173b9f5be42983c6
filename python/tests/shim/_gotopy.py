"""The differential driver's `_gotopy.compile` (RustPython's native module) on CPython:
the package's compile path, so tests/differential/programs.py's driver runs unchanged."""

from gotopy import compile_source


def compile(source: str, path: str):  # noqa: A001 - the name the driver calls
    return compile_source(source.encode(), path)
