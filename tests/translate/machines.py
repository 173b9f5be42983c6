"""Writes a module of state machines made of gotos, each state a label, each beside its twin
written as a person writes one without goto, a state variable and a `while` loop that
dispatches on it; the module asserts that each pair returns the same on many inputs, then
prints "ok".

    python3 machines.py SEED COUNT > module.py

Each state logs, changes a counter, spends one unit of fuel (so that every machine stops),
then leaves by conditional gotos and a last goto or `return`. Some states are entered by one
test alone (which translate moves under that test), some loop back to themselves, some are
entered from several places. A machine whose flow is irreducible (a loop that the states it
reaches enter other than at its head) has the line `# irreducible` above it. Used by
tests/translate.rs."""

import twins

HEAD = "from goto import goto, label\n"


def function(rng, name):
    """The goto function's lines and its twin's."""
    count = rng.randint(2, 6)
    states = []
    for state in range(count):
        tests = []
        for _ in range(rng.randint(0, 2)):
            test = f"(v * {rng.randint(1, 5)} + fuel) % {rng.randint(2, 5)} == 0"
            tests.append((test, rng.randrange(count)))
        last = rng.randrange(count) if rng.random() < 0.8 else None
        states.append((rng.randint(1, 9), tests, last))

    named = {to for _, tests, last in states for _, to in tests} | {last for *_, last in states}

    def body(twin):
        lines = ["    log = []", "    fuel = 12 + v % 5"]
        if twin:
            lines += ["    state = 0", "    while True:"]
        pad = "        " if twin else "    "
        for at, (step, tests, last) in enumerate(states):
            inner = pad
            if twin:
                lines.append(pad + f"if state == {at}:")
                inner = pad + "    "
            elif at in named:
                lines.append(pad + f"label .s{at}")
            lines += [
                inner + f"log.append(({at}, v))",
                inner + f"v = (v + {step}) % 11",
                inner + "fuel -= 1",
                inner + "if fuel < 0:",
                inner + "    return log",
            ]
            for test, to in tests:
                lines.append(inner + f"if {test}:")
                jump = [f"    state = {to}", "    continue"] if twin else [f"    goto .s{to}"]
                lines += [inner + line for line in jump]
            if last is None:
                lines.append(inner + "return log")
            elif twin:
                lines += [inner + f"state = {last}", inner + "continue"]
            else:
                lines.append(inner + f"goto .s{last}")
        return lines

    edges = [[to for _, to in tests] + ([] if last is None else [last]) for _, tests, last in states]
    mark = [] if reducible(edges) else ["# irreducible"]
    return (
        mark + [f"@goto\ndef {name}(v):"] + body(False),
        [f"def {name}_plain(v):"] + body(True),
    )


def reducible(edges):
    """Whether the graph of `edges` (state 0 the start) is reducible: each edge that a depth
    first search finds going back to a state on its path goes to a state that dominates
    the one it leaves (every path from the start to it passes there)."""
    reached, work = set(), [0]
    while work:
        state = work.pop()
        if state not in reached:
            reached.add(state)
            work += edges[state]
    into = {state: [at for at in reached if state in edges[at]] for state in reached}
    dominators = {state: set(reached) for state in reached}
    dominators[0] = {0}
    changed = True
    while changed:
        changed = False
        for state in reached - {0}:
            new = set.intersection(*(dominators[at] for at in into[state])) | {state}
            if new != dominators[state]:
                dominators[state], changed = new, True
    path, done = [], set()

    def search(state):
        path.append(state)
        for to in edges[state]:
            if to in path and to not in dominators[state]:
                return False
            if to not in path and to not in done and not search(to):
                return False
        path.pop()
        done.add(state)
        return True

    return search(0)


if __name__ == "__main__":
    twins.write(
        HEAD,
        function,
        "    for v in range(11):\n"
        "        assert goto_function(v) == plain(v), (goto_function.__name__, v)\n",
    )
