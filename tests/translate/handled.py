"""Writes a module of goto functions whose `try` handlers go past the statements after the
`try` to a label (the shape translate writes with the `try`'s `else:`), each beside its twin
written with a flag, as a person writes it without goto; the module asserts that each pair
returns (or raises) the same on many inputs, then prints "ok".

    python3 handled.py SEED COUNT > module.py

The shapes vary: one to three handlers, each ending with the goto (after a statement or
alone), a `return`, a re-`raise`, or (not in the last) a `continue` or `break` of a loop
around; the `try` in a loop or not; nothing, a statement, or an `if` with a `return`,
`continue` or `break` between the `try` and the label; a comment on a goto or the label.
The label is `.done` where translate must take the shape, and `.kept` where it must not: a
handler that falls through, a `finally`, or a last handler that does not end with the goto.
Used by tests/translate.rs."""

import twins

HEAD = '''import sys

from goto import goto, label


def check(x, k):
    if (x + k) % 5 == 1:
        raise ValueError(x)
    if (x + k) % 5 == 2:
        raise KeyError(x)
    if (x + k) % 5 == 3:
        raise TypeError(x)
    return x * 10 + k


def outcome(function, x):
    log = []
    try:
        result = function(x, log)
    except Exception as error:
        result = type(error).__name__
    return result, log
'''

ERRORS = ["ValueError", "KeyError", "LookupError", "TypeError"]


def function(rng, name):
    """The goto function's lines and its twin's: the same statements, but each goto is
    `skipped = True` there and the statements between run under `if not skipped:`."""
    looped = rng.random() < 0.5
    caught = rng.sample(ERRORS, rng.randint(1, 3))
    ends = []
    for at in range(len(caught)):
        last = at == len(caught) - 1
        choices = ["goto", "goto_only", "return", "raise"]
        choices += ["continue", "break"] if looped and not last else []
        ends.append(rng.choice(choices))
    if rng.random() < 0.7:
        # Taken: the last handler ends with the goto.
        ends[-1] = rng.choice(["goto", "goto_only"])
    kept_reason = rng.random() < 0.25
    falls = kept_reason and rng.random() < 0.5
    final = kept_reason and not falls
    if falls:
        ends[rng.randrange(len(ends))] = "fall"
    if "goto" not in ends and "goto_only" not in ends:
        ends[0] = "goto"
    exits = ["", "statement", "return"] + (["continue", "break"] if looped else [])
    between = rng.choice(exits)
    note = rng.random() < 0.3
    taken = ends[-1] in ("goto", "goto_only") and "fall" not in ends and not final
    name_of = "done" if taken else "kept"

    def body(twin):
        pad = "    "
        lines = ["    skipped = False"] if twin else []
        lines.append("    v = None")
        if looped:
            lines += ["    for k in range(3):"]
            pad = "        "
            if twin:
                lines.append(pad + "skipped = False")
        else:
            lines.append("    k = 0")
        lines += [pad + "try:", pad + "    log.append(('try', k))", pad + "    v = check(x, k)"]
        for error, end in zip(caught, ends):
            lines.append(pad + f"except {error} as error:")
            inner = pad + "    "
            if end == "goto_only":
                lines += [inner + "skipped = True"] if twin else [inner + f"goto .{name_of}"]
            elif end == "goto":
                lines.append(inner + f"log.append(('{error}', str(error)))")
                comment = "  # past the rest" if note else ""
                lines += [inner + "skipped = True"] if twin else [inner + f"goto .{name_of}" + comment]
            elif end == "return":
                lines += [inner + f"log.append('{error}')", inner + "return 'returned'"]
            elif end == "raise":
                lines += [inner + "log.append('again')", inner + "raise"]
            elif end in ("continue", "break"):
                lines += [inner + f"log.append('{end}')", inner + end]
            else:
                lines.append(inner + "v = -1")
        if final:
            lines += [pad + "finally:", pad + "    log.append('finally')"]
        rest = []
        if between == "statement":
            rest.append("log.append(('v', v))")
        elif between:
            exit = "return 'early'" if between == "return" else between
            rest += ["if v is not None and v % 3 == 0:", "    " + exit, "log.append(v)"]
        if twin and rest:
            lines.append(pad + "if not skipped:")
            lines += [pad + "    " + line for line in rest]
        else:
            lines += [pad + line for line in rest]
        if not twin:
            lines.append(pad + f"label .{name_of}" + ("  # the rest" if note else ""))
        lines.append(pad + "log.append(('after', k, sys.exc_info()[0], 'error' in locals()))")
        lines.append("    return v")
        return lines

    return (
        [f"@goto\ndef {name}(x, log):"] + body(False),
        [f"def {name}_plain(x, log):"] + body(True),
    )


if __name__ == "__main__":
    twins.write(
        HEAD,
        function,
        "    for x in range(6):\n"
        "        assert outcome(goto_function, x) == outcome(plain, x), (goto_function.__name__, x)\n",
    )
