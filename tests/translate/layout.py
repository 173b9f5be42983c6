"""How a migration (`gotopy translate --migrate`) lays out the program's new source against
the source it came from: `python3 layout.py SOURCE MIGRATION`.

The oracle is Python's own `ast` of both files, nothing of gotopy's. Prints a line for each
of these, none when the layout is as a person keeps it:

- two statements of the program on one line of the migration (joined with `;`) that
  stood on different lines of the source; the translation's own statements (those that
  name a `_goto_` variable, and `break`, `continue` and `pass`) may join any line;
- a definition at the module's top level with another number of blank lines above it
  (above its decorators, where it keeps some) than in the source, where the source has
  one or two and the migration something above it: PEP 8's spacing, which the migration
  keeps whatever the translation made of the code above it."""
import ast
import sys

source, migration = (open(path, encoding="utf-8").read() for path in sys.argv[1:3])


def own(node):
    """Whether a statement is the translation's own rather than the program's."""
    if isinstance(node, (ast.Break, ast.Continue, ast.Pass)):
        return True
    return any(
        isinstance(name, ast.Name) and name.id.startswith("_goto_") for name in ast.walk(node)
    )


def simple(tree):
    """The simple statements of `tree`, by line: their text, in order."""
    lines = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and not own(node):
            lines.setdefault(node.lineno, []).append((node.col_offset, ast.unparse(node)))
    return {line: [text for _, text in sorted(nodes)] for line, nodes in lines.items()}


# Pairs of the program's statements that the source itself joins on a line.
joined = set()
for texts in simple(ast.parse(source)).values():
    joined.update(zip(texts, texts[1:]))
for line, texts in sorted(simple(ast.parse(migration)).items()):
    for pair in zip(texts, texts[1:]):
        if pair not in joined:
            print(f"line {line}: {pair[0]!r} and {pair[1]!r} joined, on two lines in the source")


def spacing(text):
    """The blank lines above each top-level definition (above its first decorator), by
    name, in order; `None` for one with nothing above it."""
    lines = text.split("\n")
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            blank = 0
            while first - 2 - blank >= 0 and not lines[first - 2 - blank].strip():
                blank += 1
            out.append((node.name, blank if first - 1 > blank else None))
    return out


for (name, wanted), (_, got) in zip(spacing(source), spacing(migration)):
    if wanted in (1, 2) and got is not None and got != wanted:
        print(f"def {name}: {got} blank lines above it, {wanted} in the source")
