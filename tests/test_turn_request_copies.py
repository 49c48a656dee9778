"""Hand-written copies (TurnRequest, TurnOutcome) give exactly what attrs.evolve gives."""

from __future__ import annotations

import attrs

from toolang_core.store.types import TurnRequest, TurnStatus


def every_field_its_own_value() -> TurnRequest:
    """A request whose every field differs from the others (a swapped pair shows)."""
    values = {
        "id": "t-1",
        "seq": 7,
        "source": "chat",
        "thread_id": "chat:1",
        "thread_group": "chat-group",
        "priority": 40,
        "rank": 1.5,
        "input": "the input",
        "status": TurnStatus.RUNNING,
        "attempt": 2,
        "created_at": 10.0,
        "updated_at": 11.0,
        "sender": "someone",
        "channel": "a channel",
        "agent": "an agent",
        "dedupe_key": "a key",
        "not_before": 12.0,
        "parent": "t-0",
        "owner": "an owner",
        "timeout_seconds": 13.0,
        "meta": {"m": 1},
        "steer": True,
        "started_at": 14.0,
        "finished_at": 15.0,
        "lease_owner": "run-1",
        "lease_expires": 16.0,
        "cancel_requested": True,
        "output": "an output",
        "outcome": "an outcome",
        "error": "an error",
    }
    assert set(values) == {f.name for f in attrs.fields(TurnRequest)}
    return TurnRequest(**values)


def test_with_input_is_evolve():
    turn = every_field_its_own_value()
    assert turn.with_input("new") == attrs.evolve(turn, input="new")


def test_ended_is_evolve():
    turn = every_field_its_own_value()
    ended = turn.ended(
        TurnStatus.COMPLETED, finished_at=20.0, output="out", outcome=None, error=None
    )
    assert ended == attrs.evolve(
        turn,
        status=TurnStatus.COMPLETED,
        finished_at=20.0,
        output="out",
        outcome=None,
        error=None,
    )
    masked = turn.ended(
        TurnStatus.FAILED, finished_at=None, output=None, outcome="x", error="e", input="in"
    )
    assert masked == attrs.evolve(
        turn,
        status=TurnStatus.FAILED,
        finished_at=None,
        output=None,
        outcome="x",
        error="e",
        input="in",
    )


def test_turn_outcome_with_parts_is_evolve():
    from toolang_core.execution.seam import AfterTurn, TurnOutcome
    from toolang_core.store.types import StepRecord

    step = StepRecord("t-1", 3, 1, "tool_call", "completed", 1.0, 2.0, {"a": 1}, None, "k")
    outcome = TurnOutcome(TurnStatus.FAILED, "out", "why", "err", (step,), None)
    after = AfterTurn(prompt_trace={"p": 1})
    assert outcome.with_parts(after=after) == attrs.evolve(outcome, after=after)
    assert outcome.with_parts(steps=()) == attrs.evolve(outcome, steps=())
    assert outcome.with_parts() == outcome
