"""Waiting for turns to finish without polling the store in a tight loop.

The server implements ``toolang_deliver_turn``, the last post-turn stage, and wakes
whoever waits for that turn here. A turn finished by another runtime of a shared store
never reaches this hook: a wait follows the turn's signals too
(:class:`toolang_core.TurnSignals`, which that runtime sends at its commit), and looks
at the store every ``poll_seconds`` whatever happens (a signal is a hint).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from toolang_core import TurnSignals

if TYPE_CHECKING:
    from toolang_core import Runtime, TurnRequest

STATE_KEY: Final = "server:finished"


class FinishedTurns:
    """Per-runtime: futures of the turns someone waits for."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[asyncio.Future[None]]] = {}

    @staticmethod
    def of(runtime: Runtime) -> FinishedTurns:
        return runtime.plugin_state(STATE_KEY, FinishedTurns)

    def delivered(self, turn_id: str) -> None:
        for future in self._waiting.pop(turn_id, ()):
            if not future.done():
                future.set_result(None)

    async def wait(
        self,
        runtime: Runtime,
        turn_id: str,
        timeout: float,
        *,
        poll_seconds: float = 0.5,
        just_queued: bool = False,
    ) -> TurnRequest:
        """The turn once terminal, or as it is after ``timeout`` seconds.

        ``just_queued``: the caller queued the turn and has not awaited since, so it is
        not finished yet and the first look at the store is skipped (one read less for
        every submit that waits for its answer).

        :raises TurnNotFound: when there is no such turn."""
        store = runtime.inbox.store if runtime.inbox is not None else None
        assert store is not None, "the server runs inside a serving runtime"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        delivered = False
        pause = 0.001
        with TurnSignals.of(runtime).follow(turn_id) as follow:
            while True:
                future: asyncio.Future[None] = loop.create_future()
                self._waiting.setdefault(turn_id, []).append(future)
                signal = follow.armed()  # before the look: an end in between still wakes
                try:
                    left = deadline - loop.time()
                    if not just_queued:
                        turn = runtime.inbox.get(turn_id)  # type: ignore[union-attr]
                        if turn.status.is_terminal or left <= 0:
                            return turn
                    just_queued = False
                    if delivered:
                        # Delivered or signalled (both follow the commit of its terminal
                        # state), yet the store does not show it finished: look again
                        # soon rather than at the next slow poll.
                        await asyncio.sleep(min(pause, left))
                        pause = min(pause * 2, 0.05)
                        continue
                    done, _ = await asyncio.wait(
                        (future, signal),
                        timeout=min(left, poll_seconds),
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    delivered = bool(done)
                finally:
                    waiting = self._waiting.get(turn_id)
                    if waiting is not None and future in waiting:
                        waiting.remove(future)
                        if not waiting:
                            del self._waiting[turn_id]
