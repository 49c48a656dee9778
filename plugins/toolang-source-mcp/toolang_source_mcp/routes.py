"""The streamable-HTTP MCP endpoint on the runtime's one HTTP server.

The server plugin authenticates each request with its own rule (``auth=True``: the
owners' tokens of ``[plugins.server] tokens``, the operator's credential; a wrong
token is refused with 401 before this endpoint runs) and leaves the caller in
``request.state.caller``; each tool call reads its owner from there. The ``mcp``
SDK's session manager serves the protocol; it is built and started by the first
request, or as the runtime starts with ``start = "startup"`` (inside its event loop, the
SDK imported off the loop, so other requests and turns go on meanwhile), and stopped
with the runtime.
A call's turn runs in this runtime, so the call is woken when the turn ends
(:mod:`toolang_source_mcp.finished`) rather than looking at the store again and again.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from typing import TYPE_CHECKING, Any

import structlog
from starlette.responses import Response

from toolang_source_mcp.settings import NAME

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.requests import Request
    from starlette.types import Message, Receive, Scope, Send

    from toolang_core import Runtime

METHODS = ("GET", "POST", "DELETE")

log = structlog.get_logger("toolang.mcp")


class _Handled(Response):
    """A response that hands the whole exchange to the session manager (the MCP
    transport writes its own status, headers and stream). The request's body, read
    already (the server's checks may read it), is handed over again first."""

    def __init__(self, manager: StreamableHTTPSessionManager, body: bytes) -> None:
        super().__init__()
        self.manager = manager
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = False

        async def replay() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": self.body, "more_body": False}
            return await receive()

        await self.manager.handle_request(scope, replay, send)


class EndpointStopped(RuntimeError):
    """A request came after the endpoint stopped (its runtime is shutting down)."""


class _Endpoint:
    """The session manager of one runtime: built once (:meth:`start`), by the first
    request or at start-up (``start = "startup"``); every request waits for the same
    build. A build that failed (logged ``mcp.endpoint.failed``; its requests answered
    with the error) is tried again by the next request."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._building: asyncio.Task[StreamableHTTPSessionManager] | None = None
        self._running: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    def start(self, on: str) -> asyncio.Task[StreamableHTTPSessionManager]:
        """Build the server and start its session manager (once; in the background).
        ``on`` says what asked first (``startup``, ``first_use``), for the log."""
        if self._stop.is_set():
            raise EndpointStopped("the MCP endpoint has stopped with its runtime")
        building = self._building
        if building is None or building.cancelled() or _failed(building):
            building = self._building = asyncio.ensure_future(self._build(on))
            building.add_done_callback(_log_failure)
        return building

    async def started(self) -> StreamableHTTPSessionManager:
        # Shielded: a request that goes away does not cancel the build the others await.
        return await asyncio.shield(self.start("first_use"))

    async def _build(self, on: str) -> StreamableHTTPSessionManager:
        began = time.perf_counter()
        # The SDK's imports take a while: off the event loop, which keeps serving.
        await asyncio.to_thread(importlib.import_module, "toolang_source_mcp.server")
        from mcp.server.transport_security import TransportSecuritySettings

        from toolang_source_mcp import settings_of
        from toolang_source_mcp.finished import FinishedTurns
        from toolang_source_mcp.server import build_server
        from toolang_source_mcp.turns import Asker

        def inbox() -> Any:
            serving = getattr(self.runtime, "inbox", None)
            return serving if serving is not None else opened()

        opened_inbox: list[Any] = []

        def opened() -> Any:
            if not opened_inbox:
                opened_inbox.append(self.runtime.open_inbox())
            return opened_inbox[0]

        finished = FinishedTurns.of(self.runtime)
        asker = Asker(self.runtime, settings_of(self.runtime), inbox, finished)
        server = build_server(asker, _caller_of)
        # The toolang server checks Host and Origin itself (its one rule).
        server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            json_response=settings_of(self.runtime).json_response,
        )
        manager = server.session_manager
        ready = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                ready.set()
                await self._stop.wait()

        running = self._running = asyncio.ensure_future(run())
        waiting = asyncio.ensure_future(ready.wait())
        try:
            # The session manager may fail to start: its error is this build's.
            await asyncio.wait((waiting, running), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if not ready.is_set():
            await running  # raises what ended it
            raise RuntimeError("the MCP session manager stopped before it served")
        log.info("mcp.endpoint.ready", on=on, seconds=round(time.perf_counter() - began, 3))
        return manager

    async def stop(self) -> None:
        self._stop.set()
        if self._building is not None and not self._building.done():
            self._building.cancel()
        if self._running is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._running, 5.0)


def _failed(task: asyncio.Task[Any]) -> bool:
    return task.done() and not task.cancelled() and task.exception() is not None


def _log_failure(task: asyncio.Task[Any]) -> None:
    if _failed(task):
        error = task.exception()
        log.warning("mcp.endpoint.failed", error=f"{type(error).__name__}: {error}")


def _caller_of(ctx: Context[Any]) -> tuple[str | None, str]:
    """The owner and sender the server's auth rule found for this call's request."""
    request = ctx.request_context.request
    caller = getattr(getattr(request, "state", None), "caller", None)
    if caller is None:  # never mounted without auth; refuse to guess an owner
        raise PermissionError("the MCP endpoint's request carries no authenticated caller")
    return caller.owner, str(caller.sender)


def endpoint_of(runtime: Runtime) -> _Endpoint:
    return runtime.plugin_state(f"{NAME}:endpoint", lambda: _Endpoint(runtime))


async def mcp_endpoint(request: Request) -> Response:
    """MCP over streamable HTTP: the offered agents as ``ask_<agent>`` tools."""
    runtime: Runtime = request.app.state.runtime
    try:
        manager = await endpoint_of(runtime).started()
    except EndpointStopped as exc:
        return Response(str(exc), status_code=503, media_type="text/plain")
    return _Handled(manager, await request.body())
