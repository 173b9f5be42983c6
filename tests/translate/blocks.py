"""Writes a module of goto functions whose gotos leave statements for the label after them,
or start them again from the label before them, from inside `with` and `try` statements
(the shape translate writes as `while True:` with `break` and `continue`), each beside its
twin written with a flag, as a person writes it without goto; the module asserts that each
pair returns (or raises) the same on many inputs, then prints "ok".

    python3 blocks.py SEED COUNT > module.py

The shapes vary: a label before the statements, after them, or both; one or two of a
`with`, a `try` with a handler (which may go to the label after too) and a `try` with a
`finally`, nested, around the gotos; a statement after them or not, a `return` that ends
them, and a blank line after the label or not. Used by tests/translate.rs."""

import twins


def frame(kind, pad, body, handler):
    """The lines of a frame of `kind` at `pad` around `body`; a handler's lines `handler`."""
    inner = pad + "    "
    if kind == "with":
        return [pad + "with Step(log, c[0]):"] + [inner + line for line in body]
    lines = [pad + "try:"] + [inner + line for line in body]
    if kind == "except":
        lines += [pad + "except ValueError:"] + [inner + line for line in handler]
    else:
        lines += [pad + "finally:", inner + "log.append('finally')"]
    return lines


def function(rng, name):
    """The goto function's lines and its twin's: the same statements, but each goto sets
    `go` in the twin, and a `while True:` loop continues or leaves on it."""
    restart = rng.random() < 0.6
    leave = not restart or rng.random() < 0.6
    kinds = [rng.choice(["with", "except", "finally"]) for _ in range(rng.randint(1, 2))]
    again = f"(c[0] * {rng.randint(1, 5)} + x) % {rng.randint(2, 4)} == 0 and c[0] < 4"
    out = f"(c[0] + n * {rng.randint(1, 3)}) % {rng.randint(2, 5)} == 1"
    raises = f"x == {rng.randint(0, 3)}"
    handled = leave and rng.random() < 0.5
    # What follows the statements inside the block: a statement, a `return`, or nothing.
    between = rng.choice(["statement", "return", ""]) if leave else ""
    # What follows the block: with no label after it, one simple statement leaves it.
    after = rng.choice(["statement", "return"]) if not leave else ""

    def block(goto):
        """The statements of the block: in the goto function, or the twin's with `go`."""
        tests = []
        if restart:
            tests.append((again, "goto .again" if goto else "go = 'again'"))
        if leave:
            tests.append((out, "goto .out" if goto else "go = 'out'"))
        body = ["log.append(1)", f"if {raises}:", "    raise ValueError(x)"]
        if goto:
            for test, jump in tests:
                body += [f"if {test}:", "    " + jump]
            body.append("log.append(2)")
        else:
            # The first test that holds jumps; the rest of the body runs when none does.
            for index, (test, jump) in enumerate(tests):
                body += [("if " if index == 0 else "elif ") + f"{test}:", "    " + jump]
            body += ["else:", "    log.append(2)"]
        handler = ["log.append('handled')"]
        if handled:
            handler.append("goto .out" if goto else "go = 'out'")
        for kind in reversed(kinds):
            body = frame(kind, "", body, handler)
        # In the twin, what follows runs when no goto jumped.
        last = {"statement": "log.append('between')", "return": "return log, 'early'"}
        if between:
            body += [last[between]] if goto else ["if go is None:", "    " + last[between]]
        return body

    ending = {"statement": ["log.append('end')"], "return": ["return log, 'end'"], "": []}[after]
    goto = ["@goto", f"def {name}(n, x):", "    log = []", "    c = [0]"]
    goto += ["    label .again"] if restart else []
    goto += ["    c[0] += 1"] + ["    " + line for line in block(True)]
    goto += ["    label .out"] if leave else []
    goto += [""] if leave and rng.random() < 0.5 else []
    goto += ["    " + line for line in ending]
    twin = [f"def {name}_plain(n, x):", "    log = []", "    c = [0]", "    while True:"]
    twin += ["        go = None", "        c[0] += 1"]
    twin += ["        " + line for line in block(False)]
    twin += ["        if go == 'again':", "            continue"] if restart else []
    if ending == ["return log, 'end'"]:
        twin += ["        return log, 'end'"]
    else:
        twin += ["        " + line for line in ending] + ["        break"]
    tail = ["    log.append('after')", "    return log"]
    return goto + tail, twin + tail


if __name__ == "__main__":
    twins.write(
        twins.STEP_HEAD,
        function,
        "    for n in range(4):\n"
        "        for x in range(4):\n"
        "            def outcome(f):\n"
        "                try:\n"
        "                    return f(n, x)\n"
        "                except ValueError as error:\n"
        "                    return 'ValueError', error.args\n"
        "            assert outcome(goto_function) == outcome(plain), "
        "(goto_function.__name__, n, x)\n",
    )
