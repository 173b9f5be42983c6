"""Shapes a person writes as `if`, `elif`, `else`, `while`, `return` and `raise` (a ladder of
conditional gotos to blocks that meet again is one `if` with its `elif`s, a loop that tests
at its end is `while True:` with `break`, one whose head leaves it a `while` on its `not`, with
the exit after it, also where the test has no blank after `if`), a loop that
restarts as `while True:` around it with an `else` clause, and a loop left for the label
after it as `break` (from inside a `with` and a `try` too), what came between as its `else`
clause, two loops left at once as `break`, `else:` and `continue`, and a `try` whose handlers
go past the statements after it as its `else:` clause (an `if` tests `is not` where the goto
tested `is`), a state machine whose states each one test enters as those states under
their tests, and a goto into an `else` clause that runs as the statements after its loop or
`try` as a goto to those statements, and a `with` left past what follows it as a `while
True:` it leaves by `break`; and, in the shapes of generated code, a state left after a
`return` with its gotos, tests nested by the skips taken before, a loop entered by a jump to
its test at the bottom, a loop left by a test before its goto back, runs of tests that go
to one label, and a branch that may return before it goes past a loop to what follows:
each goto function is checked against the same function written without goto, on many
inputs."""

import sys

from goto import goto, label


@goto
def gcd(a, b):
    label .top
    if b == 0:
        goto .done
    a, b = b, a % b
    goto .top
    label .done
    return a


def gcd_plain(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@goto
def clamp(x, low, high):
    if x >= low:  # nothing to raise
        goto .checked_low
    x = low
    label .checked_low
    if not x > high:
        goto .checked_high
    x = high
    label .checked_high
    return x


def clamp_plain(x, low, high):
    return min(max(x, low), high)


@goto
def steps(t0):
    rv = 0
    label .top
    if t0 == 1:
        goto .done
    if t0 % 2 == 0:
        goto .even
    t0 = 3 * t0 + 1
    goto .next
    label .even  # halve
    t0 = t0 // 2
    label .next
    rv = rv + 1
    goto .top
    label .done
    return rv


def steps_plain(t0):
    rv = 0
    while t0 != 1:
        t0 = t0 // 2 if t0 % 2 == 0 else 3 * t0 + 1
        rv += 1
    return rv


@goto
def kinds(values):
    out = []
    for v in values:
        if v is None:
            goto .skip
        if isinstance(v, str):
            goto .text
        out.append(("number", v))
        goto .next
        label .text
        out.append(("text", v))
        label .next
        if v == 0:
            goto .skip
        out.append(("seen", v))
        label .skip
    return out


def kinds_plain(values):
    out = []
    for v in values:
        if v is None:
            continue
        out.append(("text", v) if isinstance(v, str) else ("number", v))
        if v != 0:
            out.append(("seen", v))
    return out


@goto
def countdown(n):
    out = []; label .top
    if n > 0:
        out.append(n)
        n -= 1
        goto .top
    return out


@goto
def banner(wide):
    if not wide:
        goto .narrow
    text = """a

b"""
    goto .done
    label .narrow
    text = "ab"
    label .done
    return text


@goto
def locate(grid, wanted):
    for row_at, row in enumerate(grid):
        for col_at, cell in enumerate(row):
            if cell == wanted:
                goto .found
    return None
    label .found
    return row_at, col_at


def locate_plain(grid, wanted):
    for row_at, row in enumerate(grid):
        for col_at, cell in enumerate(row):
            if cell == wanted:
                return row_at, col_at
    return None


@goto
def setting(line):
    for bad in ("", "="):
        if line.strip() == bad:
            goto .malformed
    key, sep, value = line.partition("=")
    if not sep:
        goto .malformed
    return key.strip(), value.strip()
    label .malformed  # one message for every bad line
    raise ValueError(f"not a setting: {line!r}")


def setting_plain(line):
    key, sep, value = line.partition("=")
    if not sep or line.strip() in ("", "="):
        raise ValueError(f"not a setting: {line!r}")
    return key.strip(), value.strip()


totals = []


@goto
def add_up(values):
    total = 0
    for v in values:
        if v < 0:
            goto .out
        total += v
    totals.append(total)
    label .out


@goto
def first_fit(sizes, limit):
    bins = [0]
    placed = 0
    label .again  # after a skip or a new bin
    for size in sizes[placed:]:
        if size > limit:
            placed += 1
            goto .again
        if bins[-1] + size > limit:
            bins.append(0)
            goto .again
        bins[-1] += size
        placed += 1
    return bins


def first_fit_plain(sizes, limit):
    bins = [0]
    for size in sizes:
        if size > limit:
            continue
        if bins[-1] + size > limit:
            bins.append(0)
        bins[-1] += size
    return bins


@goto
def drain(queue, log):
    label .pop
    while queue:
        item = queue.pop()
        if item < 0:
            queue.append(-item)
            goto .pop
        log.append(item)
    log.append("empty")


def drain_plain(queue, log):
    while queue:
        item = queue.pop()
        if item < 0:
            queue.append(-item)
            continue
        log.append(item)
    log.append("empty")


@goto
def first_negative(values, log):
    for v in values:
        if v < 0:
            log.append(v)
            goto .found
    log.append("none")
    label .found
    log.append("done")
    return log


def first_negative_plain(values, log):
    for v in values:
        if v < 0:
            log.append(v)
            break
    else:
        log.append("none")
    log.append("done")
    return log


class Step:
    """Records entering and leaving, as a file or a lock is opened and closed."""

    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append("enter " + self.name)

    def __exit__(self, *exc_info):
        self.log.append("exit " + self.name)


@goto
def first_word(lines, word, log):
    for line in lines:
        with Step(log, line):
            try:
                number = int(line)
            except ValueError:
                if line == word:
                    goto .found
                number = None
            finally:
                log.append("tried " + line)
            log.append(number)
    log.append("none")
    label .found
    log.append("done")
    return log


def first_word_plain(lines, word, log):
    for line in lines:
        with Step(log, line):
            try:
                number = int(line)
            except ValueError:
                if line == word:
                    break
                number = None
            finally:
                log.append("tried " + line)
            log.append(number)
    else:
        log.append("none")
    log.append("done")
    return log


@goto
def first_pair(rows, target, log):
    for i, row in enumerate(rows):
        log.append("row")
        for j, cell in enumerate(row):
            if cell == target:
                log.append((i, j))
                goto .found
        log.append("end of row")
    label .found
    log.append("done")
    return log


def first_pair_plain(rows, target, log):
    for i, row in enumerate(rows):
        log.append("row")
        for j, cell in enumerate(row):
            if cell == target:
                log.append((i, j))
                break
        else:
            log.append("end of row")
            continue
        break
    log.append("done")
    return log


@goto
def pair_sum(values, total, log):
    found = "none"
    for a in values:
        for b in values:
            if a + b == total:
                found = (a, b)
                goto .out
    label .out  # the search's end
    log.append(found)
    return log


def pair_sum_plain(values, total, log):
    pairs = [(a, b) for a in values for b in values if a + b == total]
    log.append(pairs[0] if pairs else "none")
    return log


@goto
def find_zero(grid, log):
    i = 0
    while i < len(grid):
        j = 0
        while j < len(grid[i]):
            if grid[i][j] == 0:
                goto .hit
            j += 1
        i += 1
        log.append(i)
    label .hit
    log.append("hit" if i < len(grid) else "miss")
    return log


def find_zero_plain(grid, log):
    for i, row in enumerate(grid):
        if 0 in row:
            break
        log.append(i + 1)
    else:
        i = len(grid)
    log.append("hit" if i < len(grid) else "miss")
    return log


@goto
def count_down_to(n, stop):
    seen = []
    while n > 0:
        if n == stop:
            goto .out
        seen.append(n)
        n -= 1
    else:
        seen.append("ran out")
    label .out
    seen.append("end")
    return seen


def count_down_to_plain(n, stop):
    seen = []
    while n > 0:
        if n == stop:
            break
        seen.append(n)
        n -= 1
    else:
        seen.append("ran out")
    seen.append("end")
    return seen


@goto
def sign_word(y):
    if y < 0:
        goto .negative
    if y == 0:
        goto .zero
    goto .positive
    label .negative
    word = "negative"
    goto .known
    label .zero
    word = "zero"
    goto .known
    label .positive
    word = "positive"
    label .known
    return word


def sign_word_plain(y):
    if y < 0:
        word = "negative"
    elif y == 0:
        word = "zero"
    else:
        word = "positive"
    return word


@goto
def grade(k, log):
    if k == 1:
        goto .first
    elif k == 2:
        goto .second
    log.append("other")
    goto .next
    label .second
    log.append("second")
    log.append(k * 2)
    goto .next
    label .first
    log.append("first")
    label .next
    log.append(k)
    return log


def grade_plain(k, log):
    if k == 1:
        log.append("first")
    elif k == 2:
        log.append("second")
        log.append(k * 2)
    else:
        log.append("other")
    log.append(k)
    return log


@goto
def parity(n):
    if n < 0:
        goto .negative
    elif n % 2:
        goto .odd
    else:
        goto .even
    label .negative
    raise ValueError(n)
    label .odd
    kind = "odd"
    goto .known
    label .even
    kind = "even"
    label .known
    return kind


def parity_plain(n):
    if n < 0:
        raise ValueError(n)
    return "odd" if n % 2 else "even"


@goto
def dial(k, log):
    if k == 1:
        goto .one
    elif k == 2:
        goto .two
    label .one
    log.append("one or none")
    goto .dialled
    label .two
    log.append("two")
    label .dialled
    return log


def dial_plain(k, log):
    log.append("two" if k == 2 else "one or none")
    return log


@goto
def table(n, m, out):
    i = 0
    label .row
    j = 0
    label .column
    out.append(i * j)
    j += 1
    if j < m:
        goto .column
    i += 1
    if i < n:
        goto .row
    return out


def table_plain(n, m, out):
    for i in range(max(n, 1)):
        for j in range(max(m, 1)):
            out.append(i * j)
    return out


@goto
def odd_squares(n, out):
    i = 0
    label .next
    i += 1
    if i % 2 == 0:
        goto .next
    out.append(i * i)
    if i < n:
        goto .next
    return out


def odd_squares_plain(n, out):
    i = 1
    out.append(1)
    while i < n:
        i += 2
        out.append(i * i)
    return out


@goto
def parse_count(text, log):
    try:
        count = int(text)
    except ValueError:
        log.append("not a number: " + text)
        goto .bad
    if count < 0:
        raise ValueError("negative")
    log.append(count)
    return count
    label .bad
    log.append(sys.exc_info())
    return None


def parse_count_plain(text, log):
    try:
        count = int(text)
    except ValueError:
        log.append("not a number: " + text)
    else:
        if count < 0:
            raise ValueError("negative")
        log.append(count)
        return count
    log.append(sys.exc_info())
    return None


@goto
def lookup(table, key, log):
    try:
        value = table[key]
    except KeyError:
        goto .missing
    except TypeError as error:
        log.append("unhashable")
        return "type"
    except LookupError as error:
        log.append("index")
        goto .missing
    log.append("found")
    value = str(value)
    label .missing
    log.append("error" in locals())
    return log


def lookup_plain(table, key, log):
    try:
        value = table[key]
    except KeyError:
        pass
    except TypeError as error:
        log.append("unhashable")
        return "type"
    except LookupError as error:
        log.append("index")
    else:
        log.append("found")
        value = str(value)
    log.append("error" in locals())
    return log


@goto
def total_of(texts):
    total = 0
    for text in texts:
        try:
            total += int(text)
        except ValueError:
            goto .next
        label .next
    return total


def total_of_plain(texts):
    total = 0
    for text in texts:
        try:
            total += int(text)
        except ValueError:
            pass
    return total


@goto
def open_three(oks, log):
    """A cleanup ladder in C's style: each failure goes to the release of what came before."""
    first = take("first", oks[0], log)
    if first is None:
        goto .none_taken
    second = take("second", oks[1], log)
    if second is None:
        goto .give_first
    third = take("third", oks[2], log)
    if third is None:
        goto .give_second
    return first, second, third
    label .give_second
    log.append("give " + second)
    label .give_first
    log.append("give " + first)
    label .none_taken
    return None


def take(name, ok, log):
    log.append("take " + name)
    return name if ok else None


def open_three_plain(oks, log):
    first = take("first", oks[0], log)
    if first is not None:
        second = take("second", oks[1], log)
        if second is not None:
            third = take("third", oks[2], log)
            if third is not None:
                return first, second, third
            log.append("give " + second)
        log.append("give " + first)
    return None


@goto
def tokens(text):
    """Splits `text` into numbers, words and single signs, skipping spaces: a state machine
    whose states are labels."""
    out = []
    i = 0
    label .start
    if i == len(text):
        return out
    c = text[i]
    if c.isdigit():
        goto .number
    if c == " ":
        goto .space
    if c.isalpha():
        goto .word
    out.append(c)
    i += 1
    goto .start
    label .number
    j = i
    label .more_digits
    i += 1
    if i < len(text) and text[i].isdigit():
        goto .more_digits
    out.append(int(text[j:i]))
    goto .start
    label .space
    i += 1
    if i < len(text) and text[i] == " ":
        goto .space
    goto .start
    label .word
    j = i
    while i < len(text) and text[i].isalnum():
        i += 1
    out.append(text[j:i])
    goto .start


def tokens_plain(text):
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isdigit():
            j = i
            while True:
                i += 1
                if not (i < len(text) and text[i].isdigit()):
                    break
            out.append(int(text[j:i]))
        elif c == " ":
            while True:
                i += 1
                if not (i < len(text) and text[i] == " "):
                    break
        elif c.isalpha():
            j = i
            while i < len(text) and text[i].isalnum():
                i += 1
            out.append(text[j:i])
        else:
            out.append(c)
            i += 1
    return out


@goto
def parse_or_default(text, default, log):
    if text is None:
        value = default
        goto .parsed
    try:
        value = int(text)
    except ValueError:
        log.append("bad")
        return None
    else:
        label .parsed
        log.append(value)
    return value


def parse_or_default_plain(text, default, log):
    if text is None:
        value = default
    else:
        try:
            value = int(text)
        except ValueError:
            log.append("bad")
            return None
    log.append(value)
    return value


@goto
def count_down_or_skip(n, skip, log):
    if skip:
        goto .counted
    while n > 0:
        log.append(n)
        n -= 1
    else:
        label .counted
        log.append("counted")
    return log


def count_down_or_skip_plain(n, skip, log):
    if not skip:
        while n > 0:
            log.append(n)
            n -= 1
    log.append("counted")
    return log


def outcome(function, *args):
    try:
        return function(*args)
    except ValueError as error:
        return str(error)




@goto
def two_sessions(n, log):
    """Two `with` statements, each left early past the statement after it: two blocks
    left by `break`, one blank line between them."""
    log.append("start")
    with Step(log, "one"):
        if n == 1:
            goto .second
        log.append("a")
    log.append("b")
    label .second

    with Step(log, "two"):
        if n == 2:
            goto .done
        log.append("c")
    log.append("d")
    label .done
    return log


@goto
def only_markers(c, values, log):
    """A body of gotos to the next statement only, which all go: `pass` keeps it a body."""
    if c:
        goto .a
        label .a
        goto .b
        label .b
    for v in values:
        if v == c:
            goto .found
    log.append("none")
    label .found
    return log


def only_markers_plain(c, values, log):
    for v in values:
        if v == c:
            break
    else:
        log.append("none")
    return log


def two_sessions_plain(n, log):
    log.append("start")
    for name, skip, inside, after in (("one", 1, "a", "b"), ("two", 2, "c", "d")):
        with Step(log, name):
            skipped = n == skip
            if not skipped:
                log.append(inside)
        if not skipped:
            log.append(after)
    return log


@goto
def digits_then_letters(text):
    """A state that only itself enters (one an edit left behind) goes, label and all."""
    i = 0
    label .digits
    if i < len(text) and text[i].isdigit():
        i += 1
        goto .digits
    digits = i
    goto .letters
    label .old_state
    i += 2
    goto .old_state
    label .letters
    if i < len(text) and text[i].isalpha():
        i += 1
        goto .letters
    return digits, i - digits


def digits_then_letters_plain(text):
    i = 0
    while i < len(text) and text[i].isdigit():
        i += 1
    digits = i
    while i < len(text) and text[i].isalpha():
        i += 1
    return digits, i - digits


@goto
def index_of_negative(values):
    """Statements after a goto that nothing reaches go with the gotos they hold, then a label
    that only those named, then its block, which nothing reaches either."""
    at = 0
    label .scan
    if at == len(values):
        return None
    if values[at] < 0:
        goto .found
    at += 1
    goto .scan
    at -= 1
    goto .scan_back
    label .scan_back
    at -= 1
    goto .scan
    label .found
    return at


def index_of_negative_plain(values):
    for at, value in enumerate(values):
        if value < 0:
            return at
    return None


@goto
def clipped(x, log):
    """`if C: goto .l` right before `label .l` is `if C: pass`: the test still runs."""
    if log.append(x) or x > 9:
        goto .clip
    label .clip
    return min(x, 9)


def clipped_plain(x, log):
    log.append(x)
    return min(x, 9)


@goto
def collatz_steps(n):
    """A block that a goto of the list itself enters, written where that goto was: the setup
    placed after the loop that it jumps ahead to."""
    steps = 0
    goto .setup
    label .loop
    if n == 1:
        return steps
    n = 3 * n + 1 if n % 2 else n // 2
    steps += 1
    goto .loop
    label .setup
    n = abs(n) or 1
    goto .loop


def collatz_steps_plain(n):
    steps = 0
    n = abs(n) or 1
    while n != 1:
        n = 3 * n + 1 if n % 2 else n // 2
        steps += 1
    return steps


@goto
def run_lengths(text, log):
    """States that one goto each enters, one of them before the loop of a state to itself
    that the others enter too: each written under its test, and the loop a `while` that
    nothing enters in its middle (taken as a loop around the state above it, it was one)."""
    i = 0
    label .top
    if i >= len(text):
        return log
    c = text[i]
    if c.isdigit():
        goto .run
    goto .other
    label .sign
    log.append("sign")
    goto .run
    label .other
    log.append(("other", c))
    if c in "+-":
        goto .sign
    goto .run
    label .run
    i += 1
    if i < len(text) and text[i] == c:
        goto .run
    log.append(("run", c))
    goto .top


def run_lengths_plain(text, log):
    i = 0
    while i < len(text):
        c = text[i]
        if not c.isdigit():
            log.append(("other", c))
            if c in "+-":
                log.append("sign")
        i += 1
        while i < len(text) and text[i] == c:
            i += 1
        log.append(("run", c))
    return log


@goto
def halve_until_odd(n):
    """Two states that only each other enter (a pair an edit left behind) go, labels and
    all: nothing else reaches them."""
    label .top
    if n and n % 2 == 0:
        n //= 2
        goto .top
    return n
    label .ping
    n += 1
    goto .pong
    label .pong
    n -= 1
    goto .ping


def halve_until_odd_plain(n):
    while n and n % 2 == 0:
        n //= 2
    return n


@goto
def batches(queue, log):
    """The list's last statements from a label on, ending in a `while True:` whose body goes
    back to that label: `while True:` around them, each goto in the inner loop `break` (it
    ends no other way, so the outer loop starts again), each before it `continue`."""
    label .batch
    if not queue:
        return log
    first = queue.pop(0)
    if first is None:
        goto .batch
    log.append(("batch", first))
    while True:
        if not queue:
            return log
        item = queue.pop(0)
        if item is None:
            goto .batch
        log.append(item)


def batches_plain(queue, log):
    while queue:
        first = queue.pop(0)
        if first is None:
            continue
        log.append(("batch", first))
        while queue:
            item = queue.pop(0)
            if item is None:
                break
            log.append(item)
        else:
            return log
    return log


@goto
def scan(rows, log):
    """A leave whose statements between hold a label another goto reaches: the inner leave
    first, then the outer, whose statements between then hold none."""
    for row in rows:
        if row is None:
            goto .stop
    log.append("all rows")
    for x in rows[-1] if rows else ():
        if x < 0:
            goto .negative
    log.append("no negative")
    label .negative
    log.append("after")
    label .stop
    log.append("end")
    return log


def scan_plain(rows, log):
    if None not in rows:
        log.append("all rows")
        if not any(x < 0 for x in (rows[-1] if rows else ())):
            log.append("no negative")
        log.append("after")
    log.append("end")
    return log



@goto
def tick_down(n, log):
    label .tick
    log.append(n)
    n -= 1
    if n > 0:
        goto .tick
    return log
    log.append("never")
    goto .tick


@goto
def pass_mark(score, log):
    if score >= 90:
        goto .good
    if score < 50:
        goto .report
    goto .good
    label .good
    log.append("pass")
    label .report
    log.append(score)
    return log


@goto
def drain_if(queue, enabled, log):
    if enabled:
        while True:
            item = queue.pop() if queue else None
            if item is None:
                goto .done
            log.append(item)
    label .done
    log.append("done")
    return log


@goto
def retry_rounds(tries, log):
    label .round
    log.append("round")
    if not tries:
        return log
    label .attempt
    if not tries:
        return log
    t = tries.pop()
    if t < 0:
        goto .round
    log.append(t)
    goto .attempt


@goto
def blink(n, log):
    goto .check
    label .on
    log.append("on")
    n -= 1
    label .check
    log.append("check")
    if n > 0:
        goto .on
    return log


def tick_down_plain(n, log):
    while True:
        log.append(n)
        n -= 1
        if n <= 0:
            return log


def pass_mark_plain(score, log):
    if score >= 90 or score >= 50:
        log.append("pass")
    log.append(score)
    return log


def drain_if_plain(queue, enabled, log):
    while enabled and queue:
        log.append(queue.pop())
    log.append("done")
    return log


def retry_rounds_plain(tries, log):
    while True:
        log.append("round")
        while tries:
            t = tries.pop()
            if t < 0:
                break
            log.append(t)
        else:
            return log


def blink_plain(n, log):
    log.append("check")
    while n > 0:
        log.append("on")
        n -= 1
        log.append("check")
    return log


@goto
def sum_below(n):
    """A compiler's loop: the test at the bottom, entered by a jump to it."""
    i = s = 0
    goto .test
    label .body
    s += i
    i += 1
    label .test
    if i < n:
        goto .body
    return s


@goto
def poll(events, log):
    """Until done: the exit test, then a goto back to the top."""
    label .top
    event = events.pop(0) if events else None
    if event is None:
        goto .out
    log.append(event)
    goto .top
    label .out
    return log


@goto
def words(text):
    """Blanks of two kinds skipped by one test each."""
    out, i = [], 0
    label .next
    if i >= len(text):
        return out
    c = text[i]
    i += 1
    if c == " ":
        goto .next
    if c == "\t":
        goto .next
    out.append(c)
    goto .next


@goto
def batch_sums(batches, log):
    """A goto loop inside a `for` whose head leaves it for the `for`'s next round: the `while`
    a person writes, with the exit after it."""
    for batch in batches:
        i, total = 0, 0
        label .item  # each item
        if (i == len(batch)
                or batch[i] is None):
            log.append(total)
    # the batch is done
            continue
        total += batch[i]
        i += 1
        if total > 10:
            log.append("over")
            total = 0
            goto .item
        goto .item
    return log


@goto
def halvings(n):
    """A test written with no blank after its keyword."""
    steps = 0
    label .top
    if(n < 2):
        return steps
    n //= 2
    steps += 1
    goto .top


def halvings_plain(n):
    steps = 0
    while n >= 2:
        n //= 2
        steps += 1
    return steps


def batch_sums_plain(batches, log):
    for batch in batches:
        i, total = 0, 0
        while i < len(batch) and batch[i] is not None:
            total += batch[i]
            i += 1
            if total > 10:
                log.append("over")
                total = 0
        log.append(total)
    return log


def sum_below_plain(n):
    i = s = 0
    while i < n:
        s += i
        i += 1
    return s


def poll_plain(events, log):
    while events and events[0] is not None:
        log.append(events.pop(0))
    return log


def words_plain(text):
    return [c for c in text if c not in " \t"]



@goto
def settle(values, log):
    """Two ways to the end: past a loop from a branch that may return first, or through it."""
    if values and values[0] < 0:
        log.append("negative")
        if len(values) > 3:
            goto .done
        return log
    for v in values:
        log.append(v)
    label .done
    log.append("done")
    return log


def settle_plain(values, log):
    if values and values[0] < 0:
        log.append("negative")
        if len(values) <= 3:
            return log
    else:
        for v in values:
            log.append(v)
    log.append("done")
    return log



for a in range(30):
    for b in range(30):
        assert gcd(a, b) == gcd_plain(a, b), (a, b)
for x in range(-5, 15):
    assert clamp(x, 0, 9) == clamp_plain(x, 0, 9), x
for n in range(1, 200):
    assert steps(n) == steps_plain(n), n
assert kinds([1, None, "a", 0, 2.5]) == kinds_plain([1, None, "a", 0, 2.5])
assert countdown(3) == [3, 2, 1]
assert banner(True) == "a\n\nb" and banner(False) == "ab"
for grid in ([[1, 2], [3, 4]], [], [[5]], [[0, 9], [9, 0]]):
    for wanted in range(10):
        assert locate(grid, wanted) == locate_plain(grid, wanted), (grid, wanted)
for line in ("a=1", " k = v ", "=x", "novalue", "", " = ", "a=b=c"):
    assert outcome(setting, line) == outcome(setting_plain, line), line
for sizes in ([], [3, 4, 5, 9, 1], [7, 7, 7], [1] * 12, [11, 2, 11, 3]):
    for limit in (5, 8, 10):
        assert first_fit(sizes, limit) == first_fit_plain(sizes, limit), (sizes, limit)
for queue in ([], [1, -2, 3], [-1, -1, 4], [0]):
    log, plain = [], []
    assert drain(list(queue), log) is None and drain_plain(list(queue), plain) is None
    assert log == plain, (queue, log, plain)
for values in ([], [1, 2], [3, -1, -2], [-5]):
    assert first_negative(values, []) == first_negative_plain(values, []), values
for lines in ([], ["1", "x", "2"], ["a", "b", "a"], ["3", "b"]):
    for word in ("a", "b", "x"):
        assert first_word(lines, word, []) == first_word_plain(lines, word, []), (lines, word)
for rows in ([], [[1, 2], [3, 4]], [[5], [], [5, 6]], [[0]]):
    for target in (0, 3, 5, 9):
        assert first_pair(rows, target, []) == first_pair_plain(rows, target, []), rows
        assert find_zero(rows, []) == find_zero_plain(rows, []), rows
for values in ([], [1, 2, 3], [4], [2, 2]):
    for total in (4, 5, 8):
        assert pair_sum(values, total, []) == pair_sum_plain(values, total, []), values
for n in range(6):
    for stop in range(-1, 6):
        assert count_down_to(n, stop) == count_down_to_plain(n, stop), (n, stop)
for y in (-3, 0, 4):
    assert sign_word(y) == sign_word_plain(y), y
for k in range(4):
    assert grade(k, []) == grade_plain(k, []), k
for n in range(4):
    for m in range(3):
        assert table(n, m, []) == table_plain(n, m, []), (n, m)
    assert odd_squares(n + 3, []) == odd_squares_plain(n + 3, []), n
for k in range(4):
    assert dial(k, []) == dial_plain(k, []), k
for n in range(-2, 5):
    assert outcome(parity, n) == outcome(parity_plain, n), n
for text in ("12", "-3", "x", ""):
    log, plain = [], []
    assert outcome(parse_count, text, log) == outcome(parse_count_plain, text, plain), text
    assert log == plain, (text, log, plain)
for table in ({"a": 1}, {}, [5, 6]):
    for key in ("a", 1, 7, []):
        assert lookup(table, key, []) == lookup_plain(table, key, []), (table, key)
assert total_of(["1", "x", "20", ""]) == total_of_plain(["1", "x", "20", ""]) == 21
for oks in ((1, 1, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1), (0, 0, 0)):
    log, plain = [], []
    assert open_three(oks, log) == open_three_plain(oks, plain) and log == plain, oks
for text in ("", "a", "12 + x3*(4 -  y)", "   ", "abc12 34de!", "9"):
    assert tokens(text) == tokens_plain(text), text
for text in (None, "7", "x"):
    log, plain = [], []
    assert parse_or_default(text, 3, log) == parse_or_default_plain(text, 3, plain), text
    assert log == plain, (text, log, plain)
for n in range(3):
    for skip in (False, True):
        assert count_down_or_skip(n, skip, []) == count_down_or_skip_plain(n, skip, []), n
for n in range(3):
    assert two_sessions(n, []) == two_sessions_plain(n, []), n
    assert only_markers(n, [1, 2], []) == only_markers_plain(n, [1, 2], []), n
for text in ("", "12ab3", "abc", "7", "12x!"):
    assert digits_then_letters(text) == digits_then_letters_plain(text), text
for values in ([], [1, 2], [3, -1, -2], [-5]):
    assert index_of_negative(values) == index_of_negative_plain(values), values
for x in (-3, 9, 10, 40):
    log, plain = [], []
    assert clipped(x, log) == clipped_plain(x, plain) and log == plain, x
for n in range(-3, 30):
    assert collatz_steps(n) == collatz_steps_plain(n), n
for text in ("", "aab", "+-11x", "7", "--", "a1+"):
    assert run_lengths(text, []) == run_lengths_plain(text, []), text
for n in range(-8, 40):
    assert halve_until_odd(n) == halve_until_odd_plain(n), n
for queue in ([], [1, 2, None, 3], [None, None, 4], [5, None]):
    assert batches(list(queue), []) == batches_plain(list(queue), []), queue
assert add_up([1, 2]) is None and add_up([1, -1, 5]) is None and totals == [3]
for rows in ([], [[1, 2]], [[1, -2]], [None], [[3], None]):
    assert scan(rows, []) == scan_plain(rows, []), rows
for n in range(4):
    assert tick_down(n, []) == tick_down_plain(n, []), n
for score in (95, 90, 70, 50, 49, 10):
    assert pass_mark(score, []) == pass_mark_plain(score, []), score
for queue, enabled in (([1, 2], True), ([1], False), ([], True)):
    assert drain_if(list(queue), enabled, []) == drain_if_plain(list(queue), enabled, [])
for tries in ([], [3, -1, 2, 5], [-1, -2], [4]):
    assert retry_rounds(list(tries), []) == retry_rounds_plain(list(tries), []), tries
for n in range(-1, 4):
    assert blink(n, []) == blink_plain(n, []), n
for n in range(-1, 5):
    assert sum_below(n) == sum_below_plain(n), n
for events in ([], [1, 2], [3, None, 4]):
    assert poll(list(events), []) == poll_plain(list(events), []), events
for text in ("", "a b\tc", "  x\t\t"):
    assert words(text) == words_plain(text), text
for batches in ([], [[]], [[1, 2], [None, 5], [4, 9, None, 1]], [[6, 6, 6], [11]]):
    assert batch_sums(batches, []) == batch_sums_plain(batches, []), batches
for n in range(-2, 70):
    assert halvings(n) == halvings_plain(n), n
for values in ([], [1, 2], [-1], [-1, 2, 3, 4]):
    assert settle(list(values), []) == settle_plain(list(values), []), values
print("ok")
