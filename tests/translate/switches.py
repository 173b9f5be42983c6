"""Switches in the shapes people write them: cases that return, cases that `break` out of
the switch (in a loop, where `break` leaves only the switch), cases that fall through into
the next as in C, an opcode dispatch on an expression that goes to a label after the switch,
the default after the switch, a subject that binds a name as it is evaluated, and switches
inside the cases of another, on the same key in two cases, and a switch with no case, whose
subject is still evaluated. Each goto
function is checked against the same function written without goto (an `if`/`elif`
chain), on many inputs: the module's assertions are the oracle."""

from goto import case, goto, label, switch


@switch
def op_name(op):
    while switch *op:
        case[0]
        return "halt"
        case[1]
        return "push"
        case[2, 3]
        return "arith"
    return "unknown"


def op_name_twin(op):
    if op == 0:
        return "halt"
    if op == 1:
        return "push"
    if op in (2, 3):
        return "arith"
    return "unknown"


@switch
def days_in(month, leap):
    days = 31
    while switch *month:
        case[4, 6, 9, 11]
        days = 30
        break
        case[2]
        days = 28
        if leap:
            days = 29
    return days


def days_in_twin(month, leap):
    if month in (4, 6, 9, 11):
        return 30
    if month == 2:
        return 29 if leap else 28
    return 31


@switch
def grade(score):
    band = score // 10
    notes = []
    while switch *band:
        case[10]
        notes.append("perfect")
        case[9]
        notes.append("excellent")
        case[8]
        notes.append("good")
        break
        case[7, 6]
        notes.append("pass")
        goto .graded
    notes.append("fail")
    label .graded
    return notes


def grade_twin(score):
    band = score // 10
    notes = []
    if band == 10:
        notes += ["perfect", "excellent", "good"]
        notes.append("fail")
    elif band == 9:
        notes += ["excellent", "good"]
        notes.append("fail")
    elif band == 8:
        notes.append("good")
        notes.append("fail")
    elif band in (7, 6):
        notes.append("pass")
    else:
        notes.append("fail")
    return notes


@switch
def run(code):
    pc, stack = 0, []
    label .next
    while switch *code[pc]:
        case["push"]
        stack.append(code[pc + 1])
        pc += 2
        goto .next
        case["add"]
        stack.append(stack.pop() + stack.pop())
        pc += 1
        goto .next
        case["jz"]
        if stack.pop() == 0:
            pc = code[pc + 1]
            goto .next
        pc += 2
        goto .next
        case["halt"]
        return stack
    raise ValueError(code[pc])


def run_twin(code):
    pc, stack = 0, []
    while True:
        op = code[pc]
        if op == "push":
            stack.append(code[pc + 1])
            pc += 2
        elif op == "add":
            stack.append(stack.pop() + stack.pop())
            pc += 1
        elif op == "jz":
            if stack.pop() == 0:
                pc = code[pc + 1]
            else:
                pc += 2
        elif op == "halt":
            return stack
        else:
            raise ValueError(op)


@switch
def size_word(items):
    while switch *(count := len(items)):
        case[0]
        return "none"
        case[1]
        return "one"
    return f"{count} items"


def size_word_twin(items):
    count = len(items)
    if count == 0:
        return "none"
    if count == 1:
        return "one"
    return f"{count} items"


@switch
def move(mode, key):
    while switch *mode:
        case["walk"]
        while switch *key:
            case["w"]
            return (0, 1)
            case["s"]
            return (0, -1)
        return (0, 0)
        case["fly"]
        step = 0
        while switch *key:
            case["w"]
            step = 2
            break
            case["s", "x"]
            step = -2
        return (step, step)
    return None


def move_twin(mode, key):
    if mode == "walk":
        return {"w": (0, 1), "s": (0, -1)}.get(key, (0, 0)) if isinstance(key, str) else (0, 0)
    if mode == "fly":
        step = {"w": 2, "s": -2, "x": -2}.get(key, 0) if isinstance(key, str) else 0
        return (step, step)
    return None


@switch
def drop_last(items):
    while switch *items.pop():
        items.append("never")  # no case: the body never runs
    return items


def drop_last_twin(items):
    items.pop()
    return items


def outcome(function, *args):
    try:
        return function(*args)
    except Exception as error:  # the same exception, with the same value
        return type(error), error.args


subjects = [-1, 0, 1, 2, 3, 4, 5, True, False, None, "1", 2.0, 2.5]
for op in subjects:
    assert op_name(op) == op_name_twin(op), op
for month in range(0, 14):
    for leap in (False, True):
        assert days_in(month, leap) == days_in_twin(month, leap), (month, leap)
for size in range(4):
    assert size_word([0] * size) == size_word_twin([0] * size), size
for score in range(0, 101):
    assert grade(score) == grade_twin(score), score
for mode in ("walk", "fly", "swim", None, 1):
    for key in ("w", "s", "x", "q", None, 0):
        assert move(mode, key) == move_twin(mode, key), (mode, key)
programs = [
    ["push", 2, "push", 3, "add", "halt"],
    ["push", 0, "jz", 5, "push", 9, "halt"],
    ["push", 1, "jz", 5, "push", 9, "halt"],
    ["push", 1, "mul", "halt"],
]
for code in programs:
    assert outcome(run, code) == outcome(run_twin, code), code
for items in ([], [1], [1, 2]):
    assert outcome(drop_last, list(items)) == outcome(drop_last_twin, list(items)), items
print("ok")
