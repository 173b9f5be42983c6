"""Types of the native module (python/src/lib.rs)."""

from collections.abc import Callable

class Checked:
    @property
    def path(self) -> str: ...
    @property
    def has_errors(self) -> bool: ...

def decode_source(data: bytes) -> str: ...
def check(path: str, data: bytes, *, all_scopes: bool = False) -> Checked: ...
def render_text(checked: list[Checked], *, color: bool = False) -> str: ...
def render_json(checked: list[Checked]) -> str: ...
def late_error(
    path: str,
    data: bytes,
    *,
    internal: bool,
    message: str,
    help: str,
    span: tuple[int, int, int, int],
    color: bool = False,
) -> str: ...
def plan(
    path: str, data: bytes, *, all_scopes: bool = False, color: bool = False, scope_line: int | None = None
) -> str: ...

class BytecodeError(Exception): ...

_Position = tuple[int | None, int | None, int | None, int | None]

class Instructions:
    def __init__(
        self,
        ops: list[int],
        args: list[int],
        targets: list[int | None],
        handler_of: list[int | None],
        handlers: list[tuple[int, int, bool]],
        positions: list[_Position],
        inserted: list[bool],
    ) -> None: ...
    def view(
        self,
    ) -> tuple[
        bytes, list[int], list[int | None], list[int | None], list[tuple[int, int, bool]], list[_Position]
    ]: ...

class Opcodes:
    def __init__(
        self,
        *,
        caches: list[int],
        names: list[str],
        jumps: list[int],
        backward: list[int],
        not_control: list[int],
        unconditional: list[int],
        terminal: list[int],
        extended_arg: int,
        jump_forward: int,
        jump_backward: int,
        merged_location_runs: bool,
        stack_effect: Callable[[int, int, bool], int],
    ) -> None: ...
    def decode(self, code: bytes, exceptions: bytes, locations: bytes, first_line: int) -> Instructions: ...
    def depths(
        self, instructions: Instructions, seeds: dict[int, int] = ..., known: list[int | None] | None = None
    ) -> tuple[list[int | None], int]: ...
    def assemble(self, instructions: Instructions, first_line: int) -> tuple[bytes, bytes, bytes, int]: ...
