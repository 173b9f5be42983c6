"""What the generators of goto functions beside their twins share (blocks.py, escapes.py,
handled.py, machines.py): the module they write, which asserts that each pair agrees, then prints
"ok"."""

import random
import sys

# The head of a module whose functions log entering and leaving each `with Step(log, k):`
# (and whether an exception left it).
STEP_HEAD = '''from goto import goto, label


class Step:
    def __init__(self, log, k):
        self.log, self.k = log, k

    def __enter__(self):
        self.log.append(("in", self.k))

    def __exit__(self, *exc_info):
        self.log.append(("out", self.k, exc_info[0] is not None))
'''


def write(head, function, checks):
    """Writes to standard output `head`, then COUNT pairs of functions (`function(rng,
    name)` gives the goto function's lines and its twin's) from the SEED of the command
    line, then a loop over the pairs (`goto_function`, `plain`) whose body is `checks`."""
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    parts = [head]
    names = []
    for index in range(count):
        name = f"f{index}"
        names.append(name)
        goto, twin = function(rng, name)
        parts += ["\n".join(goto) + "\n", "\n".join(twin) + "\n"]
    pairs = "\n".join(f"    ({name}, {name}_plain)," for name in names)
    parts.append(f"for goto_function, plain in [\n{pairs}\n]:\n{checks}" + 'print("ok")\n')
    sys.stdout.write("\n\n".join(parts))
