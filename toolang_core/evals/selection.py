"""Choosing recorded turns to evaluate (``--from-turns 'agent=operator status=completed
since=7d'``), under the owner rules.

Keys: ``agent`` (the agent the turn asked for or that answered it), ``status``
(comma-separated; default ``completed``), ``since`` (``7d``, ``12h``, ``30m``, ``90s``
or an ISO date-time), ``source``, ``thread``, ``owner``, ``turn`` (comma-separated
ids), ``limit`` (default 100, at most 10,000). Only what the evaluating owner may see
is chosen (:func:`toolang_core.store.owners.may_see`): an owner its own turns, the
operator every owner's. Naming another owner's thread or owner is refused; another
owner's turn id is "not found", as everywhere else.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

import attrs

from toolang_core.errors import UsageError
from toolang_core.evals.types import RecordedTurn
from toolang_core.store.errors import NotThreadOwner
from toolang_core.store.owners import (
    check_thread,
    is_own,
    may_see,
    sees_every_owner,
)
from toolang_core.store.types import TurnFilter, TurnStatus

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import StepRecord, TurnRequest

KEYS: Final = ("agent", "status", "since", "source", "thread", "owner", "turn", "limit")
_DURATION: Final = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
PAGE: Final = 500
MAX_LIMIT: Final = 10_000


@attrs.frozen
class TurnSelection:
    """A parsed ``--from-turns`` selection."""

    agent: str | None = None
    statuses: tuple[TurnStatus, ...] = (TurnStatus.COMPLETED,)
    since: float | None = None
    source: str | None = None
    thread: str | None = None
    owner: str | None = None
    owner_named: bool = False
    turns: tuple[str, ...] = ()
    limit: int = 100


def parse_selection(text: str, *, now: float | None = None) -> TurnSelection:
    """``key=value`` words. :raises UsageError: naming the word and what was expected."""
    now = time.time() if now is None else now
    fields: dict[str, object] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        where = f"--from-turns {word!r}"
        if not sep or key not in KEYS:
            raise UsageError(f"{where}: expected KEY=VALUE with KEY one of {', '.join(KEYS)}")
        if key in fields or (key == "owner" and "owner_named" in fields):
            raise UsageError(f"{where}: {key} is given twice")
        if key == "status":
            try:
                fields["statuses"] = tuple(TurnStatus(s) for s in value.split(",") if s)
            except ValueError:
                known = ", ".join(s.value for s in TurnStatus)
                raise UsageError(f"{where}: expected statuses among {known}") from None
        elif key == "since":
            fields["since"] = _since(value, now, where)
        elif key == "turn":
            fields["turns"] = tuple(t for t in value.split(",") if t)
        elif key == "limit":
            if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
                raise UsageError(f"{where}: expected a number from 1 to {MAX_LIMIT:,}")
            fields["limit"] = int(value)
        elif key == "owner":
            fields["owner"], fields["owner_named"] = value or None, True
        else:
            fields[key] = value
    return TurnSelection(**fields)  # type: ignore[arg-type]


def _since(value: str, now: float, where: str) -> float:
    found = _DURATION.match(value)
    if found is not None:
        return now - float(found.group(1)) * _UNIT[found.group(2)]
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise UsageError(
            f"{where}: expected a duration (7d, 12h, 30m, 90s, 2w) or an ISO 8601 date-time"
        ) from None


def select_turns(
    store: ExecutionStore, selection: TurnSelection, viewer: str | None
) -> list[RecordedTurn]:
    """The recorded turns of ``store`` that ``selection`` names and ``viewer`` may see,
    newest first, each with its tool calls.

    :raises NotThreadOwner: ``thread`` or ``owner`` names another owner's.
    :raises TurnNotFound: a ``turn`` id that does not exist or ``viewer`` may not see.
    """
    if selection.owner_named and not may_see(selection.owner, viewer):
        who = "the operator" if sees_every_owner(viewer) else f"owner {viewer!r}"
        raise NotThreadOwner(
            f"--from-turns owner={selection.owner}: {who} may not evaluate another "
            "owner's turns; select your own"
        )
    if selection.thread is not None:
        check_thread(store, selection.thread, viewer, reading=True)
    chosen: list[RecordedTurn] = []
    for turn in _candidates(store, selection, viewer):
        if not may_see(turn.owner, viewer) or not _matches(turn, selection):
            continue
        steps = store.steps(turn.id)
        recorded = recorded_turn(turn, steps)
        if selection.agent is not None and selection.agent not in (turn.agent, recorded.agent):
            continue
        chosen.append(recorded)
        if len(chosen) >= selection.limit:
            break
    return chosen


def _candidates(
    store: ExecutionStore, selection: TurnSelection, viewer: str | None
) -> Iterator[TurnRequest]:
    if selection.turns:
        from toolang_core.store.errors import TurnNotFound

        for turn_id in selection.turns:
            turn = store.get(turn_id)
            if turn is None or not may_see(turn.owner, viewer):
                raise TurnNotFound(f"--from-turns turn={turn_id}: no turn request with this id")
            yield turn
        return
    # The operator may narrow to one owner; an owner reads only its own.
    owner = selection.owner if sees_every_owner(viewer) else viewer
    where = TurnFilter(
        thread_id=selection.thread,
        status=selection.statuses,
        source=selection.source,
        owner=owner,
        limit=PAGE,
    )
    while True:
        page = store.list_turns(where)
        for turn in page:
            if selection.since is not None and turn.created_at < selection.since:
                return  # newest first: the rest are older still
            yield turn
        if len(page) < PAGE:
            return
        where = attrs.evolve(where, before_seq=page[-1].seq)


def _matches(turn: TurnRequest, selection: TurnSelection) -> bool:
    if selection.statuses and turn.status not in selection.statuses:
        return False
    if selection.owner_named and not is_own(turn.owner, selection.owner):
        return False
    return selection.since is None or turn.created_at >= selection.since


def recorded_turn(turn: TurnRequest, steps: Sequence[StepRecord]) -> RecordedTurn:
    """``turn`` as an eval case draws on it: output, answering agent, tool calls."""
    from toolang_core.evals.runner import tool_call_seen

    agent = next((s.data.get("agent") for s in steps if s.kind == "prompt_build"), None)
    calls = tuple(
        tool_call_seen(s) for s in steps if s.kind == "tool_call" and s.status != "intent"
    )
    return RecordedTurn(
        turn_id=turn.id,
        thread_id=turn.thread_id,
        input=turn.input,
        agent=agent or turn.agent,
        output=turn.output,
        tool_calls=calls,
        source=turn.source,
    )
