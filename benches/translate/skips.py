"""A function of N forward skips, the shape `gotopy translate` writes as `if`s before the
rest (docs/translate.md): `if x % k == 0: goto .lk`, `s += k`, `label .lk`, N times. For
timing `translate` against `check` on a large module (docs/performance.md):

    python3 benches/translate/skips.py 64000 > skips.py
    /usr/bin/time target/release/gotopy check skips.py
    /usr/bin/time target/release/gotopy translate skips.py -o skips_plain.py
"""

import sys

n = int(sys.argv[1])
print("from goto import goto, label\n\n\n@goto\ndef f(x):\n    s = 0")
for k in range(n):
    print(f"    if x % {k + 2} == 0:\n        goto .l{k}\n    s += {k}\n    label .l{k}")
print("    return s")
