"""A module using goto, imported by the embedded script: gotopy's import hook compiles it."""
from goto import goto, label


@goto
def first_free(slots, wanted):
    """The first hour in `slots` (hour, free) free for `wanted` consecutive hours."""
    for start in range(len(slots)):
        for hour in range(start, start + wanted):
            if hour >= len(slots) or not slots[hour]:
                goto .next_start
        return start
        label .next_start
    return None
