"""One MCP session per server per runtime: started on first use, restarted with backoff
when it dies, closed with the runtime.

The SDK's client lives inside an async context that must be entered and left in one
task, so each session runs in a task of its own that holds the client open until it is
stopped or the connection fails; calls use the client from the turn's task.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from toolang_tools_mcp.connect import ServerStartError, describe_start_failure, open_client
from toolang_tools_mcp.settings import ServerSettings

MAX_BACKOFF_SECONDS = 30.0


class ServerSession:
    """The live connection to one server, (re)opened on demand."""

    def __init__(self, name: str, server: ServerSettings, config: Any = None) -> None:
        self.name = name
        self.server = server
        self.config = config
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
        return client

    async def _hold(self, ready: asyncio.Future[Any]) -> None:
        try:
            async with open_client(self.name, self.server, config=self.config) as client:
                ready.set_result(client)
                await self._stop.wait()
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
        self.sessions: dict[str, ServerSession] = {}

    def session(self, name: str, server: ServerSettings, config: Any = None) -> ServerSession:
        """The session of server ``name``; ``config`` (the runtime's configuration)
        decides the sandbox a stdio server runs in."""
        found = self.sessions.get(name)
        if found is None:
            found = self.sessions[name] = ServerSession(name, server, config)
        return found

    async def stop(self) -> None:
        for session in list(self.sessions.values()):
            await session.stop()
        self.sessions.clear()
