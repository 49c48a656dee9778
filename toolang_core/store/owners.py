"""Who may use a thread and who may see a turn: the owner rules, decided here once.

**A thread belongs to the owner of its first request.** ``None`` — the operator: the
command line without ``--owner``, a loopback server without tokens — is an owner of its
own, so the operator's threads refuse an owner and an owner's threads refuse the
operator. A request of anyone else is refused with :class:`NotThreadOwner` (its message
from :func:`not_thread_owner`; HTTP 403, CLI exit 5), which never says whose the thread
is.

The store keeps each thread's owner (:attr:`ThreadInfo.owner`, set by its first request)
and holds every submission to the rule: :func:`toolang_core.store.backend.plan_submit` calls
:func:`check_owner` for both backends, and a backend's plain insert is refused by its
own constraint, reported with the same :func:`not_thread_owner` error. A door that acts
on a thread *without* submitting to it — a memory search of a thread, an A2A context
handed over as a task run, a chore's turns on a chosen thread — asks
:func:`check_thread` before it acts. No door keeps a rule of its own.

Reading is the other rule: the operator sees every owner's turns, an owner only its
own (:func:`may_see`); a turn another owner cannot see is answered "not found".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.store.errors import NotThreadOwner

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore


def not_thread_owner(thread_id: str, owner: str | None) -> NotThreadOwner:
    """The one refusal: ``owner`` may not use ``thread_id`` (whose owner is not said)."""
    who = f"owner {owner!r}" if owner is not None else "the operator (no owner)"
    return NotThreadOwner(
        f"thread {thread_id!r} belongs to another owner: {who} may not use it; use a "
        "thread of your own"
    )


def check_owner(thread_id: str, thread_owner: str | None, owner: str | None) -> None:
    """The rule itself: ``owner`` may use a thread whose owner is ``thread_owner`` only
    when they are the same (``None``, the operator, included).

    :raises NotThreadOwner: when they differ."""
    if thread_owner != owner:
        raise not_thread_owner(thread_id, owner)


def check_thread(store: ExecutionStore, thread_id: str, owner: str | None) -> None:
    """Refuse ``owner`` a thread of ``store`` that belongs to another owner; a thread
    that does not exist yet is anyone's (its first request makes it theirs).

    :raises NotThreadOwner: when the thread exists and is another owner's."""
    info = store.thread(thread_id)
    if info is not None:
        check_owner(thread_id, info.owner, owner)


def may_see(item_owner: str | None, viewer: str | None) -> bool:
    """Whether ``viewer`` may see a turn (or run) of ``item_owner``: the operator
    (``None``) sees every owner's, an owner only its own."""
    return viewer is None or item_owner == viewer
