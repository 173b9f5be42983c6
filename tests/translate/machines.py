"""Writes a module of state machines made of gotos, each state a label, each beside its twin
written as a person writes one without goto, a state variable and a `while` loop that
dispatches on it; the module asserts that each pair returns the same on many inputs, then
prints "ok".

    python3 machines.py SEED COUNT > module.py

Each state logs, changes a counter, spends one unit of fuel (so that every machine stops),
then leaves by conditional gotos and a last goto or `return`. Some states are entered by one
test alone (which translate moves under that test), some loop back to themselves, some are
entered from several places. Used by tests/translate.rs."""

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

    return (
        [f"@goto\ndef {name}(v):"] + body(False),
        [f"def {name}_plain(v):"] + body(True),
    )


if __name__ == "__main__":
    twins.write(
        HEAD,
        function,
        "    for v in range(11):\n"
        "        assert goto_function(v) == plain(v), (goto_function.__name__, v)\n",
    )
