"""How ``python -m`` finds a module and makes it ``__main__``, for ``gotopy run -m`` of both
commands: the package's (``gotopy._cli``) and the binary's, whose RustPython interpreter
runs this text (src/rustpython/run.rs). In Python because it is made of the import
system's own calls; one copy, so that both find the same modules and say the same words.
"""

import importlib.machinery
import importlib.util
import sys


def find(name):
    """What `python -m name` runs: `(spec, code)`, with code None for a `.py` file (which
    gotopy compiles), or why nothing runs."""
    if name.startswith("."):
        return f"cannot run `{name}`: relative module names are not supported"
    parent = name.rpartition(".")[0]
    if parent:
        try:
            __import__(parent)
        except ImportError as error:
            # A parent package that is missing means the module is not found (below); an
            # import error raised by one that exists is the program's own.
            if error.name is None or not (parent + ".").startswith(error.name + "."):
                raise
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        return f"cannot find module `{name}`: {type(error).__name__}: {error}"
    if spec is None:
        return f"no module named `{name}`"
    if spec.submodule_search_locations is not None:
        if name == "__main__" or name.endswith(".__main__"):
            return f"cannot run package `{name}` as `__main__`"
        found = find(name + ".__main__")
        if isinstance(found, str):
            return f"{found}: `{name}` is a package, which runs its `__main__` module"
        return found
    if isinstance(spec.loader, importlib.machinery.SourceFileLoader) and spec.has_location:
        return spec, None
    code = None if spec.loader is None else spec.loader.get_code(spec.name)
    if code is None:
        return f"module `{name}` has no code to run"
    return spec, code


def become_main(spec, globals):
    """Makes `globals` those of the module `spec` names running as `__main__`."""
    globals.update(
        __name__="__main__",
        __file__=spec.origin,
        __cached__=spec.cached,
        __loader__=spec.loader,
        __package__=spec.parent,
        __spec__=spec,
    )
    sys.argv[0] = spec.origin
