"""Waiting for one turn, with or without a runtime already serving the store."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from toolang_core.store.errors import StoreBusy

if TYPE_CHECKING:
    from toolang_core.runtime.inbox import Inbox
    from toolang_core.runtime.runtime import Runtime
    from toolang_core.store.types import TurnRequest


async def await_turn(
    runtime: Runtime, inbox: Inbox, turn_id: str, *, timeout: float | None = None
) -> TurnRequest:
    """Wait until ``turn_id`` is terminal and return it.

    When a runtime serves the store, this only watches. When none does (the embedded
    store tells), it runs a one-shot runtime in this process that admits only this
    request and no turn source — so ``toolang invoke`` and ``toolang chat`` work without
    ``toolang run``, and never touch other queued work. With ``timeout`` it returns the
    current state once the time is up.
    """
    if inbox.store.runtime_running() is False:
        stop = asyncio.Event()
        serving = runtime.serve(stop, sources=(), only=[turn_id], until_idle=True)
        try:
            await asyncio.wait_for(serving, timeout) if timeout else await serving
        except StoreBusy:
            pass  # a runtime started meanwhile: it will pick the request up
        except TimeoutError:
            return inbox.get(turn_id)
    return await inbox.wait(turn_id, timeout=timeout)
