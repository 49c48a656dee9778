"""Waiting for one turn, with or without a runtime already serving the store — and
giving it up cleanly."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from toolang_core.store.errors import StoreBusy

if TYPE_CHECKING:
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.runtime.runtime import Runtime
    from toolang_core.store.types import TurnRequest

# How often a one-shot that found the store taken looks again whether it is free.
# Another one-shot holds it for one turn only, so the waiters take turns quickly.
RECHECK_SECONDS = 0.1


async def await_turn(
    runtime: Runtime, inbox: Inbox, turn_id: str, *, timeout: float | None = None
) -> TurnRequest:
    """Wait until ``turn_id`` is terminal and return it.

    When a runtime serves the store, this only watches. When none does (the embedded
    store tells), it runs a one-shot runtime in this process that admits only this
    request — and the unfinished requests of its thread that go before it
    (:meth:`Inbox.ahead_of`: a thread runs in order, and nothing else would run them) —
    and no turn source, so ``toolang invoke`` and ``toolang chat`` work without
    ``toolang run`` and never touch other threads' queued work. Several one-shots
    started together take turns: the one that holds the store serves its own request
    and lets go; each waiter keeps checking and serves its own once the store is free
    again (a ``toolang run`` that takes it meanwhile serves them all). With ``timeout``
    it returns the current state once the time is up.
    """
    deadline = None if timeout is None else time.monotonic() + timeout

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    while True:
        turn = inbox.get(turn_id)
        remaining = left()
        if turn.status.is_terminal or remaining == 0.0:
            return turn
        if inbox.store.runtime_running() is None:  # a shared store: a runtime serves it
            return await inbox.wait(turn_id, timeout=remaining)
        if inbox.store.runtime_running() is False:
            stop = asyncio.Event()
            only = [*(t.id for t in inbox.ahead_of(turn)), turn_id]
            serving = runtime.serve(stop, sources=(), only=only, until_idle=True)
            try:
                await asyncio.wait_for(serving, remaining)
            except StoreBusy:
                pass  # another one-shot (or a runtime) took it first: watch, then retry
            except TimeoutError:
                return inbox.get(turn_id)
        slice_ = RECHECK_SECONDS if remaining is None else min(RECHECK_SECONDS, remaining)
        await inbox.wait(turn_id, timeout=slice_)


def give_up_turn(runtime: Runtime, inbox: Inbox, turn_id: str, why: str) -> TurnRequest | None:
    """The submitter of ``turn_id`` stops waiting for it (an error, Ctrl-C, its wait
    ran out): end it if nothing else would ever run it.

    Served here (a one-shot of :func:`await_turn` in this process is running it), or by
    nobody (no runtime holds the store), the request would stay behind — queued, or
    handed back queued when the one-shot stops — and, first on its thread, hold every
    later request of the thread back. It is canceled now, durably, with ``why`` as the
    reason (a running one ends ``canceled`` as it winds down, or at the next start-up
    should this process die first), and its pending approval requests expire; the
    request is returned. A request a runtime serves keeps its place (that runtime
    runs it; its answer can be read later), as does one already finished: ``None``.
    """
    from toolang_core.tools.approvals import ApprovalBook

    turn = inbox.get(turn_id)
    if turn.status.is_terminal:
        return None
    served_here = runtime.one_shot and runtime.admitting
    if not served_here and inbox.store.runtime_running() is not False:
        return None
    inbox.cancel(turn_id, reason=why)
    ApprovalBook(inbox.store).expire_for_turn(turn_id, reason=f"its turn was canceled: {why}")
    return inbox.get(turn_id)
