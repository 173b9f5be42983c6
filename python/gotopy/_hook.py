"""The import hook: modules with goto compile through gotopy, with a cache of their own.

``install()`` puts a finder before CPython's path finder. Its loader is CPython's source
loader except for ``get_code``: a module whose source has no marker words is left entirely
to CPython (its own ``.pyc``); one that has them is compiled by ``gotopy._compile`` and
cached under a name plain CPython never reads,
``__pycache__/NAME.cpython-3XY.opt-gotopyREVoLEVEL.pyc`` (``REV`` changes with gotopy's
code, ``LEVEL`` is ``-O``'s), with CPython's header (magic number, and the source's mtime
and size, or its hash) and the same invalidation. CPython's own cache file for that module
is never read, and gotopy's is never read by CPython: neither is taken for the other.

A module asks for every scope to be rewritten (module and class bodies too) with a line
``# gotopy: all-scopes`` among its first five.
"""

from __future__ import annotations

import _imp
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Mapping
from importlib import _bootstrap_external as _external_module  # type: ignore[attr-defined]
from typing import Any

from gotopy import _compile, _gotopy

# CPython's own readers and writer of cache files, which its source loader uses.
_external: Any = _external_module

_MARKER_WORDS = (b"goto", b"switch")
asks_all_scopes = _gotopy.asks_all_scopes


# Worked out on first use, without a lock: threads that ask at once each work out the same
# string, and one of them is kept.
_REVISION: str | None = None


def cache_path(source_path: str) -> str:
    """Where gotopy caches the compiled module for this source file."""
    global _REVISION
    revision = _REVISION
    if revision is None:
        revision = _REVISION = _gotopy.revision(os.path.dirname(__file__))
    tag = f"gotopy{revision}o{sys.flags.optimize}"
    return importlib.util.cache_from_source(source_path, optimization=tag)


def _cached(loader: Any, name: str, cache: str, data: bytes, stats: Mapping[str, Any]) -> Any:
    """The code in gotopy's cache file of the module, when it is there and up to date as
    CPython's own loader checks its cache (``SourceLoader.get_code``, with its helpers: the
    magic number and flags, then the source's time and size or its hash, as the flags and
    ``--check-hash-based-pycs`` say); else ``None``."""
    details = {"name": name, "path": cache}
    try:
        cached = loader.get_data(cache)
        flags = _external._classify_pyc(cached, name, details)
        if not flags & 1:
            _external._validate_timestamp_pyc(cached, int(stats["mtime"]), stats["size"], name, details)
        elif _imp.check_hash_based_pycs == "always" or (_imp.check_hash_based_pycs == "default" and flags & 2):
            _external._validate_hash_pyc(cached, importlib.util.source_hash(data), name, details)
        return marshal.loads(memoryview(cached)[16:])
    except (OSError, ImportError, EOFError, ValueError, TypeError):
        return None


def _exec_module(loader: GotopyLoader, module: Any) -> None:
    exec(loader.get_code(module.__name__), module.__dict__)


class GotopyLoader(importlib.machinery.SourceFileLoader):
    """CPython's source loader, with gotopy's compile path for modules with markers.

    ``exec_module`` runs through ``_gotopy.frameless`` and importlib's
    ``_call_with_frames_removed``: an error in compiling the module (a ``GotoSyntaxError``)
    or in running it then shows the user's ``import`` line and the module's own place, as
    CPython shows them for any module, and no frame of gotopy or importlib."""

    exec_module = _gotopy.frameless(_exec_module, importing=True)

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        data = self.get_data(path)
        if not any(word in data for word in _MARKER_WORDS):
            return super().get_code(fullname)
        cache = cache_path(path)
        stats = self.path_stats(path)
        code = _cached(self, fullname, cache, data, stats)
        if code is not None:
            return code
        code = _compile.compile_source(data, path, all_scopes=asks_all_scopes(data))
        if not sys.dont_write_bytecode:
            try:
                # CPython's own writer: the source file's mode, atomic replace.
                pyc = _external._code_to_timestamp_pyc(code, stats["mtime"], stats["size"])
                self._cache_bytecode(path, cache, pyc)  # type: ignore[attr-defined]
            except (NotImplementedError, OSError):
                pass
        return code


class GotopyFinder:
    """Finds modules as CPython's path finder does, giving source files gotopy's loader."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        if spec.origin is None:
            return spec
        spec.loader = GotopyLoader(name, spec.origin)
        return spec

    @classmethod
    def invalidate_caches(cls) -> None:
        importlib.machinery.PathFinder.invalidate_caches()


# Held while `install` looks for the finder and puts it in: threads that install at once would
# otherwise each find it missing and each put it in.
_installing = threading.Lock()


def install() -> None:
    """Makes every module imported afterwards that contains markers compile through gotopy.
    Calling it again does nothing."""
    with _installing:
        if GotopyFinder in sys.meta_path:
            return
        at = next(
            (i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder),
            len(sys.meta_path),
        )
        sys.meta_path.insert(at, GotopyFinder)
