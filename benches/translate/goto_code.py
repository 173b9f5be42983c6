"""The goto programs of the `gotopy translate` benchmark (run.py translates this file): the
counting loop of python/benches/bench.py, and a lexer whose three states jump to each other
directly. plain.py has the same programs as code generators write them without goto."""

from goto import goto, label


@goto
def goto_loop(n):
    i = 0
    s = 0
    label .top
    if i < n:
        s += i
        i += 1
        goto .top
    return s


@goto
def lex_goto(text):
    """Counts the numbers, names and other characters of `text`: each state reads the
    character at `i` and goes to the state it starts."""
    text += "\0"
    numbers = names = others = 0
    i = 0
    label .other
    c = text[i]
    if "0" <= c <= "9":
        goto .number
    if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_":
        goto .name
    if c == "\0":
        return numbers, names, others
    others += 1
    i += 1
    goto .other
    label .number
    i += 1
    c = text[i]
    if "0" <= c <= "9":
        goto .number
    numbers += 1
    goto .other
    label .name
    i += 1
    c = text[i]
    if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or "0" <= c <= "9":
        goto .name
    names += 1
    goto .other
