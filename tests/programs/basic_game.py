"""A BASIC game ported line for line: line numbers as labels, GOSUB as a push of the line
to return to and a jump, RETURN as a dispatch on the line popped, INPUT from a list."""
from goto import with_goto


@with_goto
def game(moves, out):
    returns = []
    sticks = 21
    turn = 0
    label .l20
    returns.append(30)
    goto .l500
    label .l30
    if not moves:
        goto .l900
    take = moves.pop(0)
    if take < 1 or take > 3 or take > sticks:
        goto .l400
    sticks = sticks - take
    turn = turn + 1
    if sticks == 0:
        goto .l800
    computer = (sticks - 1) % 4
    if computer == 0:
        computer = 1
    out.append("I take %d" % computer)
    sticks = sticks - computer
    if sticks == 0:
        goto .l850
    goto .l20
    label .l400
    out.append("You cannot take %d" % take)
    goto .l20
    label .l500
    out.append("%2d sticks %s" % (sticks, "|" * sticks))
    r = returns.pop()
    if r == 30:
        goto .l30
    if r == 960:
        goto .l960
    raise RuntimeError("RETURN without GOSUB")
    label .l800
    out.append("You took the last stick: I win")
    goto .l950
    label .l850
    out.append("I took the last stick: you win")
    goto .l950
    label .l900
    out.append("Out of input")
    label .l950
    returns.append(960)
    goto .l500
    label .l960
    return turn, sticks


for moves in ([3, 2, 5, 1, 3, 2, 1, 1, 1], [1, 1, 1], [2, 0, 4, 3, 3, 3, 3, 3]):
    out = []
    print(game(list(moves), out))
    print("\n".join(out))
