"""``.pyc`` files of a whole tree: gotopy's two ways against ``compileall``, on the running
interpreter, in one run.

The tree is this interpreter's standard library (the files ``compile()`` accepts), each file
with a goto loop added, copied to a temporary directory. Each command compiles it from
scratch (``-f``, and the ``__pycache__`` directories removed between runs), best of 3 wall
times each, runs alternated:

- ``python -m compileall -q -f -j 1`` (one process, compileall's default) and ``-j 0``
  (one per core), writing CPython's own ``.pyc`` files;
- ``python -m gotopy compile`` (the package: one worker process per core);
- ``gotopy compile --python python3.X`` (the package's driver run by the binary, which
  answers for the native module), when the binary is given (``GOTOPY_BIN`` or the first argument).

Run: ``GOTOPY_BIN=target/release/gotopy python python/benches/pyc.py`` with the package
installed (docs/performance.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from bench import GOTO_LOOP, corpus


def tree(root: Path) -> int:
    """Writes the standard library with a goto loop in each file under ``root``."""
    library = Path(os.__file__).parent
    count = 0
    for path, data in corpus():
        target = root / Path(path).relative_to(library)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data + GOTO_LOOP)
        count += 1
    return count


def clean(root: Path) -> None:
    for cache in list(root.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)


def timed(command: list[str], root: Path) -> float:
    clean(root)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        # A run that failed part of the way would look fast: say so.
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        print(f"  {command[:4]} exited with {done.returncode}: {tail}")
    return seconds


def main() -> None:
    warnings.simplefilter("ignore")
    binary = os.environ.get("GOTOPY_BIN") or (sys.argv[1] if len(sys.argv) > 1 else None)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory, "lib")
        files = tree(root)
        commands = {
            "compileall -j 1": [sys.executable, "-m", "compileall", "-q", "-f", "-j", "1", str(root)],
            "compileall -j 0": [sys.executable, "-m", "compileall", "-q", "-f", "-j", "0", str(root)],
            "python -m gotopy compile": [sys.executable, "-m", "gotopy", "compile", str(root)],
        }
        if binary:
            commands["gotopy compile --python"] = [binary, "compile", "--python", sys.executable, str(root)]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(3):
            for name, command in commands.items():
                times[name].append(timed(command, root))
        best = {name: min(found) for name, found in times.items()}
        written = sum(1 for _ in root.rglob("*.pyc"))
    print(f"CPython {sys.version.split()[0]}: {files} files, {os.cpu_count()} cores ({written} .pyc at the end)")
    for name, seconds in best.items():
        print(
            f"  {name:26} {seconds:6.2f} s  {seconds / best['compileall -j 1']:.2f}x of -j 1, "
            f"{seconds / best['compileall -j 0']:.2f}x of -j 0"
        )


if __name__ == "__main__":
    main()
