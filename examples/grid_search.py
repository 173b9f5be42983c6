"""What goto is good for: leaving several nested loops at once, and a retry loop that reads
top to bottom. Run it with `gotopy run examples/grid_search.py`."""
from goto import goto, label


@goto
def find(grid, wanted):
    """The first (row, column) holding `wanted`, or None: one goto leaves both loops."""
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if value == wanted:
                goto .found
    return None
    label .found
    return (r, c)


@goto
def parse_all(lines):
    """Parse integers, skipping bad lines and counting them, without flag variables."""
    total, bad = 0, 0
    index = 0
    label .next_line
    if index == len(lines):
        return total, bad
    line = lines[index]
    index += 1
    if not line.strip().lstrip("-").isdigit():
        bad += 1
        goto .next_line
    total += int(line)
    goto .next_line


grid = [[3, 8, 1], [9, 4, 7], [2, 6, 5]]
print("7 is at", find(grid, 7), "- 10 is at", find(grid, 10))
print("total and bad lines:", parse_all(["12", "x", " 30 ", "-2", "", "4"]))
