"""The inbox: durable submission and cancellation of turn requests, from any process.

``submit`` returns only after the request is stored ``queued`` (or merged per its
thread's strategy); the runtime that owns the store is woken at once where the store
supports it and otherwise finds the request at its next poll.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from toolang_core.runtime.policy import AdmissionPolicy
from toolang_core.runtime.request_checks import check_request
from toolang_core.store.errors import TurnNotFound
from toolang_core.store.protocol import ExecutionStore
from toolang_core.store.types import (
    CancelResult,
    NewTurnRequest,
    SubmitResult,
    TurnRequest,
)


class Inbox:
    """Submit, cancel and watch turn requests in one execution store."""

    def __init__(
        self,
        store: ExecutionStore,
        policy: AdmissionPolicy,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock

    def submit(self, request: NewTurnRequest) -> SubmitResult:
        """Store ``request`` (durably) under its group's rules.

        :raises SubmitRejected: when its thread's strategy or its group's overflow rule
            refuses it; the message says which and why.
        :raises InvalidRequest: (a ``UsageError`` and ``ValueError``) for a field out of
            bounds — an invalid id, thread id or time, NUL bytes.
        """
        check_request(request)
        return self.store.submit(request, self.policy.rules_for(request), now=self.clock())

    def cancel(self, turn_id: str, *, reason: str = "canceled") -> CancelResult:
        """Cancel a request (queued: at once; running: its runtime is asked) and its
        descendants. :raises TurnNotFound:"""
        return self.store.cancel(turn_id, now=self.clock(), reason=reason)

    def get(self, turn_id: str) -> TurnRequest:
        """:raises TurnNotFound:"""
        turn = self.store.get(turn_id)
        if turn is None:
            raise TurnNotFound(f"no turn request with id {turn_id!r}")
        return turn

    async def wait(
        self, turn_id: str, *, timeout: float | None = None, poll_seconds: float = 0.05
    ) -> TurnRequest:
        """Wait until the request is terminal (or ``timeout`` passes); return its state."""
        deadline = None if timeout is None else self.clock() + timeout
        delay = poll_seconds / 5
        while True:
            turn = self.get(turn_id)
            if turn.status.is_terminal:
                return turn
            if deadline is not None and self.clock() >= deadline:
                return turn
            await asyncio.sleep(delay)
            delay = min(delay * 2, poll_seconds)
