"""gotopy's run-time module `goto`: the names that markers and decorators use.

Code run by `gotopy run` is compiled by gotopy, so every rewritten function already has real
jumps: the decorators return it unchanged. A marker that still runs (in a scope gotopy did
not rewrite, which `gotopy check` reports as G102) raises an error that says so.
"""


class _Marker:
    def __init__(self, name):
        self._name = name

    def __call__(self, function):
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
