"""gotopy: goto, label and switch for Python.

This first slice of the CPython package offers the checker only:
``python -m gotopy check PATH...`` prints the same diagnostics, JSON, summary line and exit
status as the ``gotopy`` binary, from the same Rust front end (``gotopy._gotopy``).
"""

__all__: list[str] = []
