"""Three-address code as a compiler course's generator emits it for `with_goto`: a label per
basic block, temporaries in locals, procedures called through a stack of return addresses,
and a return block that dispatches on the address it pops."""
from goto import with_goto


@with_goto
def main(out):
    stack = []
    n = 1
    label .L_loop
    if n > 12:
        goto .L_end
    a0 = n
    stack.append(1)
    goto .P_fact
    label .R1
    f = rv
    a0 = f
    a1 = 2 ** n + 1
    stack.append(2)
    goto .P_gcd
    label .R2
    g = rv
    a0 = n
    stack.append(3)
    goto .P_collatz
    label .R3
    out.append((n, f % 1000003, g, rv))
    n = n + 1
    goto .L_loop

    label .P_fact
    rv = 1
    t0 = a0
    label .P_fact_loop
    if t0 <= 1:
        goto .RET
    rv = rv * t0
    t0 = t0 - 1
    goto .P_fact_loop

    label .P_gcd
    t0 = a0
    t1 = a1
    label .P_gcd_loop
    if t1 == 0:
        goto .P_gcd_done
    t2 = t0 % t1
    t0 = t1
    t1 = t2
    goto .P_gcd_loop
    label .P_gcd_done
    rv = t0
    goto .RET

    label .P_collatz
    t0 = a0
    rv = 0
    label .P_collatz_loop
    if t0 == 1:
        goto .RET
    t1 = t0 % 2
    if t1 == 0:
        goto .P_collatz_even
    t0 = 3 * t0 + 1
    goto .P_collatz_next
    label .P_collatz_even
    t0 = t0 // 2
    label .P_collatz_next
    rv = rv + 1
    goto .P_collatz_loop

    label .RET
    t9 = stack.pop()
    if t9 == 1:
        goto .R1
    if t9 == 2:
        goto .R2
    if t9 == 3:
        goto .R3
    raise RuntimeError("bad return address %r" % t9)

    label .L_end
    return out


for row in main([]):
    print(*row)
