"""`python -m gotopy server` driven by a real LSP client: pytest-lsp (pygls), which also
checks each answer against the capabilities the client announced.

Run by `test_server.py` where pytest-lsp is installed (tests/cpython.rs installs it on one
version): `python -m pytest python/tests/lsp`. Every expected position is found in the
test's own text, and every diagnostic of the `err` and `ok` fixtures is compared with what
`python -m gotopy check --format json` prints for the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[3]

# Shared with the server's own tests (src/server/tests.rs).
PROGRAM = (ROOT / "tests" / "server" / "walk.py").read_text(encoding="utf-8")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gotopy", "server"]))
async def client(lsp_client: LanguageClient):
    general = types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf32])
    capabilities = types.ClientCapabilities(
        general=general,
        text_document=types.TextDocumentClientCapabilities(
            document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            rename=types.RenameClientCapabilities(prepare_support=True),
        ),
    )
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf32
    yield
    await lsp_client.shutdown_session()


def position(text: str, needle: str, nth: int = 0, shift: int = 0) -> types.Position:
    """The position of the `nth` `needle` in `text` plus `shift` characters."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at)
    return types.Position(line=line, character=at - (text.rfind("\n", 0, at) + 1) + shift)


def name_range(text: str, marker: str, nth: int = 0) -> types.Range:
    """The range of the name after the dot in the `nth` `marker` (such as `label .a`)."""
    dot = marker.rindex(".") + 1
    return types.Range(start=position(text, marker, nth, dot), end=position(text, marker, nth, len(marker)))


async def opened(client: LanguageClient, uri: str, text: str) -> Sequence[types.Diagnostic]:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    while uri not in client.diagnostics:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def at(uri: str, where: types.Position) -> dict:
    return {"text_document": types.TextDocumentIdentifier(uri=uri), "position": where}


@pytest.mark.asyncio
async def test_labels_are_symbols(client: LanguageClient):
    uri = "file:///work/walk.py"
    diagnostics = await opened(client, uri, PROGRAM)
    assert [(d.code, d.range) for d in diagnostics] == [
        ("G102", position_range(PROGRAM, "label .unused")),
    ]
    done = name_range(PROGRAM, "label .done")
    for goto in (0, 1):
        found = await client.text_document_definition_async(
            types.DefinitionParams(**at(uri, position(PROGRAM, "goto .done", goto, 6)))
        )
        assert found == types.Location(uri=uri, range=done)
    references = await client.text_document_references_async(
        types.ReferenceParams(
            **at(uri, position(PROGRAM, "label .done", 0, 7)),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert [place.range for place in references or []] == [
        name_range(PROGRAM, "goto .done", 0),
        name_range(PROGRAM, "goto .done", 1),
        done,
    ]
    hover = await client.text_document_hover_async(types.HoverParams(**at(uri, position(PROGRAM, "goto .done"))))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value == (
        "`goto .done` jumps to `label .done` at line 11.\n\nIt leaves the `with` at line 7 "
        "(`__exit__` runs) and the `for` at line 6 (its iterator is dropped)."
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    outline = [(s.name, [c.name for c in s.children or []]) for s in symbols or [] if isinstance(s, types.DocumentSymbol)]
    assert outline == [("walk", [".done"]), ("plain", [".unused"])]
    edit = await client.text_document_rename_async(
        types.RenameParams(**at(uri, position(PROGRAM, "label .done", 0, 8)), new_name="finished")
    )
    assert edit is not None and edit.changes is not None
    assert [e.range for e in edit.changes[uri]] == [place.range for place in references or []]
    assert {e.new_text for e in edit.changes[uri]} == {"finished"}


def position_range(text: str, needle: str) -> types.Range:
    return types.Range(start=position(text, needle), end=position(text, needle, 0, len(needle)))


@pytest.mark.asyncio
async def test_quick_fix_adds_the_decorator(client: LanguageClient):
    uri = "file:///work/fix.py"
    diagnostics = await opened(client, uri, PROGRAM)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    assert actions is not None and isinstance(actions[0], types.CodeAction)
    assert actions[0].title == "Decorate `plain` with `@goto`"
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    (edit,) = actions[0].edit.changes[uri]
    start = position(PROGRAM, "def plain")
    assert edit == types.TextEdit(range=types.Range(start=start, end=start), new_text="@goto\n")


@pytest.mark.asyncio
async def test_quick_fix_removes_an_unused_label(client: LanguageClient):
    uri = "file:///work/unused.py"
    text = "from goto import goto\n\n@goto\ndef f(x):\n    x += 1; label .spare\n    return x\n"
    (diagnostic,) = await opened(client, uri, text)
    assert diagnostic.code == "G101" and diagnostic.range == name_range(text, "label .spare")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    assert actions is not None and isinstance(actions[0], types.CodeAction)
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    (edit,) = actions[0].edit.changes[uri]
    assert edit == types.TextEdit(range=position_range(text, "; label .spare"), new_text="")


FIXTURES = sorted((ROOT / "fixtures" / "err").glob("*.py")) + sorted((ROOT / "fixtures" / "ok").glob("*.py"))


@pytest.fixture
def checked() -> dict[str, list[dict]]:
    """What `python -m gotopy check --format json` reports for each fixture (with
    `--all-scopes` for those whose first lines ask for it), by path."""
    asks = [path for path in FIXTURES if "# gotopy: all-scopes" in path.read_text(encoding="utf-8").splitlines()[:5]]
    by_path: dict[str, list[dict]] = {str(path): [] for path in FIXTURES}
    for chosen, flags in (([p for p in FIXTURES if p not in asks], []), (asks, ["--all-scopes"])):
        command = [sys.executable, "-m", "gotopy", "check", "--format", "json", *flags, *map(str, chosen)]
        for diagnostic in json.loads(subprocess.run(command, capture_output=True, check=False).stdout):
            by_path[diagnostic["path"]].append(diagnostic)
    return by_path


@pytest.mark.asyncio
async def test_fixture_diagnostics_are_checks(client: LanguageClient, checked: dict[str, list[dict]]):
    compared = 0
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8")
        published = await opened(client, path.as_uri(), text)
        expected = [
            (
                d["code"],
                types.DiagnosticSeverity.Error if d["severity"] == "error" else types.DiagnosticSeverity.Warning,
                d["message"] + (f"\nhelp: {d['help']}" if d["help"] else ""),
                span(d),
                [(r["message"], span(r)) for r in d["related"]],
            )
            for d in checked[str(path)]
        ]
        got = [
            (d.code, d.severity, d.message, d.range, [(r.message, r.location.range) for r in d.related_information or []])
            for d in published
        ]
        assert got == expected, path
        compared += len(expected)
    assert compared >= 30


def span(place: dict) -> types.Range:
    """A `check --format json` place (one-based lines and character columns) as LSP's."""
    return types.Range(
        start=types.Position(line=place["line"] - 1, character=place["column"] - 1),
        end=types.Position(line=place["end_line"] - 1, character=place["end_column"] - 1),
    )
