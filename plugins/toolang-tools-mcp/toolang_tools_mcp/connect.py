"""Open an MCP client for one configured server, with the official SDK's transports.

Secrets (header values, bearer tokens) are read from the environment here, when the
connection opens, and go nowhere else: not into settings, errors or logs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from toolang_tools_mcp.settings import ServerSettings

if TYPE_CHECKING:
    from toolang_core import ToolangConfig


class ServerStartError(RuntimeError):
    """An MCP server could not be started or did not answer as an MCP server."""


def open_client(
    name: str,
    server: ServerSettings,
    env: Mapping[str, str] | None = None,
    config: ToolangConfig | None = None,
    message_handler: Any = None,
) -> AbstractAsyncContextManager[Any]:
    """An ``mcp.Client`` (not yet entered) for ``server``; entering it starts the server
    (stdio: in the tool sandbox ``config`` describes, :mod:`.sandboxed`) or connects
    (HTTP) and runs the MCP handshake.

    ``message_handler`` gets the server's notifications (``None``: the SDK's default).

    :raises ServerStartError: naming the server and the missing environment variable.
    """
    from mcp import Client

    from toolang_tools_mcp.sandboxed import sandboxed_stdio

    extra: dict[str, Any] = {} if message_handler is None else {"message_handler": message_handler}

    environ = os.environ if env is None else env
    if server.command is not None:
        if shutil.which(server.command, path=environ.get("PATH")) is None:
            raise ServerStartError(
                f"MCP server {name!r}: plugins.tools-mcp.servers.{name}.command "
                f"{server.command!r} is not an executable (nor found on PATH)"
            )
        passed = {key: environ[key] for key in server.env if key in environ}
        # In the tool sandbox; it dies with the runtime, even a SIGKILLed one.
        return Client(sandboxed_stdio(name, server, passed, config), cache=None, **extra)
    assert server.url is not None
    return Client(_http_transport(name, server, environ), cache=None, **extra)


def _http_transport(name: str, server: ServerSettings, environ: Mapping[str, str]) -> Any:
    import httpx2  # the SDK's HTTP client
    from mcp.client.streamable_http import streamable_http_client

    headers: dict[str, str] = {}
    for header, variable in server.headers.items():
        headers[header] = _from_env(name, f"headers.{header}", variable, environ)
    if server.bearer_env is not None:
        token = _from_env(name, "bearer_env", server.bearer_env, environ)
        headers["Authorization"] = f"Bearer {token}"
    client = httpx2.AsyncClient(headers=headers, timeout=server.start_timeout_seconds)
    assert server.url is not None
    return streamable_http_client(server.url, http_client=client)


def _from_env(name: str, key: str, variable: str, environ: Mapping[str, str]) -> str:
    value = environ.get(variable)
    if not value:
        raise ServerStartError(
            f"MCP server {name!r}: plugins.tools-mcp.servers.{name}.{key} names the "
            f"environment variable {variable!r}, which is not set"
        )
    return value


def describe_start_failure(name: str, server: ServerSettings, exc: BaseException) -> str:
    """A person's message for a server that did not start or answer."""
    where = f"command {server.command!r}" if server.command is not None else f"url {server.url!r}"
    cause = _innermost(exc)
    text = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    return f"MCP server {name!r} ({where}) did not start or answer as an MCP server: {text}"


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
