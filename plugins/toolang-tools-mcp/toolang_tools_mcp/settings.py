"""``[plugins.tools-mcp]``: the MCP servers whose tools the agents get."""

from __future__ import annotations

import re
from typing import Literal

import attrs

_SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class ServerConfigError(ValueError):
    """A server's section is inconsistent; the message names the key."""


@attrs.frozen
class ServerSettings:
    """``[plugins.tools-mcp.servers.<name>]``: one MCP server.

    A stdio server has ``command`` (and ``args``, ``cwd``); it starts with no environment
    but the variables named in ``env`` (names, not values: the values are read from the
    runtime's environment when the server starts). A streamable-HTTP server has ``url``;
    ``headers`` maps a header name to the *environment variable* holding its value and
    ``bearer_env`` names the variable holding a bearer token — values never enter the
    configuration, the store or the logs.

    ``prefix`` (default ``<name>_``) is put before each tool's name; ``owner`` is the role
    or agent that gets the tools when no prefix claim does. ``approval`` decides which
    calls a person must approve: ``destructive`` (default: tools annotated
    ``destructiveHint``), ``always`` or ``never``; ``approve_tools`` / ``no_approval_tools``
    name the server's tools (without prefix) that always / never need approval.
    ``start`` is ``first_use`` (default) or ``startup``; ``timeout_seconds`` bounds a call
    and ``start_timeout_seconds`` the start and tool listing.

    A stdio server runs in the tool sandbox (docs/security.md): ``network`` (default
    ``false``) lets it reach the network through the runtime's proxy — the hosts of
    ``allow_hosts``, else ``[tools] allow_hosts``; ``read_paths`` and ``write_paths``
    are absolute paths it may read / read and write besides its own working directory
    (the rest of the file system is read-only; the runtime's state, other work and the
    user's secrets are hidden whatever these say).
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = attrs.field(factory=dict)
    bearer_env: str | None = None
    prefix: str | None = None
    owner: str | None = None
    approval: Literal["destructive", "always", "never"] = "destructive"
    approve_tools: tuple[str, ...] = ()
    no_approval_tools: tuple[str, ...] = ()
    start: Literal["first_use", "startup"] = "first_use"
    timeout_seconds: float = 60.0
    start_timeout_seconds: float = 60.0
    network: bool = False
    allow_hosts: tuple[str, ...] = ()
    read_paths: tuple[str, ...] = ()
    write_paths: tuple[str, ...] = ()

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


@attrs.frozen
class McpSettings:
    """``[plugins.tools-mcp]``: ``servers`` by name; ``max_result_bytes`` caps one
    call's result (text, structured content and binary together; default 10 MiB)."""

    servers: dict[str, ServerSettings] = attrs.field(factory=dict)
    max_result_bytes: int = 10 * 1024 * 1024


def check_servers(settings: McpSettings) -> None:
    """Refuse what the types cannot: a server with both or neither of ``command`` and
    ``url``, a bad name, stdio keys on an HTTP server and the reverse.

    :raises ServerConfigError: naming ``plugins.tools-mcp.servers.<name>.<key>``.
    """
    problems = []
    for name, server in settings.servers.items():
        key = f"plugins.tools-mcp.servers.{name}"
        if not _SERVER_NAME.match(name):
            problems.append(f"{key}: a server name must match {_SERVER_NAME.pattern}")
        if (server.command is None) == (server.url is None):
            problems.append(f"{key}: give exactly one of 'command' (stdio) or 'url' (HTTP)")
            continue
        if server.command is not None and (server.headers or server.bearer_env):
            problems.append(f"{key}.headers/bearer_env: only for an HTTP server ('url')")
        if server.url is not None and (server.args or server.env or server.cwd):
            problems.append(f"{key}.args/env/cwd: only for a stdio server ('command')")
        sandbox = server.network or server.allow_hosts or server.read_paths or server.write_paths
        if server.url is not None and sandbox:
            problems.append(
                f"{key}.network/allow_hosts/read_paths/write_paths: only for a stdio server "
                "(it runs in the tool sandbox; an HTTP server runs elsewhere)"
            )
        for field in ("read_paths", "write_paths"):
            for path in getattr(server, field):
                if not path.startswith("/"):
                    problems.append(f"{key}.{field}: expected absolute paths, found {path!r}")
        if server.url is not None and not server.url.startswith(("http://", "https://")):
            problems.append(f"{key}.url: expected an http:// or https:// URL")
        if server.timeout_seconds <= 0 or server.start_timeout_seconds <= 0:
            problems.append(f"{key}.timeout_seconds: expected a positive number")
    if problems:
        raise ServerConfigError("; ".join(problems))
