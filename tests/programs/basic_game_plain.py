"""basic_game.py written without goto: the oracle of its output."""


def show(sticks, out):
    out.append("%2d sticks %s" % (sticks, "|" * sticks))


def game(moves, out):
    sticks = 21
    turn = 0
    while True:
        show(sticks, out)
        if not moves:
            out.append("Out of input")
            break
        take = moves.pop(0)
        if take < 1 or take > 3 or take > sticks:
            out.append("You cannot take %d" % take)
            continue
        sticks -= take
        turn += 1
        if sticks == 0:
            out.append("You took the last stick: I win")
            break
        computer = (sticks - 1) % 4 or 1
        out.append("I take %d" % computer)
        sticks -= computer
        if sticks == 0:
            out.append("I took the last stick: you win")
            break
    show(sticks, out)
    return turn, sticks


for moves in ([3, 2, 5, 1, 3, 2, 1, 1, 1], [1, 1, 1], [2, 0, 4, 3, 3, 3, 3, 3]):
    out = []
    print(game(list(moves), out))
    print("\n".join(out))
