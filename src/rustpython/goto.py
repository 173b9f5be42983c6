# The rest of gotopy's run-time module `goto`, after the markers of python/gotopy/_marker.py
# (src/rustpython/embed.rs puts the two texts together).
#
# gotopy's run-time module `goto`: the names that markers and decorators use.
#
# Code compiled by gotopy (`gotopy run`, modules imported through gotopy's import hook) already
# has real jumps, and the decorators return it unchanged. Applied to a function compiled some
# other way (`exec`, `compile`), `goto(f)` rewrites `f.__code__` in place and returns `f`;
# given a code object it returns the rewritten code object (SPEC section 6). A marker that
# still runs, in a scope nobody rewrote, raises an error that says so.

import _gotopy


def _rewrite(code, module_globals):
    # gotopy's interpreter compiled the module through gotopy when it had its source, so a
    # function that still holds markers was compiled some other way (`exec`, `compile`).
    return _gotopy.rewrite(code)


goto = Marker("goto", _rewrite)
with_goto = goto
label = Marker("label", _rewrite)
switch = Marker("switch", _rewrite)
case = Marker("case", _rewrite)


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
