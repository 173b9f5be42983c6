"""gotopy: goto, label and switch for Python.

``from gotopy import goto, label`` (or ``from goto import goto, label``) and decorate a
function with ``@goto``; ``gotopy.install()`` compiles every module imported afterwards
that has markers through gotopy; ``python -m gotopy run FILE`` runs a program with goto and
``python -m gotopy check PATH...`` checks files without running them.
"""

from gotopy._compile import GotoSyntaxError, compile_source
from gotopy._hook import install
from gotopy._runtime import case, goto, label, switch, with_goto

__all__ = [
    "GotoSyntaxError",
    "case",
    "compile_source",
    "goto",
    "install",
    "label",
    "switch",
    "with_goto",
]
