"""One MCP session per server per runtime: started on first use, restarted with backoff
when it dies, closed with the runtime.

The SDK's client lives inside an async context that must be entered and left in one
task, so each session runs in a task of its own that holds the client open until it is
stopped or the connection fails; calls use the client from the turn's task.

When a session opens, and whenever its server sends ``notifications/tools/list_changed``,
the server's tools are listed again over the session and handed to ``on_tools`` (the
plugin keeps the runtime's offered tools in step, :mod:`toolang_tools_mcp.offers`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from toolang_tools_mcp.connect import ServerStartError, describe_start_failure, open_client
from toolang_tools_mcp.settings import ServerSettings

MAX_BACKOFF_SECONDS = 30.0
log = structlog.get_logger("toolang.tools_mcp")

ToolsListed = Callable[[str, ServerSettings, list[Any]], None]
"""``on_tools(server name, its settings, its RemoteTools)``."""


class ServerSession:
    """The live connection to one server, (re)opened on demand."""

    def __init__(
        self,
        name: str,
        server: ServerSettings,
        config: Any = None,
        on_tools: ToolsListed | None = None,
    ) -> None:
        self.name = name
        self.server = server
        self.config = config
        self.on_tools = on_tools
        self._relist: asyncio.Task[None] | None = None
        self.state = "stopped"
        self.failures = 0
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[Any] | None = None
        self._not_before = 0.0
        self._lock = asyncio.Lock()

    async def client(self) -> Any:
        """The entered ``mcp.Client``, starting the server when it is not running.

        :raises ServerStartError: naming the server, when it does not start (a server
            that failed is tried again only after a backoff that doubles per failure).
        """
        async with self._lock:
            if self._client is not None and self._task is not None and not self._task.done():
                return self._client
            wait = self._not_before - time.monotonic()
            if wait > 0:
                raise ServerStartError(
                    f"MCP server {self.name!r} failed {self.failures} time(s) in a row; "
                    f"next start attempt in {wait:.1f} s"
                )
            return await self._start()

    async def _start(self) -> Any:
        self.state = "starting"
        self._stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = loop.create_task(self._hold(self._ready), name=f"tools-mcp {self.name}")
        try:
            client = await asyncio.wait_for(
                asyncio.shield(self._ready), self.server.start_timeout_seconds
            )
        except BaseException as exc:
            self._task.cancel()
            self._failed()
            if isinstance(exc, ServerStartError):
                raise
            raise ServerStartError(describe_start_failure(self.name, self.server, exc)) from None
        self._client = client
        self.state = "running"
        self.failures = 0
        self._list_again()  # what changed since the tools were last listed
        return client

    async def _hold(self, ready: asyncio.Future[Any]) -> None:
        try:
            async with open_client(
                self.name, self.server, config=self.config, message_handler=self._on_message
            ) as client:
                ready.set_result(client)
                watch = asyncio.get_running_loop().create_task(self._watch(client))
                try:
                    await self._stop.wait()
                finally:
                    watch.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            elif not self._stop.is_set():
                self._died()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None
            if self._stop.is_set():
                self.state = "stopped"

    async def _watch(self, client: Any) -> None:
        """List the tools again on each change the server announces: a server of MCP
        2026-07-28 or later announces them on a ``subscriptions/listen`` stream; an
        older one sends ``notifications/tools/list_changed`` (:meth:`_on_message`)."""
        if self.on_tools is None:
            return
        try:
            async with client.listen(tools_list_changed=True) as changes:
                async for _ in changes:
                    self._list_again()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an older protocol, or the stream ended: notifications
            log.debug("tools_mcp.no_listen", server=self.name, error=str(exc))

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._list_again()

    def _list_again(self) -> None:
        """List the tools over the open session, in a task of its own: the SDK delivers
        the next answer only after the notification handler returns."""
        if self.on_tools is not None and self._client is not None:
            self._relist = asyncio.get_running_loop().create_task(self._listing(self._client))

    async def _listing(self, client: Any) -> None:
        from toolang_tools_mcp.listing import listed_by

        try:
            remotes = await asyncio.wait_for(listed_by(client), self.server.start_timeout_seconds)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("tools_mcp.relist_failed", server=self.name, error=str(exc))
            return
        if self.on_tools is not None:
            self.on_tools(self.name, self.server, remotes)

    async def settled(self) -> None:
        """Wait for a listing under way (a call that changed the server's tools is
        followed by their new list before the turn goes on)."""
        task = self._relist
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=self.server.start_timeout_seconds)

    def lost(self) -> None:
        """The connection failed under a call: the next call starts the server again."""
        self._died()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _died(self) -> None:
        self._client = None
        self._failed()

    def _failed(self) -> None:
        self.failures += 1
        self.state = "failed"
        backoff = min(MAX_BACKOFF_SECONDS, 0.25 * 2 ** (self.failures - 1))
        self._not_before = time.monotonic() + (backoff if self.failures > 1 else 0.0)

    async def stop(self) -> None:
        """Close the session (a stdio server is stopped by the SDK)."""
        self._stop.set()
        if self._relist is not None:
            self._relist.cancel()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 5.0)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
            except Exception:
                pass
        self._client = None
        self.state = "stopped"


class SessionPool:
    """The runtime's sessions, by server name (kept in ``runtime.plugin_state``)."""

    def __init__(self) -> None:
        from toolang_tools_mcp.offers import ServerOffers

        self.sessions: dict[str, ServerSession] = {}
        self.offers = ServerOffers()
        """This run's offered tools, by server."""

    def session(self, name: str, server: ServerSettings, config: Any = None) -> ServerSession:
        """The session of server ``name``; ``config`` (the runtime's configuration)
        decides the sandbox a stdio server runs in."""
        found = self.sessions.get(name)
        if found is None:
            found = self.sessions[name] = ServerSession(name, server, config, self.listed)
        return found

    def listed(self, name: str, server: ServerSettings, remotes: list[Any]) -> None:
        """A server listed its tools: offer them as this run's tools of ``name``."""
        from toolang_tools_mcp.catalog import tools_of

        try:
            tools = tools_of(name, server, remotes)
        except Exception as exc:  # an invalid schema: the tools offered before stay
            log.error("tools_mcp.server_unavailable", server=name, error=str(exc))
            return
        self.offers.sync(name, tools)

    async def stop(self) -> None:
        for session in list(self.sessions.values()):
            await session.stop()
        self.sessions.clear()
