"""``cron_add``, ``cron_list``, ``cron_pause``, ``cron_resume``, ``cron_remove``.

No second scheduler: a chore is a record of kind ``chore`` in the execution store —
the contract toolang-source-chore documents — which the chore source loads next to the
chores of the configuration and fires as chore turn requests through the one inbox
(``toolang chores list`` shows it). The record carries the owner: the chore's turns
are theirs, and only they see and change it here.
"""

from __future__ import annotations

from typing import Any, Literal

from toolang_core import (
    NotThreadOwner,
    Record,
    RuntimeView,
    Schedule,
    ScheduleError,
    ToolCallContext,
    check_thread,
    is_own,
)
from toolang_tools_automator.common import (
    AutomatorError,
    call_digest,
    check_agent,
    owner_of,
    runtime_of,
    settings_of,
)

KIND = "chore"
"""The record kind toolang-source-chore loads chores from."""
CHORE_SOURCE = "chore"
"""The turn source (toolang-source-chore's) woken when a chore record changes."""
ScheduleType = Literal["cron", "rrule", "every"]
_KINDS = {"cron": "cron", "rrule": "rrule", "every": "interval"}


def _schedule(schedule_type: ScheduleType, schedule: str, now: float) -> Schedule:
    text = " ".join(schedule.split())
    if schedule_type == "every" and not text.lower().startswith("every "):
        text = f"every {text}"
    try:
        parsed = Schedule(text, now)
    except ScheduleError as exc:
        raise AutomatorError(f"schedule: {exc}") from None
    if parsed.kind != _KINDS[schedule_type]:
        raise AutomatorError(
            f"schedule: {schedule!r} reads as a {parsed.kind} schedule, but schedule_type "
            f"is {schedule_type!r}"
        )
    if parsed.next_after(now) is None:
        raise AutomatorError(f"schedule: {schedule!r} never fires again")
    return parsed


def _mine(context: ToolCallContext) -> list[Record]:
    owner = owner_of(context)
    store = runtime_of(context).store
    assert store is not None
    return [r for r in store.list_records(KIND) if is_own(r.data.get("owner"), owner)]


def _one(context: ToolCallContext, chore_id: str) -> Record:
    for record in _mine(context):
        if record.key == chore_id:
            return record
    raise AutomatorError(f"id: no chore {chore_id!r} of yours (cron_list shows yours)")


def _view(record: Record, now: float) -> dict[str, Any]:
    data = record.data
    next_at = None
    if not data.get("paused"):
        try:
            next_at = Schedule(str(data["schedule"]), float(data["start"])).next_after(now)
        except (ScheduleError, KeyError, TypeError, ValueError):
            next_at = None
    return {
        "id": record.key,
        "name": data.get("name"),
        "schedule_type": data.get("schedule_type"),
        "schedule": data.get("schedule"),
        "prompt": data.get("input"),
        "agent": data.get("agent"),
        "thread_id": data.get("thread_id") or f"chore:{record.key}",
        "paused": bool(data.get("paused")),
        "next_at": next_at,
    }


def _check_thread(context: ToolCallContext, thread_id: str, owner: str) -> None:
    """The chore's turns go to ``thread_id`` as ``owner``'s: the one owner rule now,
    rather than a refusal at every occurrence."""
    store = runtime_of(context).store
    assert store is not None
    try:
        check_thread(store, thread_id, owner)
    except NotThreadOwner as exc:
        raise AutomatorError(f"thread_id: {exc}") from None


def cron_add(
    *,
    name: str,
    schedule_type: ScheduleType,
    schedule: str,
    prompt: str,
    agent: str | None = None,
    thread_id: str | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Schedule a recurring chore: at each occurrence the prompt runs as a turn.

    :param name: a short name, unique among your chores
    :param schedule_type: "cron" (e.g. "0 9 * * 1-5"), "rrule" (e.g.
        "FREQ=DAILY;BYHOUR=7") or "every" (e.g. "15 minutes")
    :param schedule: the schedule, in the form schedule_type names
    :param prompt: what the chore's turn is asked to do
    :param agent: the agent that runs it (default: the default agent)
    :param thread_id: the thread its turns run on (default: its own chore thread)
    """
    assert context is not None
    runtime = runtime_of(context)
    store = runtime.store
    assert store is not None
    owner = owner_of(context)
    now = runtime.clock()
    parsed = _schedule(schedule_type, schedule, now)
    if not prompt.strip():
        raise AutomatorError("prompt: empty; say what the chore should do")
    if agent is not None:
        check_agent(runtime, agent, "agent")
    if thread_id is not None:
        _check_thread(context, thread_id, owner)
    key = f"cron.{call_digest(context)}"
    mine = _mine(context)
    existing = next((r for r in mine if r.key == key), None)
    if existing is not None:  # this very call, replayed: it was added already
        return {"added": False, **_view(existing, now)}
    if any(r.data.get("name") == name for r in mine):
        raise AutomatorError(f"name: you already have a chore named {name!r}")
    limit = settings_of(runtime).max_chores
    if len(mine) >= limit:
        raise AutomatorError(f"you have {len(mine)} chores, the most allowed ({limit})")
    record = store.put_record(
        KIND,
        key,
        {
            "name": name,
            "schedule_type": schedule_type,
            "schedule": parsed.text,
            "start": now,
            "input": prompt.strip(),
            "agent": agent,
            "thread_id": thread_id,
            "owner": owner,
            "paused": False,
        },
        now=now,
        expect_revision=0,
    )
    _tell_the_chore_source(runtime)
    return {"added": True, **_view(record, now)}


def _tell_the_chore_source(runtime: RuntimeView) -> None:
    """Wake the running chore source: it fires the chore from its first occurrence
    (counted from the record's ``start``), not once its next poll finds the record."""
    runtime.wake_source(CHORE_SOURCE)


def cron_list(context: ToolCallContext | None = None) -> list[dict[str, Any]]:
    """Your chores: schedule, prompt, agent, paused or when they next fire."""
    assert context is not None
    now = runtime_of(context).clock()
    return [_view(r, now) for r in sorted(_mine(context), key=lambda r: str(r.data.get("name")))]


def _set_paused(context: ToolCallContext | None, chore_id: str, paused: bool) -> dict[str, Any]:
    assert context is not None
    runtime = runtime_of(context)
    store = runtime.store
    assert store is not None
    record = _one(context, chore_id)
    now = runtime.clock()
    if bool(record.data.get("paused")) != paused:
        record = store.put_record(
            KIND,
            record.key,
            {**record.data, "paused": paused},
            now=now,
            expect_revision=record.revision,
        )
        _tell_the_chore_source(runtime)
    return _view(record, now)


def cron_pause(id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Pause one of your chores (it does not fire until resumed).

    :param id: the chore's id (from cron_add or cron_list)
    """
    return _set_paused(context, id, True)


def cron_resume(id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Resume one of your paused chores (it fires at its next occurrence).

    :param id: the chore's id (from cron_add or cron_list)
    """
    return _set_paused(context, id, False)


def cron_remove(id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Remove one of your chores for good.

    :param id: the chore's id (from cron_add or cron_list)
    """
    assert context is not None
    store = runtime_of(context).store
    assert store is not None
    record = _one(context, id)
    removed = store.delete_record(KIND, record.key)
    _tell_the_chore_source(runtime_of(context))
    return {"id": record.key, "removed": removed}
