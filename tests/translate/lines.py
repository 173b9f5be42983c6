"""Where `gotopy translate` put each statement of a source: `python3 lines.py SOURCE OUTPUT
MODE` (MODE: `decorated`, or `all-scopes` when every scope with markers is rewritten).

The oracle is Python's own `ast` of both files, nothing of gotopy's. A statement (but for
gotopy's markers and imports) is on its line when a statement of the same kind that says
the same (a simple statement whole, a compound one by what its header holds) stands on that
line of the output, alone or among others joined with `;`. A rewritten definition counts as
on its line on its removed decorator's, where it goes so that its code object's first line
stays the source's.

Prints each statement off its line, then `counts` and, for the statements before the first
rewritten scope, inside rewritten scopes and after them outside any, how many were checked
and how many are off."""
import ast
import sys

DECORATORS = ("goto", "with_goto", "switch")
MARKERS = ("goto", "label", "switch", "case")
source, output = (open(path, encoding="utf-8").read() for path in sys.argv[1:3])
all_scopes = sys.argv[3] == "all-scopes"


def name(node):
    return getattr(node, "id", getattr(node, "attr", None))


def rewritten(node):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
        name(d) in DECORATORS for d in node.decorator_list
    )


def marker(node):
    value = getattr(node, "value", None)
    while isinstance(value, (ast.Attribute, ast.Subscript, ast.Starred, ast.BinOp)):
        value = value.left if isinstance(value, ast.BinOp) else value.value
    return isinstance(node, (ast.Expr, ast.While)) and (
        isinstance(value, ast.Name) and value.id in MARKERS
        or isinstance(node, ast.While) and "switch" in ast.unparse(node.test)
    )


def goto_import(node):
    if isinstance(node, ast.ImportFrom):
        return node.module in ("goto", "gotopy")
    return isinstance(node, ast.Import) and all(a.name in ("goto", "gotopy") for a in node.names)


def says(node):
    """What a statement's line shows of it."""
    if isinstance(node, (ast.If, ast.While)):
        return ast.unparse(node.test)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return ast.unparse(node.iter)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return ", ".join(ast.unparse(item.context_expr) for item in node.items)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Match):
        return ast.unparse(node.subject)
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        return ""
    return ast.unparse(node)


def wanted_line(node):
    if rewritten(node) and all(name(d) in DECORATORS for d in node.decorator_list):
        return node.decorator_list[0].lineno
    return node.lineno


tree = ast.parse(source)
found = {}
for node in ast.walk(ast.parse(output)):
    if isinstance(node, ast.stmt):
        found.setdefault(node.lineno, []).append(node)
spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if rewritten(n)]
starts = [n.lineno for n in ast.walk(tree) if rewritten(n)]
starts += [d.lineno for n in ast.walk(tree) if rewritten(n) for d in n.decorator_list]
if all_scopes:
    # Every scope with a marker is rewritten: its dispatch loop starts before its first one.
    starts += [n.lineno for n in ast.walk(tree) if marker(n)]
first = min(starts, default=len(source.splitlines()) + 1)
counts = {"before": [0, 0], "inside": [0, 0], "after": [0, 0]}
for node in ast.walk(tree):
    if not isinstance(node, ast.stmt) or marker(node) or goto_import(node):
        continue
    if node.lineno < first:
        where = "before"
    elif all_scopes or any(start < node.lineno <= end for start, end in spans):
        where = "inside"
    else:
        where = "after"
    line = wanted_line(node)
    on_line = any(
        type(other) is type(node) and says(node) in says(other) for other in found.get(line, [])
    )
    counts[where][0] += 1
    if not on_line:
        counts[where][1] += 1
        text = source.splitlines()[node.lineno - 1].strip()
        print(f"off {where} line {node.lineno}: {text[:70]}")
print("counts", *(n for where in ("before", "inside", "after") for n in counts[where]))
