"""gotopy's run-time module `goto`: the names that markers and decorators use.

Code compiled by gotopy (`gotopy run`, modules imported through gotopy's import hook) already
has real jumps, and the decorators return it unchanged. Applied to a function compiled some
other way (`exec`, `compile`), `goto(f)` rewrites `f.__code__` in place and returns `f`;
given a code object it returns the rewritten code object (SPEC section 6). A marker that
still runs, in a scope nobody rewrote, raises an error that says so.
"""

import _gotopy



_CodeType = type(compile("", "", "exec"))


class _Marker:
    def __init__(self, name):
        self._name = name

    def __call__(self, function):
        if isinstance(function, (staticmethod, classmethod)):
            self(function.__func__)
            return function
        if isinstance(function, _CodeType):
            return _gotopy.rewrite(function)
        code = getattr(function, "__code__", None)
        if code is None:
            raise TypeError(
                f"@{self._name} applies to functions, methods and code objects, "
                f"not {type(function).__name__}"
            )
        rewritten = _gotopy.rewrite(code)
        if rewritten is not code:
            function.__code__ = rewritten
        return function

    def _ran(self, shown):
        raise RuntimeError(
            f"`{shown}` ran as plain Python: gotopy rewrites markers only in functions "
            f"decorated with @goto (or everywhere with --all-scopes)"
        )

    def __getattr__(self, name):
        self._ran(f"{self._name} .{name}")

    def __getitem__(self, key):
        self._ran(f"{self._name}[{key!r}]")

    def __mul__(self, other):
        self._ran(f"{self._name} *{other!r}")

    def __repr__(self):
        return f"<gotopy marker {self._name}>"


goto = _Marker("goto")
with_goto = goto
label = _Marker("label")
switch = _Marker("switch")
case = _Marker("case")


def _install_import_hook():
    """Compile `.py` modules found on the path with gotopy (see `gotopy::embed`)."""
    import sys
    import importlib.machinery
    import importlib.util

    class GotopyLoader(importlib.machinery.SourceFileLoader):
        def source_to_code(self, data, path, *, _optimize=-1):
            return _gotopy.compile(importlib.util.decode_source(data), path)

        def path_stats(self, path):
            # No bytecode cache: a plain interpreter's `.pyc` must never stand in.
            raise OSError("gotopy compiles from source")

    class GotopyFinder:
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                return spec
            loader = GotopyLoader(name, spec.origin)
            return importlib.util.spec_from_file_location(
                name,
                spec.origin,
                loader=loader,
                submodule_search_locations=spec.submodule_search_locations,
            )

    if not any(getattr(f, "__name__", "") == "GotopyFinder" for f in sys.meta_path):
        at = next(
            (i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder),
            len(sys.meta_path),
        )
        sys.meta_path.insert(at, GotopyFinder)
