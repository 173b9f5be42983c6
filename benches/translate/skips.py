"""A function of N forward skips, the shape `gotopy translate` writes as `if`s before the
rest (docs/translate.md): `if x % k == 0: goto .lk`, `s += k`, `label .lk`, N times. For
timing `translate` against `check` on a large module (docs/performance.md):

    python3 benches/translate/skips.py 64000 > skips.py
    /usr/bin/time target/release/gotopy check skips.py
    /usr/bin/time target/release/gotopy translate skips.py -o skips_plain.py

With `--states`, a dispatcher of N states instead, each entered by one test (`if x == k:
goto .sk`) and going back to a label at the top: the shape the inline pass takes.
"""

import sys

n = int(sys.argv[1])
print("from goto import goto, label\n\n\n@goto\ndef f(x):\n    s = 0")
if "--states" in sys.argv[2:]:
    # A dispatcher of N states, each entered by one test and going back to the top: the
    # states move under their tests (the inline pass), the top is the dispatch loop.
    print("    label .top")
    for k in range(n):
        print(f"    if x == {k}:\n        goto .s{k}")
    print("    return s")
    for k in range(n):
        print(f"    label .s{k}\n    s += {k}\n    x = (x * 7 + 1) % {n + 1}\n    goto .top")
else:
    for k in range(n):
        print(f"    if x % {k + 2} == 0:\n        goto .l{k}\n    s += {k}\n    label .l{k}")
    print("    return s")
