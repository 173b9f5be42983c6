"""State machines written from their flow graphs where the passes leave a goto: a loop
inside a loop whose exits go back to the outer one's head and a loop left for the code
after it, read as `while True:` loops with `break`s (`scan_words`, `toggle`), also in a
method with a docstring, a string over two lines, statements that share a line, comments
on a label, a test and a goto, and a loop and a `try` in a block (`Lamp.flicker`), and in
a coroutine (`pulses`); two loops that enter each other, tests that go to one state, and
comments on markers and tests (`ping_pong`, `grade_all`, which the passes take whole);
gotos into the clauses of an `if` from before it (`admit`), and a block of one statement
that two places enter, which a person writes twice rather than keep a flag for it
(`classify`); gotos between the cases of a `match` (`command`). Each goto function is checked against the same function written without goto, on many
inputs."""

from goto import goto, label


@goto
def ping_pong(n):
    hits = []
    label .ping  # serve
    hits.append("ping")
    n -= 1
    if n <= 0:
        return hits
    if n % 3 == 0:
        goto .pong
    goto .ping
    label .pong
    hits.append("pong")
    n -= 2
    if n <= 0:
        return hits
    if n % 4 == 0:
        goto .ping  # back to serve
    goto .pong


def ping_pong_plain(n):
    hits = []
    while True:
        hits.append("ping")
        n -= 1
        if n <= 0:
            return hits
        if n % 3 == 0:
            while True:
                hits.append("pong")
                n -= 2
                if n <= 0:
                    return hits
                if n % 4 == 0:
                    break


@goto
def scan_words(text):
    words, i, start = [], 0, 0
    label .space
    if i >= len(text):
        goto .finish
    if text[i] == " ":  # still blank
        i += 1
        goto .space
    start = i
    label .word
    i += 1
    if i < len(text) and text[i] != " ":
        goto .word
    words.append(text[start:i])
    goto .space
    label .finish
    words.reverse(); words.append(len(words))
    return words


def scan_words_plain(text):
    words, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        start = i
        i += 1
        while i < len(text) and text[i] != " ":
            i += 1
        words.append(text[start:i])
    words.reverse()
    words.append(len(words))
    return words


@goto
def grade_all(scores):
    out, k = [], 0
    label .next
    if k == len(scores):
        return out
    s = scores[k]
    k += 1
    if s is None:
        goto .bad
    if s < 0:
        goto .bad
    if s > 100:
        goto .bad
    out.append("pass" if s >= 50 else "fail")
    goto .next
    label .old_state
    out.append("never")
    goto .old_state
    label .bad
    out.append("bad")
    if len(out) > 5:
        return out
    goto .next


def grade_all_plain(scores):
    out = []
    for s in scores:
        if s is None or s < 0 or s > 100:
            out.append("bad")
            if len(out) > 5:
                return out
        else:
            out.append("pass" if s >= 50 else "fail")
    return out


@goto
def toggle(v, fuel):
    seen = []
    label .low
    seen.append(("low", v))
    v = (v + 3) % 7; fuel -= 1
    if fuel < 0:
        return seen
    if v % 3 == 0:
        goto .high
    if v % 2 == 0:
        goto .low
    goto .low
    label .high
    seen.append(("high", v))
    v = (v + 5) % 7; fuel -= 1
    if fuel < 0:
        return seen
    if v % 2 == 1:
        goto .low
    if v == 4:
        goto .high
    goto .low


def toggle_plain(v, fuel):
    seen = []
    while True:
        seen.append(("low", v))
        v = (v + 3) % 7
        fuel -= 1
        if fuel < 0:
            return seen
        if v % 3 == 0:
            seen.append(("high", v))
            v = (v + 5) % 7
            fuel -= 1
            while v == 4 and fuel >= 0:
                seen.append(("high", v))
                v = (v + 5) % 7
                fuel -= 1
            if fuel < 0:
                return seen


class Lamp:
    @goto
    def flicker(self, v, fuel):
        """Two states, as a method; a docstring
        over two lines."""
        seen = []
        # the dim state
        label .dim  # dim
        seen.append(("dim", v))
        v = (v + 3) % 7; fuel -= 1
        note = """two
lines"""
        if fuel < 0:
            return seen, len(note)
        if v % 3 == 0:  # brighter?
            goto .bright
        elif v == 1:
            for k in range(2):
                seen.append((k,
                             v))  # a pair
            goto .dim
        else:
            try:
                seen.append(10 // v)
            except ZeroDivisionError:
                seen.append("zero")
        goto .dim  # once more
        label .bright
        seen.append(("bright", v))
        v = (v + 5) % 7; fuel -= 1
        if fuel < 0:
            return seen, 0
        if v % 2 == 1:
            goto .dim
        if v == 4:
            goto .bright
        goto .dim


def flicker_plain(v, fuel):
    seen = []
    bright = False
    while True:
        if not bright:
            seen.append(("dim", v))
            v = (v + 3) % 7
            fuel -= 1
            if fuel < 0:
                return seen, 9
            if v % 3 == 0:
                bright = True
            elif v == 1:
                for k in range(2):
                    seen.append((k, v))
            else:
                try:
                    seen.append(10 // v)
                except ZeroDivisionError:
                    seen.append("zero")
        else:
            seen.append(("bright", v))
            v = (v + 5) % 7
            fuel -= 1
            if fuel < 0:
                return seen, 0
            bright = v % 2 != 1 and v == 4


@goto
async def pulses(v, fuel):
    seen = []
    label .rise
    seen.append(v)
    v = (v + 3) % 7; fuel -= 1
    if fuel < 0:
        return seen
    if v % 3 == 0:
        goto .fall
    goto .rise
    label .fall
    seen.append(-v)
    v = (v + 5) % 7; fuel -= 1
    if fuel < 0:
        return seen
    if v % 2 == 1:
        goto .rise
    goto .fall


async def pulses_plain(v, fuel):
    seen = []
    falling = False
    while True:
        seen.append(-v if falling else v)
        v = (v + (5 if falling else 3)) % 7
        fuel -= 1
        if fuel < 0:
            return seen
        falling = v % 2 != 1 if falling else v % 3 == 0


@goto
def admit(kind, size):
    notes = []
    if kind == "trusted":
        goto .accept  # no checks
    if size < 0:
        goto .reject
    if kind == "bulk":
        notes.append("bulk")
        if size > 100:
            notes.append("split")
    elif size < 1000:
        notes.append("checked")
        label .accept
        notes.append("accepted")
    else:
        label .reject
        notes.append("rejected")
    notes.append(size)
    return notes


def admit_plain(kind, size):
    notes = []
    if kind == "trusted":
        notes.append("accepted")
    elif size < 0:
        notes.append("rejected")
    elif kind == "bulk":
        notes.append("bulk")
        if size > 100:
            notes.append("split")
    elif size < 1000:
        notes += ["checked", "accepted"]
    else:
        notes.append("rejected")
    return notes + [size]


@goto
def classify(n):
    out = []
    if n < 0:
        goto .tail
    if n % 2:
        out.append("odd")
        goto .tail
    out.append("even")
    if n > 10:
        goto .big
    goto .end
    label .tail
    out.append("tail")
    goto .end
    label .big
    out.append("big")
    label .end
    out.append(n)
    return out


def classify_plain(n):
    out = [] if n < 0 else ["odd"] if n % 2 else ["even"]
    if n < 0 or n % 2:
        out.append("tail")
    elif n > 10:
        out.append("big")
    return out + [n]


@goto
def command(words):
    log = []
    match words:
        case ["go", where]:
            if where == "home":
                goto .arrive  # the short way
            log.append("walk to " + where)
        case ["wait", *_]:
            log.append("wait")
            if len(words) > 2:
                goto .idle
        case ["stop"]:
            label .arrive
            log.append("arrived")
        case _:
            label .idle
            log.append("idle")
    log.append(len(words))
    return log


def command_plain(words):
    log = []
    match words:
        case ["go", "home"] | ["stop"]:
            log.append("arrived")
        case ["go", where]:
            log.append("walk to " + where)
        case ["wait", *rest]:
            log += ["wait", "idle"] if rest[1:] else ["wait"]
        case _:
            log.append("idle")
    return log + [len(words)]


def finished(coroutine):
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value


for n in range(-1, 30):
    assert ping_pong(n) == ping_pong_plain(n), n
for text in ("", " ", "a", "ab  cd", " x y ", "one two  three "):
    assert scan_words(text) == scan_words_plain(text), text
for scores in ([], [10, 60], [None, -1, 101, 50], [1, None] * 5, [200] * 8):
    assert grade_all(scores) == grade_all_plain(scores), scores
for v in range(7):
    for fuel in range(12):
        assert toggle(v, fuel) == toggle_plain(v, fuel), (v, fuel)
for v in range(7):
    for fuel in range(12):
        assert Lamp().flicker(v, fuel) == flicker_plain(v, fuel), (v, fuel)
        assert finished(pulses(v, fuel)) == finished(pulses_plain(v, fuel)), (v, fuel)
for kind in ("trusted", "bulk", "plain"):
    for size in (-5, 0, 50, 500, 5000):
        assert admit(kind, size) == admit_plain(kind, size), (kind, size)
for n in range(-3, 16):
    assert classify(n) == classify_plain(n), n
for words in ([], ["go", "home"], ["go", "park"], ["wait"], ["wait", 1, 2], ["stop"], ["go"]):
    assert command(words) == command_plain(words), words
print("ok")
