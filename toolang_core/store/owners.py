"""Who may use a thread and who may see a turn: the owner rules, decided here once.

**A thread belongs to the owner of its first request.** ``None`` — the operator: the
command line without ``--owner``, a loopback server without tokens — is an owner of its
own, so the operator's threads refuse an owner and an owner's threads refuse the
operator. A request of anyone else is refused with :class:`NotThreadOwner` (its message
from :func:`not_thread_owner`; HTTP 403, CLI exit 5), which never says whose the thread
is.

What belongs to an owner is its own to use (:func:`is_own`): a thread, and likewise its
memory entries, chores, workflows and saved knowledge, the operator's included.

The store keeps each thread's owner (:attr:`ThreadInfo.owner`, set by its first request)
and holds every submission to the rule: :func:`toolang_core.store.backend.plan_submit`
calls :func:`check_owner` for both backends, and a backend's plain insert is refused by
its own constraint, reported with the same :func:`not_thread_owner` error. A door that
acts on a thread *without* submitting to it — an A2A context handed over as a task run,
a chore's turns on a chosen thread — asks :func:`check_thread` before it acts.

**Reading is the other rule**: the operator sees every owner's turns, runs, threads,
tasks and teams, an owner only its own (:func:`may_see`); what another owner cannot see
is answered "not found". A door that reads a thread — its page in the console, a memory
search of it — asks ``check_thread(..., reading=True)``; a list of threads comes from
:func:`threads_seen_by`.

No door keeps a rule of its own: a door asks these functions and answers in its own
terms (a status, an error code), never compares owners itself
(``tests/test_one_owner_rule.py`` checks the doors' sources).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from toolang_core.store.errors import NotThreadOwner

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import ThreadInfo

THREAD_SCAN: Final = 1000
"""How many of the most recently active threads an owner's thread list is drawn from."""


def not_thread_owner(thread_id: str, owner: str | None) -> NotThreadOwner:
    """The one refusal: ``owner`` may not use ``thread_id`` (whose owner is not said)."""
    who = f"owner {owner!r}" if owner is not None else "the operator (no owner)"
    return NotThreadOwner(
        f"thread {thread_id!r} belongs to another owner: {who} may not use it; use a "
        "thread of your own"
    )


def is_own(item_owner: str | None, owner: str | None) -> bool:
    """The rule itself: whether what belongs to ``item_owner`` — a thread, a memory
    entry, a chore, a saved piece of knowledge — is ``owner``'s to use: only when they
    are the same (``None``, the operator, included: the operator's own is not an
    owner's, and an owner's is not the operator's)."""
    return item_owner == owner


def check_owner(thread_id: str, thread_owner: str | None, owner: str | None) -> None:
    """``owner`` may use a thread whose owner is ``thread_owner`` only when it is its
    own (:func:`is_own`).

    :raises NotThreadOwner: when it is not."""
    if not is_own(thread_owner, owner):
        raise not_thread_owner(thread_id, owner)


def check_thread(
    store: ExecutionStore, thread_id: str, owner: str | None, *, reading: bool = False
) -> None:
    """Refuse ``owner`` a thread of ``store`` that belongs to another owner; a thread
    that does not exist yet is anyone's (its first request makes it theirs).

    With ``reading=True`` the read rule applies instead (:func:`may_see`): the operator
    may read every owner's thread, an owner only its own.

    :raises NotThreadOwner: when the thread exists and ``owner`` may not use (or read)
        it."""
    info = store.thread(thread_id)
    if info is None:
        return
    if not reading:
        check_owner(thread_id, info.owner, owner)
    elif not may_see(info.owner, owner):
        raise not_thread_owner(thread_id, owner)


def may_see(item_owner: str | None, viewer: str | None) -> bool:
    """Whether ``viewer`` may see a turn (a run, a thread, a task, a team) of
    ``item_owner``: the operator (``None``) sees every owner's, an owner only its own."""
    return sees_every_owner(viewer) or is_own(item_owner, viewer)


def sees_every_owner(viewer: str | None) -> bool:
    """Whether ``viewer`` sees what every owner has (a listing across owners, e.g.
    usage per owner): the operator only."""
    return viewer is None


def threads_seen_by(store: ExecutionStore, viewer: str | None, *, limit: int) -> list[ThreadInfo]:
    """The threads of ``store`` that ``viewer`` may see (:func:`may_see` on each
    thread's owner), most recently active first, at most ``limit``: every thread for
    the operator; an owner's own among the :data:`THREAD_SCAN` most recently active."""
    scan = limit if viewer is None else max(limit, THREAD_SCAN)  # the operator's: all kept
    return [t for t in store.list_threads(limit=scan) if may_see(t.owner, viewer)][:limit]
