"""Forking a thread at one of its turns (``toolang threads fork``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from toolang_core.errors import UsageError
from toolang_core.ids import new_id
from toolang_core.store.errors import TurnNotFound
from toolang_core.store.forks import ThreadFork, visible_turns, write_fork
from toolang_core.store.owners import check_thread
from toolang_core.store.types import NewTurnRequest
from toolang_core.turn.replay import MODEL_META

if TYPE_CHECKING:
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.runtime.runtime import Runtime
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest

MAX_POSITION_DIGITS: Final = 6
"""``--at`` of at most this many digits is a position in the thread (``3``: its third
turn); anything else is a turn id."""
HISTORY_LIMIT: Final = 10_000
"""The most turns of a thread's history a fork looks through for the chosen one."""


@attrs.frozen
class Forked:
    """What :func:`fork_thread` made: the new thread, its first request (the chosen
    turn run again), the turn forked at and the turns the new thread inherits (their
    ids, oldest first; they stay on their own threads)."""

    thread_id: str
    turn_id: str
    origin: str
    at_turn: str
    inherited: tuple[str, ...]


def check_agent_and_model(runtime: Runtime, *, agent: str | None, model: str | None) -> None:
    """Refuse an agent or a model ``runtime`` does not have before anything is stored
    (a fork or a replay would otherwise fail only once it runs).

    :raises UsageError: naming the agent (and the known ones) or the model and why."""
    from toolang_core.models.resolve import ModelResolver
    from toolang_core.models.types import ModelError

    registry = runtime.agents.registry
    if agent is not None and registry.get(agent) is None:
        known = ", ".join(d.name for d in registry.active()) or "none"
        raise UsageError(f"agent {agent!r}: no such agent (known: {known})")
    if model is not None:
        try:
            ModelResolver(runtime).resolve(model, wanted_by="a fork or a replay")
        except ModelError as exc:
            raise UsageError(f"model {model!r}: {exc}") from None


def pick_turn(store: ExecutionStore, thread_id: str, at: str) -> tuple[TurnRequest, list[str]]:
    """The turn ``at`` names in ``thread_id``'s history — a position (``3``: the third
    turn, counting inherited ones) or a turn id — and the ids of the turns before it.

    :raises TurnNotFound: for an unknown thread, or a turn that is not in its history."""
    history = visible_turns(store, thread_id, limit=HISTORY_LIMIT)
    if not history:
        raise TurnNotFound(f"no thread {thread_id!r} (see `toolang threads list`)")
    if at.isdigit() and len(at) <= MAX_POSITION_DIGITS:
        position = int(at)
        if not 1 <= position <= len(history):
            raise TurnNotFound(
                f"--at {at}: thread {thread_id!r} has turns 1 to {len(history)}; expected "
                "one of them or a turn id"
            )
        index = position - 1
    else:
        index = next((i for i, t in enumerate(history) if t.id == at), -1)
        if index < 0:
            raise TurnNotFound(
                f"--at {at!r}: no such turn in thread {thread_id!r} (expected a position "
                "from 1 or the id of one of its turns: `toolang threads show`)"
            )
    return history[index], [t.id for t in history[:index]]


def fork_thread(
    inbox: Inbox,
    thread_id: str,
    at: str,
    *,
    owner: str | None,
    edit_input: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    new_thread: str | None = None,
    channel: str = "cli",
    sender: str = "owner",
) -> Forked:
    """Start a new thread whose history is ``thread_id``'s before turn ``at`` (see
    :func:`pick_turn`), and submit that turn again on it — with ``edit_input`` as its
    input, ``agent`` answering, ``model`` answering for the agent (each: as before when
    ``None``). The new request is only queued: wait for it as for any (``await_turn``).

    The new thread (``new_thread``, else ``fork:<id>``) is the original's owner's; only
    that owner may fork (``owner``; ``None`` is the operator).

    :raises NotThreadOwner: when ``owner`` may not use ``thread_id``.
    :raises TurnNotFound: for an unknown thread or turn.
    :raises UsageError: when ``new_thread`` exists already, or the turn has not ended.
    """
    store = inbox.store
    check_thread(store, thread_id, owner)
    chosen, before = pick_turn(store, thread_id, at)
    if not chosen.status.is_terminal:
        raise UsageError(
            f"turn {chosen.id} is {chosen.status.value}: fork at a turn that has ended"
        )
    target = new_thread or f"fork:{new_id()}"
    if store.thread(target) is not None:
        raise UsageError(f"--thread {target!r}: that thread exists; a fork starts a new one")
    now = inbox.clock()
    # The reference first: the first prompt on the new thread reads the history.
    write_fork(store, ThreadFork(target, thread_id, chosen.seq, chosen.id, "fork", now))
    meta = {MODEL_META: model} if model else {}
    submitted = inbox.submit(
        NewTurnRequest(
            source=chosen.source,
            thread_id=target,
            input=chosen.input if edit_input is None else edit_input,
            thread_group=chosen.thread_group,
            sender=sender,
            channel=channel,
            agent=agent or chosen.agent,
            owner=owner,
            timeout_seconds=chosen.timeout_seconds,
            meta={**meta, "forked_from": chosen.id},
        )
    )
    return Forked(target, submitted.id, thread_id, chosen.id, tuple(before))
