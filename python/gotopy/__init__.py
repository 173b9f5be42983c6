"""gotopy: goto, label and switch for Python.

``from gotopy import goto, label`` (or ``from goto import goto, label``) and decorate a
function with ``@goto``; ``gotopy.install()`` compiles every module imported afterwards
that has markers through gotopy; ``gotopy.compile(text, filename, "exec")`` is the built-in
``compile()`` with goto, for code that is generated and ``exec``'d; ``python -m gotopy run
FILE`` (or the ``gotopy`` command) runs a program with goto and ``python -m gotopy check
PATH...`` checks files without running them.
"""

from gotopy import _compile, _gotopy
from gotopy._compile import GotoSyntaxError
from gotopy._hook import install
from gotopy._gotopy import VERSION as __version__
from gotopy._runtime import case, goto, label, switch, with_goto

# Its errors are raised from native code, below the caller's frame (`_gotopy.frameless`).
compile = _gotopy.frameless(_compile.compile)

__all__ = [
    "GotoSyntaxError",
    "__version__",
    "case",
    "compile",
    "goto",
    "install",
    "label",
    "switch",
    "with_goto",
]
