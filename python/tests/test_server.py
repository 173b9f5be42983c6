"""`python -m gotopy server` and the `gotopy server` command of the installed package.

On every version, a small client written here (JSON-RPC over the server's standard input
and output, as LSP frames it) opens a document and reads its diagnostics from both
commands. Where pytest-lsp is installed (tests/cpython.rs installs it on one version), the
suite in `lsp/` drives the server with it: definition, references, rename, hover, the
outline, both quick fixes, and every fixture's diagnostics against `check --format json`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent

TEXT = "from goto import goto\n\n@goto\ndef f():\n    goto .nowhere\n"


class Client:
    """A language client that speaks just enough LSP for a smoke test."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict:
        assert self.process.stdout is not None
        length = 0
        while (line := self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def request(self, method: str, params: object) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while "id" not in (message := self.receive()) or message["id"] != self.next_id:
            pass
        return message

    def close(self) -> int:
        self.request("shutdown", None)
        self.send({"method": "exit"})
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code


class ServerCommands(unittest.TestCase):
    def diagnostics_from(self, command: list[str]) -> None:
        client = Client(command)
        try:
            answer = client.request("initialize", {"capabilities": {}})
            self.assertEqual(answer["result"]["serverInfo"]["name"], "gotopy")
            client.send({"method": "initialized", "params": {}})
            document = {"uri": "file:///t.py", "languageId": "python", "version": 1, "text": TEXT}
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
            published = client.receive()
        finally:
            code = client.close()
        self.assertEqual(code, 0)
        self.assertEqual(published["method"], "textDocument/publishDiagnostics")
        (diagnostic,) = published["params"]["diagnostics"]
        self.assertEqual(diagnostic["code"], "G002")
        line = TEXT.splitlines()[4]
        start = line.index("nowhere")
        self.assertEqual(
            diagnostic["range"],
            {"start": {"line": 4, "character": start}, "end": {"line": 4, "character": start + len("nowhere")}},
        )

    def test_python_m_gotopy_server(self) -> None:
        self.diagnostics_from([sys.executable, "-m", "gotopy", "server"])

    def test_the_gotopy_command(self) -> None:
        # Beside the interpreter, where pip puts scripts (gotopy.exe in Scripts on Windows).
        command = shutil.which("gotopy", path=str(Path(sys.executable).parent))
        if command is None:
            self.skipTest("no gotopy command beside this interpreter (the wheel was not installed by pip)")
        self.diagnostics_from([command, "server", "--all-scopes"])


class WithPytestLsp(unittest.TestCase):
    def test_pytest_lsp_suite(self) -> None:
        if importlib.util.find_spec("pytest_lsp") is None:
            self.skipTest("pytest-lsp is not installed here (tests/cpython.rs installs it on one version)")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "lsp")],
            capture_output=True,
            text=True,
            env=env,
            cwd=HERE,
            check=False,
        )
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("4 passed", result.stdout)


if __name__ == "__main__":
    unittest.main()
