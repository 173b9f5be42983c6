"""gotopy: goto, label and switch for Python.

``from gotopy import goto, label`` (or ``from goto import goto, label``) and decorate a
function with ``@goto``; ``gotopy.install()`` compiles every module imported afterwards
that has markers through gotopy; ``gotopy.compile(text, filename, "exec")`` is the built-in
``compile()`` with goto, for code that is generated and ``exec``'d; ``python -m gotopy run
FILE`` (or the ``gotopy`` command) runs a program with goto and ``python -m gotopy check
PATH...`` checks files without running them.

Importing it costs what a program uses: the markers and the native module. The compile
path and the import hook are imported where they are first asked for
(``__getattr__`` below; the first ``@goto`` call or ``compile`` imports the compile path).
"""

from gotopy._gotopy import VERSION as __version__
from gotopy._gotopy import GotoSyntaxError
from gotopy._runtime import case, goto, label, switch, with_goto

# Not `typing.TYPE_CHECKING` (importing `typing` is most of the cost this module avoids).
# Type checkers read this name as true, and see the lazy names as these imports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gotopy._gotopy import compile
    from gotopy._hook import install

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


def __getattr__(name: str) -> object:
    value: object
    if name == "compile":
        # Native (`gotopy compile --python`'s stand-in for the native module has none).
        from gotopy._gotopy import compile as value
    elif name == "install":
        from gotopy import _hook

        value = _hook.install
    else:
        raise AttributeError(f"module 'gotopy' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
