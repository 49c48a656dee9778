"""How cancellation, steering and overflow end requests, decided once for every backend.

A backend reads and writes in its own SQL, inside its own transaction (locking what it
must first); which requests end, in which order and with which status, outcome and
reason is decided here, so SQLite and PostgreSQL agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

import attrs

from toolang_core.store.types import SubmitRules, TurnRequest, TurnStatus

INTERRUPTED = "interrupted by a newer request on its thread"
"""The reason a running turn is canceled with when the ``interrupt`` strategy replaces it."""


@attrs.frozen
class QueuedEnd:
    """A terminal state for a queued request that never ran."""

    status: TurnStatus
    outcome: str
    error: str | None = None
    output: str | None = None


EndQueued = Callable[[str, QueuedEnd], bool]
"""A backend's "end this queued request so" (``False``: it was not queued any more)."""


def canceled(reason: str) -> QueuedEnd:
    """A queued request canceled for ``reason``."""
    return QueuedEnd(TurnStatus.CANCELED, "canceled", reason)


def steered_into(turn_id: str) -> QueuedEnd:
    """A queued steering request delivered into the running turn ``turn_id``."""
    return QueuedEnd(TurnStatus.STEERED, "steered", output=f"delivered into running turn {turn_id}")


def dropped_by(rules: SubmitRules) -> QueuedEnd:
    """A queued request dropped to make room under the group's ``max_queued``."""
    outcome = "overflow_dropped" if rules.overflow == "drop_oldest" else "overflow_replaced"
    return QueuedEnd(
        TurnStatus.DROPPED,
        outcome,
        f"dropped by group {rules.thread_group!r}'s overflow rule ({rules.overflow})",
    )


def cancel_tree(
    turn_id: str,
    reason: str,
    *,
    status_of: Callable[[str], TurnStatus],
    end_queued: EndQueued,
    request_cancel: Callable[[str], object],
    children: Callable[[str], Iterable[str]],
) -> dict[str, TurnStatus]:
    """Cancel ``turn_id`` and its descendants, each parent before its children.

    A queued request ends ``canceled`` at once (``end_queued``); a running one is asked
    to stop (``request_cancel``: it goes ``canceling``); a finished one is left as it
    is, but its children are still visited. ``status_of`` reads a request's status as
    the transaction sees it now (a backend that locks locks there). Returns the
    requests changed and their new status.
    """
    changed: dict[str, TurnStatus] = {}
    pending = [turn_id]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        status = status_of(current)
        if status is TurnStatus.QUEUED:
            end_queued(current, canceled(reason))
            changed[current] = TurnStatus.CANCELED
        elif status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
            request_cancel(current)
            changed[current] = TurnStatus.CANCELING
        pending.extend(children(current))
    return changed


def take_steering(
    turn_id: str, steering: Iterable[TurnRequest], end_queued: EndQueued
) -> list[TurnRequest]:
    """Hand the queued ``steering`` requests of a running turn's thread to ``turn_id``:
    each ends ``steered`` and is returned, in order, for the turn to read."""
    ending = steered_into(turn_id)
    taken = []
    for turn in steering:
        end_queued(turn.id, ending)
        taken.append(turn)
    return taken


PARKED_CRASHES_FREE_PER_ATTEMPT: Final = 10
"""A crash while a turn waits for a person spends no attempt for the first ``10 x
max_attempts`` hand-backs: a process that keeps dying while the turn is parked (a tool
doing work inside ``TurnHandle.parked()`` that kills it) still ends, after that and
``max_attempts`` more. A shutdown's hand-back (``release``) never spends one."""


def parked_crashes_free(max_attempts: int) -> int:
    """Hand-backs while parked that a crash (``recover``) does not count as an attempt."""
    return PARKED_CRASHES_FREE_PER_ATTEMPT * max_attempts
