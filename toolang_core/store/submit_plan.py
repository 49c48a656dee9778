"""What a submission does, decided once for every store backend.

Given a request, its group's rules and the state of its thread, :func:`plan_submit`
decides: refuse (another group, another owner, a busy thread under ``reject``), or which
of coalesce / interrupt / steer applies and with which dedupe key. A backend reads the
thread state and carries the plan out in its own SQL (look for a request to coalesce
into, cancel the interrupted one, apply ``max_queued``, insert) inside its own
transaction; the decisions are the same in SQLite and PostgreSQL because they are made
here.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from toolang_core.store.errors import NotThreadOwner, SubmitRejected
from toolang_core.store.lifecycle import INTERRUPTED, EndQueued, dropped_by
from toolang_core.store.owners import check_owner, not_thread_owner
from toolang_core.store.types import NewTurnRequest, SubmitResult, SubmitRules


@attrs.frozen
class ThreadState:
    """What a submission needs to know about the thread it joins (locked or read in
    the same transaction)."""

    group: str | None
    """The thread's group (its first request's)."""
    owner: str | None
    """The owner of its first request (``None``: the operator)."""
    running_id: str | None = None
    """The request of the thread that is running now, if one is."""
    head_id: str | None = None
    """The thread's next queued request, if one is."""


@attrs.frozen
class SubmitPlan:
    """What to do with a submission that was not refused."""

    dedupe_key: str | None
    """The key the new request is stored with (and coalesced by)."""
    coalesce: bool = False
    """Look for a queued request with ``dedupe_key`` on the thread and update it
    instead of inserting a new one."""
    interrupt: str | None = None
    """The running request to cancel before queueing this one."""
    steer: bool = False
    """Queue the new request as steering input for the running one."""


def wrong_owner(request: NewTurnRequest) -> NotThreadOwner:
    """The refusal of a request into another owner's thread, for a backend whose own
    constraint refused the insert (:func:`toolang_core.store.owners.not_thread_owner`)."""
    return not_thread_owner(request.thread_id, request.owner)


def wrong_group(request: NewTurnRequest, rules: SubmitRules, actual: str | None) -> SubmitRejected:
    """A thread stays in the group of its first request."""
    where = f"group {actual!r}" if actual else "another group"
    return SubmitRejected(
        f"thread {request.thread_id!r} belongs to {where}, not {rules.thread_group!r}",
        reason="wrong_group",
    )


def plan_submit(
    request: NewTurnRequest, rules: SubmitRules, thread: ThreadState | None
) -> SubmitPlan:
    """Decide what submitting ``request`` under ``rules`` does to ``thread`` (``None``:
    a new thread).

    :raises NotThreadOwner: another owner's thread (the owner rule,
        :func:`toolang_core.store.owners.check_owner`), before any other refusal.
    :raises SubmitRejected: another group's thread (``wrong_group``), or a busy thread
        under the ``reject`` strategy (``thread_busy``).
    """
    running_id = head_id = None
    if thread is not None:  # another owner's first: its group is not theirs to learn
        check_owner(request.thread_id, thread.owner, request.owner)
        if thread.group != rules.thread_group:
            raise wrong_group(request, rules, thread.group)
        running_id, head_id = thread.running_id, thread.head_id
    strategy = rules.strategy
    if strategy == "reject" and (running_id or head_id):
        raise SubmitRejected(
            f"thread {request.thread_id!r} is busy with request {running_id or head_id} and "
            "its strategy is 'reject'; try again when it is idle",
            reason="thread_busy",
        )
    if strategy == "coalesce":
        key = request.dedupe_key if request.dedupe_key is not None else request.source
        return SubmitPlan(key, coalesce=True)
    return SubmitPlan(
        request.dedupe_key,
        interrupt=running_id if strategy == "interrupt" and running_id else None,
        steer=strategy == "steer" and running_id is not None,
    )


def is_simple(request: NewTurnRequest, rules: SubmitRules) -> bool:
    """Whether submitting needs no reads first (a plain enqueue, no overflow rule, no
    chosen id): one INSERT, atomic on its own, whose refusals (another group, another
    owner) the database reports."""
    return plain_enqueue(rules) and request.id is None


def plain_enqueue(rules: SubmitRules) -> bool:
    """Whether the plan of every submission under ``rules`` is an insert: the
    ``enqueue`` strategy without an overflow rule (the thread's state changes nothing
    but the refusals). The SQLite store then inserts a request with a chosen id first
    and reads only when the insert is refused (the id taken: ``exists``)."""
    return rules.strategy == "enqueue" and rules.max_queued is None


def carry_out(
    plan: SubmitPlan,
    turn_id: str,
    *,
    coalesce: Callable[[str | None], str | None],
    interrupt: Callable[[str, str], object],
    make_room: Callable[[], tuple[str, ...]],
    insert: Callable[[], object],
) -> SubmitResult:
    """Carry ``plan`` out in a backend's transaction, in the one order every backend
    keeps: coalesce into a queued request (``coalesce(key)`` returns its id, or
    ``None`` when there is none), else cancel the interrupted turn
    (``interrupt(id, reason)``), apply the group's overflow rule (``make_room``, see
    :func:`make_room`) and insert the new request as ``turn_id``.
    """
    if plan.coalesce:
        existing = coalesce(plan.dedupe_key)
        if existing is not None:
            return SubmitResult(existing, "coalesced")
    interrupted: tuple[str, ...] = ()
    if plan.interrupt is not None:
        interrupt(plan.interrupt, INTERRUPTED)
        interrupted = (plan.interrupt,)
    dropped = make_room()
    insert()
    return SubmitResult(
        turn_id, "queued", dropped=dropped, interrupted=interrupted, steer=plan.steer
    )


def make_room(
    rules: SubmitRules,
    *,
    queued: Callable[[], int],
    victim: Callable[[bool], str | None],
    drop: EndQueued,
) -> tuple[str, ...]:
    """Apply the group's ``max_queued`` before a request joins it; returns the requests
    dropped for it.

    ``queued()`` counts the group's queued requests, ``victim(newest)`` picks the
    oldest (or newest) one that may be dropped now, ``drop`` ends it.

    :raises SubmitRejected: the group is full and its overflow rule is ``reject``, or
        no request may be dropped (``queue_full``).
    """
    if rules.max_queued is None:
        return ()
    newest = {"drop_oldest": False, "replace_pending": True}.get(rules.overflow)
    dropped: list[str] = []
    while True:
        count = queued()
        if count < rules.max_queued:
            return tuple(dropped)
        found = None if newest is None else victim(newest)
        if found is None:
            raise SubmitRejected(
                f"group {rules.thread_group!r} already has {count} queued request(s) "
                f"(max_queued = {rules.max_queued}, overflow = {rules.overflow!r})",
                reason="queue_full",
            )
        if drop(found, dropped_by(rules)):
            dropped.append(found)
