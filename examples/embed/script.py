"""The script both embedding examples run (examples/embed.rs on RustPython,
examples/embed_cpython on CPython), with this directory first on `sys.path`."""
import scheduler
from goto import goto

print("first free 2-hour slot:", scheduler.first_free([1, 0, 1, 1, 0, 1, 1], 2))

# Code compiled without gotopy: the decorator rewrites it at run time.
source = '''
def collatz_steps(n):
    steps = 0
    label .again
    if n == 1:
        return steps
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
    goto .again
'''
namespace = {}
exec(compile(source, "<user code>", "exec"), namespace)
steps = goto(namespace["collatz_steps"])
print("collatz steps for 27:", steps(27))

try:
    exec(compile("def broken():\n    goto .nowhere\n", "<user code>", "exec"), namespace)
    goto(namespace["broken"])
except SyntaxError as error:
    print("refused:", error.msg.split(":")[0], "at line", error.lineno)
