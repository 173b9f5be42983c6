"""Writes a module of goto functions that leave two loops at once for the label right after
the outer one (the shape translate writes with `break`, `else:` and `continue`), each beside
its twin written with a flag, as a person writes it without goto; the module asserts that
each pair returns the same on many inputs, then prints "ok".

    python3 escapes.py SEED COUNT > module.py

The shapes vary: `for` or `while`, either loop; the goto under an `if`, or also inside a
`with`, a `try` with a handler or a `try` with `finally`; a `continue` of the inner loop;
nothing, a statement, or an `if` with `continue` or `break` after the inner loop; a comment
on the goto or the label; statements after the label, with or without a blank line.
Used by tests/translate.rs."""

import twins


def function(rng, name):
    """The goto function's lines and its twin's: the same statements, but the goto is
    `found = True; break` there and the outer loop breaks on the flag."""
    outer = rng.choice(["for a in range(n % 4):", "while c[0] < 9 and c[1] < n:"])
    inner = rng.choice(["for b in range(3):", "while c[2] % 5 != 4:"])
    test = f"(c[2] * {rng.randint(1, 7)} + x) % {rng.randint(2, 6)} == 0"
    wrap = rng.choice(["", "with", "try", "finally"])
    skip = rng.random() < 0.3
    rest = rng.choice(["", "statement", "continue", "break"])
    after = rng.random() < 0.5
    blank = rng.random() < 0.5
    note = rng.random() < 0.3

    def body(goto, twin):
        lines = ["    log = []", "    c = [0, 0, 0]"]
        lines += ["    found = False"] if twin else []
        lines += ["    " + outer, "        c[1] += 1", "        " + inner]
        lines += ["            c[2] += 1", "            log.append(c[2])"]
        pad = "            "
        if wrap == "with":
            lines.append(pad + "with Step(log, c[2]):")
            pad += "    "
        elif wrap:
            lines.append(pad + "try:")
            pad += "    "
        lines.append(pad + f"if {test}:")
        lines += [pad + "    " + line for line in goto]
        if skip:
            lines += [pad + "if c[2] % 4 == 1:", pad + "    continue"]
        if wrap == "try":
            lines += [pad[:-4] + "except ValueError:", pad + "pass"]
        elif wrap == "finally":
            lines += [pad[:-4] + "finally:", pad + "log.append('finally')"]
        lines += ["        if found:", "            break"] if twin else []
        if rest == "statement":
            lines.append("        log.append('rest')")
        elif rest == "continue":
            lines += ["        if c[1] % 3 == 0:", "            continue", "        log.append('r')"]
        elif rest == "break":
            lines += ["        if c[1] > 5:", "            break", "        c[0] += 1"]
        return lines

    comment = "  # out" if note else ""
    goto = body(["goto .done" + comment], False)
    goto.append("    label .done" + ("  # the loops' end" if note else ""))
    twin = body(["found = True", "break"], True)
    tail = ["    log.append('after')"] if after else []
    tail += [""] if blank else []
    tail.append("    return log, c")
    return (
        [f"@goto\ndef {name}(n, x):"] + goto + tail,
        [f"def {name}_plain(n, x):"] + twin + tail,
    )


if __name__ == "__main__":
    twins.write(
        twins.STEP_HEAD,
        function,
        "    for n in range(5):\n"
        "        for x in range(3):\n"
        "            assert goto_function(n, x) == plain(n, x), (goto_function.__name__, n, x)\n",
    )
