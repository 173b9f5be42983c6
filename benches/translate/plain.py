"""The baselines of the `gotopy translate` benchmark: goto_code.py's programs as code
generators emit them today, a `while` loop, and a state variable dispatched by `if state ==`
or by `match state`."""

OTHER, NUMBER, NAME = 0, 1, 2


def while_loop(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s


def lex_if(text):
    text += "\0"
    numbers = names = others = 0
    i = 0
    state = OTHER
    while True:
        if state == OTHER:
            c = text[i]
            if "0" <= c <= "9":
                state = NUMBER
                continue
            if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_":
                state = NAME
                continue
            if c == "\0":
                return numbers, names, others
            others += 1
            i += 1
        elif state == NUMBER:
            i += 1
            c = text[i]
            if "0" <= c <= "9":
                continue
            numbers += 1
            state = OTHER
        else:
            i += 1
            c = text[i]
            if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or "0" <= c <= "9":
                continue
            names += 1
            state = OTHER


LEX_MATCH = '''
def lex_match(text):
    text += "\\0"
    numbers = names = others = 0
    i = 0
    state = 0
    while True:
        match state:
            case 0:
                c = text[i]
                if "0" <= c <= "9":
                    state = 1
                    continue
                if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_":
                    state = 2
                    continue
                if c == "\\0":
                    return numbers, names, others
                others += 1
                i += 1
            case 1:
                i += 1
                c = text[i]
                if "0" <= c <= "9":
                    continue
                numbers += 1
                state = 0
            case _:
                i += 1
                c = text[i]
                if "a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or "0" <= c <= "9":
                    continue
                names += 1
                state = 0
'''

# `match` needs 3.10: defined where the Python has it.
try:
    exec(compile(LEX_MATCH, __file__, "exec"))
except SyntaxError:
    lex_match = None
