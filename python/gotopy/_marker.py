"""The markers ``goto``, ``label``, ``switch`` and ``case``, which are also the decorators
(SPEC sections 1, 2 and 6): one class for both runtimes. The ``gotopy`` package makes them
with its rewrite (``_runtime.py``); gotopy's own interpreter (RustPython) puts this text at
the top of its module ``goto`` (``src/rustpython/goto.py``) and makes them with its own.
"""

# Not `typing.TYPE_CHECKING`: the module `goto` of gotopy's interpreter would import
# `typing` for it, in every program. Type checkers read this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType
    from typing import Any

    Rewrite = Callable[[CodeType, "dict[str, Any] | None"], CodeType]

_CODE = type((lambda: None).__code__)


class Marker:
    """``goto``, ``label``, ``switch`` or ``case``: a decorator, and a marker that gotopy
    turns into control flow. ``rewrite(code, globals)`` gives the rewritten code object."""

    def __init__(self, name: "str", rewrite: "Rewrite") -> None:
        self._name = name
        self._rewrite = rewrite

    def __call__(self, function: "Any") -> "Any":
        if isinstance(function, (staticmethod, classmethod)):
            self(function.__func__)
            return function
        code = function if isinstance(function, _CODE) else getattr(function, "__code__", None)
        if not isinstance(code, _CODE):
            raise TypeError(
                f"@{self._name} applies to functions, methods and code objects, "
                f"not {type(function).__name__}"
            )
        rewritten = self._rewrite(code, getattr(function, "__globals__", None))
        if code is function:
            return rewritten
        if rewritten is not code:
            function.__code__ = rewritten
        return function

    def _ran(self, shown: "str") -> "Any":
        raise RuntimeError(
            f"`{shown}` ran as plain Python: gotopy rewrites markers only in functions "
            "decorated with @goto (or everywhere with --all-scopes)"
        )

    def __getattr__(self, name: "str") -> "Any":
        # Python's own protocols (copy, pickle, inspection) ask for dunder names and expect
        # AttributeError; only a marker's own name is a marker that ran.
        if name.startswith("__"):
            raise AttributeError(name)
        return self._ran(f"{self._name} .{name}")

    def __getitem__(self, key: "Any") -> "Any":
        return self._ran(f"{self._name}[{key!r}]")

    def __mul__(self, other: "Any") -> "Any":
        return self._ran(f"{self._name} *{other!r}")

    def __repr__(self) -> "str":
        return f"<gotopy marker {self._name}>"
