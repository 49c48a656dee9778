"""Replaying a recorded turn against another model or agent, without side effects.

Three steps, each usable alone (an evaluation runs many plans in a home of its own)::

    plan = plan_replay(store, turn_id, model="llm/gpt-4o", owner=None)  # read the record
    new_id = submit_replay(inbox, plan)              # queue it on a new thread
    turn = await await_turn(runtime, inbox, new_id)  # run it (or watch a runtime run it)
    report = replay_report(store, plan, new_id)      # what it answered, what was stopped

or :func:`replay_turn`, which does the four. A replay runs through the real runtime —
scheduler, prompt, model, limits — on thread ``replay:<id>``, whose history is the
recorded turn's thread before that turn (by reference). Its tool calls are answered by
:class:`~toolang_core.turn.replay.RecordedCalls`: a recorded call (same tool, same
canonical parameters) gets its recorded result, a tool named in ``allow_tools`` runs for
real, anything else is stopped (never run) and reported. Nothing is remembered, and the
recorded turn, its thread and its steps are never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.errors import UsageError
from toolang_core.ids import new_id
from toolang_core.store.errors import TurnNotFound
from toolang_core.store.forks import ThreadFork, write_fork
from toolang_core.store.owners import check_thread
from toolang_core.store.types import NewTurnRequest, TurnRequest
from toolang_core.turn.replay import MODEL_META, REPLAY_META, RecordedCall

__all__ = [
    "RecordedCall",
    "ReplayPlan",
    "ReplayReport",
    "ReplayedCall",
    "plan_replay",
    "recorded_calls",
    "replay_report",
    "replay_turn",
    "submit_replay",
]

if TYPE_CHECKING:
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.runtime.runtime import Runtime
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import StepRecord


@attrs.frozen
class ReplayPlan:
    """A recorded turn, ready to run again: what it was asked, by whom, on which
    thread before which turn (its history), the tool calls it made with their results,
    and what the replay changes (``model``, ``agent``) and allows (``allow_tools``).

    A plan is a value: it can be submitted to another runtime's inbox (an evaluation's
    own home) with ``history=False`` there, the recorded thread being in another store."""

    turn_id: str
    thread_id: str
    before_seq: int
    input: str
    source: str
    thread_group: str
    owner: str | None
    agent: str | None
    model: str | None
    calls: tuple[RecordedCall, ...]
    allow_tools: tuple[str, ...] = ()
    original_output: str | None = None
    original_status: str = ""

    def meta(self) -> dict[str, Any]:
        """The request metadata that makes a turn this replay (turn/replay.py)."""
        meta: dict[str, Any] = {
            REPLAY_META: {
                "turn_id": self.turn_id,
                "calls": [call.to_json() for call in self.calls],
                "allow_tools": list(self.allow_tools),
            }
        }
        if self.model:
            meta[MODEL_META] = self.model
        return meta


@attrs.frozen
class ReplayedCall:
    """One tool call the replay made: its tool, parameters, how it was answered
    (``recorded``, ``stopped`` or ``ran`` — an allowed tool) and the result's text."""

    name: str
    params: dict[str, Any]
    answer: str
    ok: bool
    error: str | None = None


@attrs.frozen
class ReplayReport:
    """How a replay went: its turn and thread, the recorded turn's answer beside the
    replay's, and every tool call it made."""

    turn_id: str
    replay_turn_id: str
    thread_id: str
    status: str
    output: str | None
    error: str | None
    original_output: str | None
    calls: tuple[ReplayedCall, ...]

    @property
    def stopped(self) -> tuple[ReplayedCall, ...]:
        """The calls that were stopped: asked for, not recorded, never run."""
        return tuple(c for c in self.calls if c.answer == "stopped")

    @property
    def recorded(self) -> tuple[ReplayedCall, ...]:
        """The calls answered from the record."""
        return tuple(c for c in self.calls if c.answer == "recorded")


def recorded_calls(steps: Sequence[StepRecord]) -> tuple[RecordedCall, ...]:
    """The tool calls a turn's ``steps`` record with a result, in order (a call left in
    doubt, canceled, or itself stopped by a replay has none to give)."""
    found = []
    for step in steps:
        data = step.data
        if step.kind != "tool_call" or step.status == "intent" or "result" not in data:
            continue
        if data.get("canceled") or data.get("replay") == "stopped":
            continue
        call = data.get("call") or {}
        found.append(
            RecordedCall(str(call.get("name", "")), dict(call.get("params") or {}), data["result"])
        )
    return tuple(found)


def plan_replay(
    store: ExecutionStore,
    turn_id: str,
    *,
    owner: str | None,
    model: str | None = None,
    agent: str | None = None,
    allow_tools: Sequence[str] = (),
) -> ReplayPlan:
    """Read turn ``turn_id``'s record into a :class:`ReplayPlan`, for ``owner``
    (``None``: the operator) — who must own its thread.

    :raises TurnNotFound: for an unknown turn.
    :raises NotThreadOwner: when the turn is another owner's.
    :raises UsageError: when the turn has not ended yet.
    """
    turn = store.get(turn_id)
    if turn is None:
        raise TurnNotFound(f"no turn request with id {turn_id!r} (see `toolang turns list`)")
    check_thread(store, turn.thread_id, owner)
    if not turn.status.is_terminal:
        raise UsageError(f"turn {turn_id} is {turn.status.value}: replay a turn that has ended")
    return ReplayPlan(
        turn_id=turn.id,
        thread_id=turn.thread_id,
        before_seq=turn.seq,
        input=turn.input,
        source=turn.source,
        thread_group=turn.thread_group,
        owner=turn.owner,
        agent=agent or turn.agent,
        model=model,
        calls=recorded_calls(store.steps(turn.id)),
        allow_tools=tuple(allow_tools),
        original_output=turn.output,
        original_status=turn.status.value,
    )


def submit_replay(
    inbox: Inbox,
    plan: ReplayPlan,
    *,
    thread_id: str | None = None,
    history: bool = True,
    channel: str = "cli",
    sender: str = "owner",
) -> str:
    """Queue ``plan`` on a new thread (``thread_id``, else ``replay:<id>``) of the
    plan's owner and return the new request's id; with ``history`` the thread's history
    is the recorded thread's before the turn (by reference: the recorded thread must be
    in ``inbox``'s store).

    :raises UsageError: when ``thread_id`` exists already."""
    target = thread_id or f"replay:{new_id()}"
    store = inbox.store
    if store.thread(target) is not None:
        raise UsageError(f"thread {target!r} exists; a replay runs on a new thread")
    if history:
        fork = ThreadFork(target, plan.thread_id, plan.before_seq, plan.turn_id, "replay")
        write_fork(store, attrs.evolve(fork, at=inbox.clock()))
    return inbox.submit(
        NewTurnRequest(
            source=plan.source,
            thread_id=target,
            input=plan.input,
            thread_group=plan.thread_group,
            sender=sender,
            channel=channel,
            agent=plan.agent,
            owner=plan.owner,
            meta=plan.meta(),
        )
    ).id


def replay_report(store: ExecutionStore, plan: ReplayPlan, replay_turn_id: str) -> ReplayReport:
    """What the replay ``replay_turn_id`` of ``plan`` did, from its turn and steps.

    :raises TurnNotFound: for an unknown turn."""
    turn = store.get(replay_turn_id)
    if turn is None:
        raise TurnNotFound(f"no turn request with id {replay_turn_id!r}")
    calls = []
    for step in store.steps(replay_turn_id):
        if step.kind != "tool_call" or step.status == "intent":
            continue
        data = step.data
        call, result = data.get("call") or {}, data.get("result") or {}
        calls.append(
            ReplayedCall(
                name=str(call.get("name", "")),
                params=dict(call.get("params") or {}),
                answer=str(data.get("replay", "ran")),
                ok=bool(result.get("ok")),
                error=result.get("error"),
            )
        )
    return _report(plan, turn, tuple(calls))


def _report(plan: ReplayPlan, turn: TurnRequest, calls: tuple[ReplayedCall, ...]) -> ReplayReport:
    return ReplayReport(
        turn_id=plan.turn_id,
        replay_turn_id=turn.id,
        thread_id=turn.thread_id,
        status=turn.status.value,
        output=turn.output,
        error=turn.error,
        original_output=plan.original_output,
        calls=calls,
    )


async def replay_turn(
    runtime: Runtime,
    inbox: Inbox,
    turn_id: str,
    *,
    owner: str | None,
    model: str | None = None,
    agent: str | None = None,
    allow_tools: Sequence[str] = (),
    timeout: float | None = None,
) -> ReplayReport:
    """Replay turn ``turn_id`` (see the module docstring) and wait for it: served by
    the runtime that serves ``inbox``'s store, or by a one-shot runtime here when none
    does (:func:`~toolang_core.runtime.oneshot.await_turn`). With ``timeout`` it
    returns the replay as it is then (``status`` not terminal).

    :raises TurnNotFound, NotThreadOwner, UsageError: as :func:`plan_replay`."""
    from toolang_core.runtime.oneshot import await_turn

    plan = plan_replay(
        inbox.store, turn_id, owner=owner, model=model, agent=agent, allow_tools=allow_tools
    )
    replay_id = submit_replay(inbox, plan)
    await await_turn(runtime, inbox, replay_id, timeout=timeout)
    return replay_report(inbox.store, plan, replay_id)
