"""When a failed request is sent again, and how long to wait first."""

from __future__ import annotations

from typing import Any, Final

import attrs
import httpx

from toolang_client.calls import RETRY_STATUSES, Call

TERMINAL: Final = frozenset({"completed", "failed", "canceled", "dropped", "steered"})
"""The turn states that do not change any more."""


@attrs.frozen
class Retry:
    """``attempts`` sends at most (1: never again); waits ``backoff`` seconds, doubled
    each time, at most ``max_backoff``. A request is sent again after a connection that
    failed before it went out (any call), or — only for a call that is safe to repeat
    (reads, cancels, a submit with its idempotency key) — after a broken connection or
    a 502/503/504."""

    attempts: int = 3
    backoff: float = 0.2
    max_backoff: float = 5.0

    def again(
        self,
        call: Call[Any],
        attempt: int,
        *,
        error: Exception | None = None,
        status: int | None = None,
    ) -> bool:
        """Whether attempt number ``attempt`` (from 1) of ``call`` is followed by another."""
        if attempt >= self.attempts:
            return False
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return True  # nothing was sent
        if not call.safe:
            return False
        if error is not None:
            return isinstance(error, httpx.TransportError)
        return status in RETRY_STATUSES

    def delay(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
