"""What importing gotopy costs a program at start-up, on the running interpreter.

Each program is a fresh process of this interpreter, run in turn with the others (so that a
busy moment of the machine falls on all of them alike), ``RUNS`` times each; the figures
are each program's median and minimum, and the median over ``python -c pass`` run the
same way, which is the baseline:

- ``import goto`` and ``import gotopy``: what every program with goto pays;
- ``import goto`` and one ``@goto`` function, defined and called: the compile path too,
  which the first decorator that rewrites imports.

Run: ``python python/benches/startup.py`` with the package installed (docs/performance.md).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 40

DECORATED = """\
from goto import goto, label


@goto
def count(n):
    i = 0
    label .top
    i += 1
    if i < n:
        goto .top
    return i


assert count(3) == 3
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        decorated = os.path.join(directory, "decorated.py")
        with open(decorated, "w", encoding="utf-8") as file:
            file.write(DECORATED)
        programs = {
            "python -c pass": ["-c", "pass"],
            "import goto": ["-c", "import goto"],
            "import gotopy": ["-c", "import gotopy"],
            "one @goto function": [decorated],
        }
        times: dict[str, list[float]] = {name: [] for name in programs}
        for _ in range(RUNS):
            for name, arguments in programs.items():
                started = time.perf_counter()
                subprocess.run([sys.executable, *arguments], check=True)
                times[name].append(time.perf_counter() - started)
    baseline = statistics.median(times["python -c pass"])
    print(f"{sys.implementation.name} {sys.version.split()[0]}, {RUNS} runs of each, in turn")
    print(f"{'program':<20} {'median':>9} {'min':>9} {'over pass':>10}")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(
            f"{name:<20} {median * 1e3:>7.1f}ms {min(seconds) * 1e3:>7.1f}ms "
            f"{(median - baseline) * 1e3:>+8.1f}ms"
        )


if __name__ == "__main__":
    main()
