"""The plugin's own port, for a runtime whose routes no server serves.

Rule: when another plugin *serves* the routes in this run (``toolang_serves_routes``:
toolang-server answers when it is enabled, or under ``toolang serve`` — installed is
not serving), the A2A routes are mounted on it and this module opens nothing;
otherwise, if ``[plugins.source-a2a] listen`` is set, the same routes are served by
uvicorn on that address inside the runtime's event loop, from start-up to shutdown.
With neither, a configured A2A is reachable by nobody: start-up says so (a warning),
and so does ``toolang doctor``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

import attrs
import structlog

from toolang_source_a2a.settings import NAME, split_listen

if TYPE_CHECKING:
    from toolang_core import Runtime

log = structlog.get_logger("toolang.a2a")

_KEY = f"{NAME}:standalone"


@attrs.frozen
class Serving:
    """Where this run serves the A2A routes: ``by`` is ``"server"`` (another plugin's
    server, ``plugin`` names it), ``"listen"`` (this plugin's own port) or ``"nobody"``."""

    by: Literal["server", "listen", "nobody"]
    url: str = ""
    plugin: str = ""


def serving(runtime: Runtime) -> Serving:
    """Where the A2A routes are served in ``runtime``'s run (from its settings: the
    answer is the same before and after start-up)."""
    from toolang_source_a2a import settings_of

    servers = [(p, url) for p, url in runtime.route_servers() if p != NAME]
    if servers:
        plugin, url = servers[0]
        return Serving("server", url, plugin)
    listen = settings_of(runtime).listen
    if listen and not runtime.one_shot:
        return Serving("listen", f"http://{listen}")
    return Serving("nobody")


def configured(runtime: Runtime) -> bool:
    """Whether ``toolang.toml`` has a ``[plugins.source-a2a]`` section (A2A wanted)."""
    return NAME in runtime.config.plugins.settings


def nobody_serves(runtime: Runtime) -> str:
    """What to tell a person whose configured A2A nobody serves."""
    return (
        f"[plugins.{NAME}] is configured but nothing serves A2A in this run: no server "
        "plugin serves routes ([plugins.server] enabled is not true) and no "
        f"[plugins.{NAME}] listen is set; remote agents cannot reach this runtime. Set "
        f'listen = "127.0.0.1:8765" under [plugins.{NAME}], or enabled = true under '
        "[plugins.server]"
    )


def build_app(runtime: Runtime) -> Any:
    """A Starlette app with just the A2A routes (the runtime in ``app.state``)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    from toolang_source_a2a.routes import ROUTES

    app = Starlette(routes=[Route(r.path, r.endpoint, methods=list(r.methods)) for r in ROUTES])
    app.state.runtime = runtime
    return app


def bind(listen: str) -> socket.socket:
    """A listening socket on ``listen``. :raises OSError: naming the address."""
    host, port = split_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # TCP_NODELAY on accepted connections (asyncio sets it only when the socket says
        # IPPROTO_TCP; they also inherit it from here): without it a small answer written
        # in two pieces waits for the peer's delayed ACK (~40 ms per request on loopback).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"[plugins.{NAME}] listen = {listen!r}: cannot bind: {exc}") from exc
    return sock


async def start(runtime: Runtime) -> None:
    from toolang_source_a2a import settings_of

    settings = settings_of(runtime)
    if runtime.one_shot:  # a one-shot chat/invoke opens no port
        return
    where = serving(runtime)
    if where.by == "server":
        if settings.listen:
            log.info(
                "a2a.listen_unused",
                listen=settings.listen,
                detail=f"the {where.plugin} plugin serves the A2A routes at {where.url}",
            )
        return
    if where.by == "nobody":
        if configured(runtime):
            log.warning("a2a.not_served", problem=nobody_serves(runtime))
        return
    import uvicorn

    class Server(uvicorn.Server):
        # The runtime owns SIGINT/SIGTERM; uvicorn must not take them over.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    sock = bind(settings.listen)
    # log_config=None, log_level=None: uvicorn's records go to the runtime's handler
    # (structured, masked) at its levels, not to handlers of uvicorn's own.
    config = uvicorn.Config(
        build_app(runtime), log_level=None, log_config=None, lifespan="off", access_log=False
    )
    server = Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="a2a-server")
    deadline = time.monotonic() + 30
    while not server.started:
        if task.done() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the A2A server on {settings.listen} did not start")
        await asyncio.sleep(0.01)
    host, port = sock.getsockname()[:2]
    # A holder, not the value: a runtime served twice records its second server too.
    _servers(runtime)["server"] = (server, task, sock)
    log.info("a2a.listening", url=f"http://{host}:{port}", agents=list(settings.agents))


def _servers(runtime: Runtime) -> dict[str, Any]:
    servers: dict[str, Any] = runtime.plugin_state(_KEY, dict)
    return servers


async def stop(runtime: Runtime) -> None:
    found = _servers(runtime).pop("server", None)
    if found is None:
        return
    server, task, sock = found
    server.should_exit = True
    with contextlib.suppress(Exception):
        await asyncio.wait_for(task, 10)
    sock.close()
