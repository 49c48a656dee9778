"""Running the server inside the runtime's event loop, from start-up to shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import structlog
import uvicorn

from toolang_server.app import build_app
from toolang_server.signin import sign_in_url

if TYPE_CHECKING:
    from toolang_core import Runtime, ToolangConfig
    from toolang_server.settings import ServerSettings

log = structlog.get_logger("toolang.server")
URL_FILE: Final = "server.url"
"""Written under the runtime's home while the server listens: its base URL (port 0
picks a free port; scripts and tests read the real one here)."""


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The runtime owns SIGINT/SIGTERM (graceful drain); uvicorn must not take them.
        yield


class RunningServer:
    """A started server: its URL, and how to stop it."""

    def __init__(self, server: _Server, task: asyncio.Task[None], url: str) -> None:
        self.server = server
        self.task = task
        self.url = url

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.task, 10)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    :raises OSError: naming the address and what to do (uvicorn would ``sys.exit``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY on an accepted connection only
    # when its socket says TCP, and without it every response written in two parts
    # (headers, body) waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(
            f"toolang-server cannot listen on {host}:{port} ({exc.strerror or exc}); set "
            "[plugins.server] port (0: any free port) or stop what holds it"
        ) from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _write_url(path: Path, url: str) -> None:
    """Write ``url`` to ``path`` whole or not at all: scripts wait for the file to exist
    and read it at once, so it must never be seen empty or half-written."""
    # The home exists only once something wrote there (a PostgreSQL store does not).
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(url + "\n", encoding="utf-8")
    os.replace(partial, path)


async def start(runtime: Runtime, settings: ServerSettings) -> RunningServer:
    """Listen on ``settings.host:port`` and serve the app from the runtime's loop.

    :raises OSError: when the address cannot be bound (in use, not ours).
    """
    sock = _bind(settings.host, settings.port)
    app, routes, failures = build_app(runtime, settings)
    # HTTP parsing by httptools (a dependency; uvicorn picks it over h11). The loop is
    # the runtime's own asyncio loop: uvloop measured no lower CPU per request here
    # (Starlette's Python dominates), and would have to become every runtime's loop.
    config = uvicorn.Config(
        app,
        log_level=None,
        log_config=None,  # uvicorn's records: the runtime's handler and levels (masked)
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=2,
        ws="none",
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="toolang-server")
    while not server.started:
        if task.done():
            with contextlib.suppress(SystemExit):  # uvicorn exits on a failed start-up
                task.result()
            sock.close()
            raise OSError(
                f"toolang-server stopped before serving on {settings.host}:{settings.port}"
            )
        await asyncio.sleep(0.01)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    access = (
        f"{len(settings.tokens)} token(s)"
        if settings.tokens
        else "no tokens: loopback callers only"
    )
    log.info(
        "server.started",
        url=url,
        routes=len(routes),
        access=access,
        failed_plugins=[f.plugin for f in failures],
    )
    print(
        f"toolang server: console {url}/  API {url}/api  ({access}; deciding approvals needs "
        "a signed-in person)",
        file=sys.stderr,
        flush=True,
    )
    credential = app.state.sessions.credential
    if credential is not None:
        print(
            _sign_in_line(url, credential, settings.sign_in_link_seconds, runtime.config),
            file=sys.stderr,
            flush=True,
        )
    # Last: whatever waits for this file finds the lines above already printed.
    _write_url(runtime.config.home / URL_FILE, url)
    return RunningServer(server, task, url)


def _sign_in_line(url: str, credential: str, seconds: float, config: ToolangConfig) -> str:
    """The start line about signing in: the one-time link only when stderr is a
    terminal. The link signs its opener in, so it is not written where stderr is kept
    rather than read (a service's journal, a file, a pipe): the line says how to get
    one with ``toolang console`` instead (with this runtime's configuration, as the
    account that can read its credential). A terminal can be recorded too (``docker
    run -t``): that is the operator's to know."""
    try:
        terminal = sys.stderr is not None and sys.stderr.isatty()
    except (ValueError, OSError):  # closed, or not a file
        terminal = False
    if not terminal:
        where = (
            f"`toolang --config {config.source} console`"
            if config.source is not None
            else f"`toolang console` in {config.base_dir}"
        )
        return (
            f"toolang server: sign in: run {where}, as the account running this, for a "
            "one-time link (not printed: this output is not a terminal, and a link signs "
            "its opener in)"
        )
    return (
        f"toolang server: sign in: {sign_in_url(url, credential)}  (works once, for "
        f"{seconds / 60:g} min; `toolang console` prints a new link)"
    )
