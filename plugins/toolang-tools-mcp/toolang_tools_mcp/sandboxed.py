"""A stdio MCP server in the tool sandbox, spoken to with the SDK's own stdio framing.

The server is started by :func:`toolang_core.open_tool_process` — bubblewrap, the
runtime's state and the user's secrets hidden, its own working directory
(``<[tools] workdir>/mcp-servers/<name>``) the one writable place besides the server's
``write_paths``, the network only with ``network = true``, dying with the runtime —
and the SDK's stdio transport (:func:`mcp.server.stdio.stdio_server`, given streams:
newline-delimited JSON-RPC, the same messages either way) runs over its pipes. The
protocol is the SDK's; this module only joins its streams to the process's.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from toolang_core import tool_process_env, tool_workdir

if TYPE_CHECKING:
    from toolang_core import OpenToolProcess, ToolangConfig
    from toolang_tools_mcp.settings import ServerSettings

WORKDIRS = "mcp-servers"
"""Under the tools' working directory root: one directory per server."""


@contextlib.asynccontextmanager
async def sandboxed_stdio(
    name: str, server: ServerSettings, env: Mapping[str, str], config: ToolangConfig | None
) -> AsyncIterator[Any]:
    """The SDK's transport streams ``(read, write)`` to ``server`` running in the tool
    sandbox for as long as the block runs (see the module docstring).

    :raises toolang_core.SandboxError: when no sandbox is available and one is
        required, or a configured path cannot be shown to the server.
    """
    import anyio
    from mcp.server.stdio import stdio_server

    from toolang_core import open_tool_process

    assert server.command is not None
    workdir = server_workdir(name, config)
    async with open_tool_process(
        [server.command, *server.args],
        config=config,
        env=tool_process_env(None, extra=env),
        workdir=workdir,
        cwd=server.cwd,
        network="allow" if server.network else "off",
        allow_hosts=server.allow_hosts or None,
        read_only=server.read_paths,
        writable=server.write_paths,
    ) as program:
        errors = asyncio.ensure_future(_forward_stderr(program))
        try:
            with anyio.CancelScope() as scope:
                lines, pipe = cast(Any, _Lines(program)), cast(Any, _Pipe(program))
                async with stdio_server(lines, pipe) as streams:
                    try:
                        yield streams
                    finally:
                        # its output ends, and with it the SDK's reading; nothing is
                        # waited for past that (a message no one reads any more)
                        await program.close()
                        scope.cancel()
        finally:
            await program.close()
            errors.cancel()


def server_workdir(name: str, config: ToolangConfig | None) -> Path:
    """The server's own working directory (made if missing)."""
    root = tool_workdir(cast(Any, _Outside(config)))
    directory = root / WORKDIRS / name
    directory.mkdir(parents=True, exist_ok=True)
    return directory


class _Outside:
    """What :func:`toolang_core.tool_workdir` reads of a call: the runtime's config."""

    def __init__(self, config: ToolangConfig | None) -> None:
        self.runtime = _Runtime(config)


class _Runtime:
    def __init__(self, config: ToolangConfig | None) -> None:
        self.config = config


class _Lines:
    """The server's standard output as the SDK reads a text file: line by line (no
    line length limit: a large result is one line)."""

    def __init__(self, program: OpenToolProcess) -> None:
        self.stream = program.stdout

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        buffer = bytearray()
        scanned = 0
        while chunk := await self.stream.read(1 << 16):
            buffer += chunk
            while (end := buffer.find(b"\n", scanned)) >= 0:
                line = bytes(buffer[: end + 1])
                del buffer[: end + 1]
                scanned = 0
                yield line.decode("utf-8", errors="replace")
            scanned = len(buffer)
        if buffer.strip():
            yield buffer.decode("utf-8", errors="replace")


class _Pipe:
    """The server's standard input as the SDK writes a text file. A server that is gone
    takes what is written (its output's end tells the session it is gone)."""

    def __init__(self, program: OpenToolProcess) -> None:
        self.stream = program.stdin

    async def write(self, text: str) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.stream.write(text.encode("utf-8"))

    async def flush(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            await self.stream.drain()


async def _forward_stderr(program: OpenToolProcess) -> None:
    """What the server writes to its standard error goes to the runtime's (as the SDK's
    stdio client does)."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := await program.stderr.read(1 << 16):
            sys.stderr.write(chunk.decode("utf-8", errors="replace"))
            sys.stderr.flush()
