"""The inbox: durable submission and cancellation of turn requests, from any process.

``submit`` returns only after the request is stored ``queued`` (or merged per its
thread's strategy); the runtime that owns the store is woken at once where the store
supports it and otherwise finds the request at its next poll.

The input and metadata are stored with secrets and personal data masked (by the
runtime's redaction policy, :mod:`toolang_core.redaction`). The runtime's own inbox
(``keep_raw``) also keeps what the submitter wrote, in memory only, so the turn's model
reads it unmasked; a request submitted from another process, or recovered after a
crash, runs on its masked input.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import attrs

from toolang_core.inbox.policy import AdmissionPolicy
from toolang_core.inbox.request_checks import check_request
from toolang_core.redaction import RedactionPolicy, current
from toolang_core.store.errors import TurnNotFound
from toolang_core.store.protocol import ExecutionStore
from toolang_core.store.types import (
    ACTIVE,
    CancelResult,
    NewTurnRequest,
    SubmitResult,
    TurnFilter,
    TurnRequest,
    TurnStatus,
)

_MAX_RAW = 10_000
"""At most this many unmasked inputs are kept for requests not yet finished."""
_MAX_AHEAD = 1000
"""At most this many of a thread's unfinished requests are read by :meth:`Inbox.ahead_of`."""


class Inbox:
    """Submit, cancel and watch turn requests in one execution store."""

    def __init__(
        self,
        store: ExecutionStore,
        policy: AdmissionPolicy,
        *,
        clock: Callable[[], float] = time.time,
        keep_raw: bool = False,
        redaction: RedactionPolicy | None = None,
    ) -> None:
        """``redaction``: the policy masking what is stored — the runtime's
        (``runtime.redaction``; :meth:`Runtime.open_inbox
        <toolang_core.runtime.Runtime.open_inbox>` passes it); when left out, the
        policy in effect where the inbox is made (:func:`toolang_core.redaction.current`:
        inside a serving runtime, its own; elsewhere the core's rules alone)."""
        self.store = store
        self.policy = policy
        self.clock = clock
        self.redaction = redaction if redaction is not None else current()
        self._raw: dict[str, str] | None = {} if keep_raw else None

    def raw_input(self, turn_id: str) -> str | None:
        """What the submitter wrote, unmasked, while its turn has not finished (only for
        requests submitted to this inbox of the running runtime)."""
        return self._raw.get(turn_id) if self._raw is not None else None

    def forget_raw(self, turn_id: str) -> None:
        """Drop the unmasked input of a finished turn."""
        if self._raw is not None:
            self._raw.pop(turn_id, None)

    def submit(self, request: NewTurnRequest) -> SubmitResult:
        """Store ``request`` (durably) under its group's rules.

        :raises SubmitRejected: when its thread's strategy or its group's overflow rule
            refuses it; the message says which and why.
        :raises InvalidRequest: (a ``UsageError`` and ``ValueError``) for a field out of
            bounds — an invalid id, thread id or time, NUL bytes.
        """
        check_request(request)  # bad input refused before anything is stored
        raw = request.input
        masked = self.redaction.text(raw)
        if masked is not raw:
            request = attrs.evolve(request, input=masked)
        if request.meta:  # a spawn reason, a source's metadata: text from people and models
            request = attrs.evolve(request, meta=self.redaction.value(dict(request.meta)))
        result = self.store.submit(request, self.policy.rules_for(request), now=self.clock())
        if self._raw is not None and masked != raw and result.status != "exists":
            if len(self._raw) >= _MAX_RAW:  # requests that never ran here: drop the oldest
                del self._raw[next(iter(self._raw))]
            self._raw[result.id] = raw
        return result

    def cancel(self, turn_id: str, *, reason: str = "canceled") -> CancelResult:
        """Cancel a request (queued: at once; running: its runtime is asked) and its
        descendants. :raises TurnNotFound:"""
        return self.store.cancel(turn_id, now=self.clock(), reason=reason)

    def ahead_of(self, turn: TurnRequest) -> list[TurnRequest]:
        """The unfinished requests of ``turn``'s thread that go before it — active
        (running, awaiting approval, canceling) or queued ahead of it — in the order the
        thread runs them: what it waits for (a thread runs one turn at a time). Steering
        input queued for a running turn is left out (that turn takes it)."""
        if turn.status.is_terminal:
            return []
        unfinished = (TurnStatus.QUEUED, *ACTIVE)
        found = self.store.list_turns(
            TurnFilter(thread_id=turn.thread_id, status=unfinished, limit=_MAX_AHEAD)
        )
        ahead = [
            other
            for other in found
            if other.id != turn.id
            and not other.steer
            and (other.status.is_active or (other.rank, other.seq) < (turn.rank, turn.seq))
        ]
        return sorted(ahead, key=lambda t: (not t.status.is_active, t.rank, t.seq))

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
