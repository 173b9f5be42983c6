"""fortran_port.py written without goto: the oracle of its output."""

lines = []
calls = 0
kinds = [0, 0, 0]
for i in range(-1, 6):
    y = (i - 1) * (i - 2) * (i - 3)
    calls += 2
    if y < 0:
        kinds[0] += 1
        lines.append("%3d %6d  below" % (i, y))
    elif y == 0:
        kinds[1] += 1
        lines.append("%3d %6d  ROOT" % (i, y))
    else:
        kinds[2] += 1
        lines.append("%3d %6d  above" % (i, y))
print("\n".join(lines))
print(calls, kinds)
