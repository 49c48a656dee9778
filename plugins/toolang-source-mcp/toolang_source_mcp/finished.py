"""Waking a call when its turn ends, instead of looking at the store over and over.

Inside the serving runtime, the plugin implements ``toolang_deliver_turn`` (the last
after-turn stage, which follows the commit of the turn's terminal state) and wakes the
calls waiting for that turn here, as the server plugin does for its HTTP waits. What
is never signalled (a turn parked on an approval, a turn ended by another process on
the same store) is still seen by looking at the store, every ``served_poll_seconds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import asyncio

    from toolang_core import Runtime

STATE_KEY: Final = "source-mcp:finished"


class FinishedTurns:
    """Per runtime: the futures of the MCP turns calls wait for."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}

    @staticmethod
    def of(runtime: Runtime) -> FinishedTurns:
        return runtime.plugin_state(STATE_KEY, FinishedTurns)

    def waiter(self, turn_id: str, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done once ``turn_id`` is delivered; register it *before* looking at
        the store, so an end between the look and the wait is not missed. Hand it back
        with :meth:`forget` when done waiting."""
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.setdefault(turn_id, set()).add(future)
        return future

    def forget(self, turn_id: str, future: asyncio.Future[None]) -> None:
        waiting = self._waiting.get(turn_id)
        if waiting is not None:
            waiting.discard(future)
            if not waiting:
                del self._waiting[turn_id]

    def delivered(self, turn_id: str) -> None:
        """``turn_id`` ended (its terminal state is committed): wake its waiters."""
        for future in self._waiting.pop(turn_id, ()):
            if not future.done():
                future.set_result(None)
