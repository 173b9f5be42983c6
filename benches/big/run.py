"""The big generated function (gen.py) on the routes `cargo bench --bench big` leaves out,
each against its baseline at the same size:

- compile (CPython): ``gotopy.compile`` against ``compile()`` of the same bytes, in
  one process of each CPython given (the package installed there), best of 3, alternated;
  and ``gotopy.compile`` with the plan made first, where it would be made beside the
  compile (a module from ``gotopy._compile.PLAN_BESIDE`` bytes: docs/performance.md);
- run time: the generated function rewritten by gotopy (``gotopy.compile``) against
  its ``gotopy translate`` output compiled by plain ``compile()``, both run in one process of
  CPython 3.13 for STEPS blocks (a jump in about one block of two; with ``--ways``, until
  its count reaches STEPS, a jump per 24), best of 5, alternated; both results are checked
  against gen.py's own walk of the blocks (ways.py's);
- memory: peak resident memory of ``gotopy compile`` (RustPython) of the module against the
  same command on the module without markers (``gen.py --plain``), one process each;
- steps (only when asked for): the steps of ``gotopy.compile`` apart, each against
  ``compile()`` in the same process, best of 3: the front end's plan, CPython's code of the
  module (``compile()`` of the source, or the round trip through CPython's `ast` objects
  when the plan edits the tree, which gen.py's does not), and the lowering of that code.

Run (docs/performance.md), after ``cargo build --release --locked`` and with the package
installed in the CPythons (``cargo test --test cpython`` sets up ``target/cpython/venv-3.X``)::

    python3 benches/big/run.py [--sizes 1000 4000 16000 64000] [--steps 2000000]
        [--gotopy target/release/gotopy] [--python PYTHON ...] [--runner PYTHON]
        [--routes compile run memory steps] [--return-in-each | --switch | --ways]
        [--spin ROUNDS]

``--return-in-each`` generates the module with ``gen.py --return-in-each`` (each
procedure returns by a computed goto of its own), the run's expected result is the same.
``--spin ROUNDS`` generates it with ``gen.py --spin``: the run is ``program(STEPS, ROUNDS)``,
the blocks for STEPS steps, then a tight goto loop after all the labels ROUNDS times (with
``--steps 1000``, the loop's time alone).
``--switch`` appends a function holding a switch to gen.py's module, so that its plan edits
CPython's tree (the compile route's ``planned first`` then costs what the default does). ``--ways``
generates ``ways.py N --loops --jumps`` instead (N labels, a computed goto in each of N/16
``for`` loops that runs at each pass, over the labels after the loops), its result checked
against ``ways.py --expect``; its sizes are multiples of 32, 1,024, 4,096, 16,384 and
65,536 unless told.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GEN = HERE / "gen.py"
WAYS = HERE / "ways.py"

# Runs in the measured interpreter: compile() against gotopy.compile, and gotopy.compile
# with the plan made first (PLAN_BESIDE past the module's size), each way in turn.
COMPILE = """
import sys, time, gotopy
from gotopy import _compile
data = open(sys.argv[1], "rb").read()
beside = _compile.PLAN_BESIDE
best = {"plain": float("inf"), "gotopy": float("inf"), "first": float("inf")}
for _ in range(3):
    for way in best:
        _compile.PLAN_BESIDE = len(data) + 1 if way == "first" else beside
        start = time.perf_counter()
        if way == "plain":
            compile(data, "big.py", "exec")
        else:
            gotopy.compile(data, "big.py")
        best[way] = min(best[way], time.perf_counter() - start)
print(best["gotopy"], best["plain"], best["first"])
"""

# Runs in the measured interpreter: the rewritten function against the translated one.
RUN = """
import sys, time, gotopy
data = open(sys.argv[1], "rb").read()
translated = open(sys.argv[2], "rb").read()
steps, spin = int(sys.argv[3]), int(sys.argv[4])
rewritten_ns, translated_ns = {}, {}
exec(gotopy.compile(data, "big.py"), rewritten_ns)
exec(compile(translated, "translated.py", "exec"), translated_ns)
best = {"rewritten": float("inf"), "translated": float("inf")}
results = set()
for _ in range(5):
    for name, ns in (("rewritten", rewritten_ns), ("translated", translated_ns)):
        start = time.perf_counter()
        results.add(ns["program"](steps, spin) if spin else ns["program"](steps))
        best[name] = min(best[name], time.perf_counter() - start)
print(best["translated"], best["rewritten"], repr(sorted(results)))
"""

# Runs in the measured interpreter: gotopy.compile's steps (gotopy._compile), each timed.
STEPS = """
import sys, time
from gotopy import _compile
data = open(sys.argv[1], "rb").read()
best = dict.fromkeys(("plan", "unlowered", "lower", "compile"), float("inf"))
def timed(step, work):
    start = time.perf_counter()
    done = work()
    best[step] = min(best[step], time.perf_counter() - start)
    return done
for _ in range(3):
    timed("compile", lambda: compile(data, "big.py", "exec"))
    plan = timed("plan", lambda: _compile.plan(data, "big.py"))
    code = timed("unlowered", lambda: _compile.unlowered(data, "big.py", plan))
    timed("lower", lambda: _compile.lower(code, plan, "big.py", data))
print(*best.values())
"""

MEMORY = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


# Appended with ``--switch``: a function whose switch makes the plan edit CPython's tree.
SWITCH = """

@goto
def pick(x):
    while switch *x:
        case[1]
        return "one"
    return "other"
"""
SWITCH_PLAIN = """

def pick(x):
    return "one" if x == 1 else "other"
"""


def generate(
    blocks: int,
    directory: Path,
    plain: bool = False,
    returns: bool = False,
    ways: bool = False,
    switch: bool = False,
    spin: bool = False,
) -> Path:
    path = directory / f"big{blocks}{'_plain' if plain else ''}.py"
    if ways:
        args = [sys.executable, str(WAYS), str(blocks), "--loops", "--jumps"]
    else:
        args = [sys.executable, str(GEN), str(blocks)] + (["--return-in-each"] if returns else [])
    args += ["--plain"] if plain else []
    args += ["--spin"] if spin else []
    done = subprocess.run(args, capture_output=True)
    if done.returncode:
        sys.exit(f"run.py: {done.stderr.decode().strip()}")
    path.write_bytes(done.stdout + ((SWITCH_PLAIN if plain else SWITCH).encode() if switch else b""))
    return path


def child(python: str, script: str, *args: str, parts: int = 3) -> list[str]:
    done = subprocess.run(
        [python, "-c", script, *args], check=True, capture_output=True, text=True
    )
    return done.stdout.split(maxsplit=parts - 1)


def line(
    route: str, blocks: int, value: float, baseline: float, unit: str = "s", per_block: bool = True
) -> None:
    # Per block: microseconds of a time, kilobytes of a memory in megabytes; a run time is
    # of the steps, not of the blocks.
    scale, small = (1e6, "us") if unit == "s" else (1e3, "KB")
    per = scale / blocks

    def each(amount: float) -> str:
        return f"{amount * per:>8.1f} {small}" if per_block else f"{'-':>11}"

    print(
        f"{route:<24} {blocks:>7} {value:>9.3f} {unit:<2} {each(value)} "
        f"{baseline:>9.3f} {unit:<2} {each(baseline)} {value / baseline:>7.2f}",
        flush=True,
    )


ROUTES = ["compile", "run", "memory", "steps"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="1000 4000 16000 64000, or 1024 4096 16384 65536"
    )
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--gotopy", default=str(ROOT / "target/release/gotopy"))
    venvs = ROOT / "target/cpython"
    parser.add_argument(
        "--python",
        nargs="+",
        default=[str(venvs / f"venv-{v}/bin/python") for v in ("3.11", "3.13")],
        help="CPythons with the gotopy package installed (compile route)",
    )
    parser.add_argument(
        "--runner",
        default=str(venvs / "venv-3.13/bin/python"),
        help="the CPython of the run times",
    )
    parser.add_argument(
        "--routes",
        nargs="+",
        choices=ROUTES,
        default=ROUTES[:3],
        help="what to measure (all but steps unless told)",
    )
    module = parser.add_mutually_exclusive_group()
    module.add_argument(
        "--return-in-each",
        action="store_true",
        help="each procedure returns by a computed goto of its own (gen.py's option)",
    )
    module.add_argument(
        "--switch",
        action="store_true",
        help="gen.py's module and a function with a switch, whose plan edits the tree",
    )
    parser.add_argument(
        "--spin",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="gen.py's module with a tight goto loop after its labels, run ROUNDS times "
        "after the STEPS blocks",
    )
    module.add_argument(
        "--ways",
        action="store_true",
        help="ways.py's computed gotos in many loops, which run, instead of gen.py's module",
    )
    args = parser.parse_args()
    if args.sizes is None:
        args.sizes = [1024, 4096, 16384, 65536] if args.ways else [1000, 4000, 16000, 64000]
    print(
        f"{'route':<24} {'blocks':>7} {'gotopy':>11} {'per block':>11} "
        f"{'baseline':>11} {'per block':>11} {'ratio':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for blocks in args.sizes:
            kinds = {
                "returns": args.return_in_each,
                "ways": args.ways,
                "switch": args.switch,
                "spin": bool(args.spin),
            }
            path = generate(blocks, directory, **kinds)
            plain = generate(blocks, directory, plain=True, **kinds)
            for python in args.python if {"compile", "steps"} & set(args.routes) else []:
                version = subprocess.run(
                    [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.strip()
                if "compile" in args.routes:
                    gotopy, baseline, first = map(float, child(python, COMPILE, str(path)))
                    line(f"gotopy.compile {version}", blocks, gotopy, baseline)
                    line(f"  planned first {version}", blocks, first, baseline)
                if "steps" in args.routes:
                    *steps, baseline = map(float, child(python, STEPS, str(path), parts=4))
                    for step, took in zip(("plan", "unlowered", "lower"), steps):
                        line(f"  {step} {version}", blocks, took, baseline)
            if "run" in args.routes:
                run(args, path, blocks, directory)
            if "memory" in args.routes:
                memory(args, path, plain, blocks)


def run(args: argparse.Namespace, path: Path, blocks: int, directory: Path) -> None:
    """The rewritten function against the translated one, both results checked."""
    out = directory / f"translated{blocks}"
    subprocess.run(
        [args.gotopy, "translate", str(path), "--out-dir", str(out)],
        check=True,
        capture_output=True,
    )
    translated, rewritten, results = child(
        args.runner, RUN, str(path), str(out / path.name), str(args.steps), str(args.spin)
    )
    walk = [str(WAYS), str(blocks), "--loops"] if args.ways else [str(GEN), str(blocks)]
    spin = [str(args.spin)] if args.spin else []
    expected = subprocess.run(
        [sys.executable, *walk, "--expect", str(args.steps), *spin],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if ast.literal_eval(results) != [ast.literal_eval(expected)]:
        sys.exit(
            f"run.py: {blocks} blocks: the programs returned {results}, "
            f"{Path(walk[0]).name} expects {expected}"
        )
    line(
        "run spin translated/rewritten" if args.spin else "run translated/rewritten",
        blocks,
        float(translated),
        float(rewritten),
        per_block=False,
    )


def memory(args: argparse.Namespace, path: Path, plain: Path, blocks: int) -> None:
    """Peak resident memory of `gotopy compile` of the module and of the plain one."""
    peaks = []
    for module in (path, plain):
        command = [args.gotopy, "compile", str(module), "-o", os.devnull]
        peaks.append(int(child(sys.executable, MEMORY, *command)[0]) / 1024)
    line("memory compile (MB)", blocks, peaks[0], peaks[1], unit="MB")


if __name__ == "__main__":
    main()
