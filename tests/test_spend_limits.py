"""Spend limits through a real runtime: a scripted model reports token usage, the turn
counts it, and a limit reached ends the turn cleanly before the next model call (or
before the tools of the answer that reached it)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import attrs
import pytest
from bump_tools import BUMPED, BumpTools, clear_bumps  # noqa: F401 (a fixture)

from toolang_core.config import ToolangConfig, parse_config
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.config.spend import LimitsConfig
from toolang_core.errors import ConfigError
from toolang_core.inbox.request_checks import InvalidRequest
from toolang_core.runtime import Runtime
from toolang_core.spend import SpendBudget, day_start, tokens_of
from toolang_core.store.types import NewTurnRequest, StepRecord, TurnStatus
from toolang_core.store.usage import Usage, UsageFilter
from toolang_core.testing.models import ScriptedModel, text, tokens, tool_call

BUMPS = BUMPED


def make(tmp_path: Path, model: ScriptedModel, **limits: int) -> Runtime:
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        limits=LimitsConfig(**limits),
    )
    return Runtime.with_plugins(
        config, [("scripted", model.plugin()), ("tools", BumpTools())], env={}
    )


def run(runtime: Runtime, *, thread: str = "cli:t", owner: str | None = "alice", **kw):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id=thread, input="go", owner=owner, **kw)
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def bumping(n: int, per_call: int = 40) -> ScriptedModel:
    """``n`` answers each asking for one ``bump`` and reporting ``per_call`` tokens."""
    return ScriptedModel(
        [tool_call("bump", {"label": str(i)}, usage=tokens(per_call - 5, 5)) for i in range(n)]
    )


def usage_of(runtime: Runtime, where: UsageFilter) -> Usage:
    inbox = runtime.open_inbox()
    try:
        return inbox.store.usage(where)
    finally:
        inbox.store.close()


# -- recording --------------------------------------------------------------------------


def test_every_model_call_step_records_its_usage_normalised(tmp_path):
    model = ScriptedModel(
        [
            tool_call("bump", {"label": "a"}, usage=tokens(100, 7, cached=60)),
            text("done", usage={"prompt_tokens": 120, "completion_tokens": 3}),
        ]
    )
    turn, steps = run(make(tmp_path, model))
    assert turn.status is TurnStatus.COMPLETED
    calls = [s for s in steps if s.kind == "model_call"]
    assert [s.data["tokens"] for s in calls] == [
        {"input": 100, "output": 7, "cached": 60},
        {"input": 120, "output": 3},
    ]
    assert calls[0].data["response"]["usage"] == tokens(100, 7, cached=60)  # as reported


def test_usage_is_summed_per_turn_thread_and_owner(tmp_path):
    model = ScriptedModel([text("one", usage=tokens(10, 2)), text("two", usage=tokens(20, 3))])
    runtime = make(tmp_path, model)
    first, _ = run(runtime, thread="cli:a", owner="alice")
    run(runtime, thread="cli:b", owner="bob")
    assert usage_of(runtime, UsageFilter(turn_id=first.id)) == Usage(10, 2, 0, 1)
    assert usage_of(runtime, UsageFilter(thread_id="cli:b")).total == 23
    assert usage_of(runtime, UsageFilter(owner="alice")).total == 12


def test_a_model_that_reports_nothing_counts_calls_only(tmp_path):
    turn, steps = run(make(tmp_path, ScriptedModel([text("hi")]), max_tokens_per_turn=1))
    assert turn.status is TurnStatus.COMPLETED
    assert "tokens" not in steps[-1].data


@pytest.mark.parametrize(
    ("reported", "normalised"),
    [
        ({"input_tokens": 3, "output_tokens": 4}, {"input": 3, "output": 4}),
        (
            {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            {"input": 3, "output": 4},
        ),
        (
            {"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 8}},
            {"input": 9, "cached": 8},
        ),
        ({"input_tokens": 5, "cache_read_input_tokens": 2}, {"input": 5, "cached": 2}),
        ({"input_tokens": -1, "output_tokens": "x", "other": 3}, {}),
        ({}, {}),
    ],
)
def test_provider_usage_keys_are_normalised(reported, normalised):
    assert tokens_of(reported) == normalised


# -- limits of one turn -----------------------------------------------------------------


def test_max_tokens_per_turn_stops_the_turn_at_the_call_that_reached_it(tmp_path):
    model = bumping(3, per_call=40)  # 40, 80, 120 tokens: the third reaches 100
    turn, steps = run(make(tmp_path, model, max_tokens_per_turn=100))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "usage_limit")
    assert turn.error == (
        "token limit reached: this turn used 120 tokens (105 input, 15 output) of "
        "max_tokens_per_turn = 100"
    )
    assert BUMPS == ["0", "1"]  # the third answer's tool call was never made
    assert [s.kind for s in steps].count("model_call") == 3
    assert [s.kind for s in steps].count("tool_call") == 2
    model.assert_complete()


def test_a_final_answer_within_the_limit_completes(tmp_path):
    model = ScriptedModel([tool_call("bump", {"label": "a"}, usage=tokens(40)), text("ok")])
    turn, _ = run(make(tmp_path, model, max_tokens_per_turn=100))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "ok")


def test_max_model_calls_stops_before_the_next_call(tmp_path):
    model = bumping(2)
    turn, _ = run(make(tmp_path, model, max_model_calls=2))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "usage_limit")
    assert turn.error == (
        "model call limit reached: this turn made 2 model calls (max_model_calls = 2); "
        "stopped before calling the model again"
    )
    assert len(model.calls) == 2 and BUMPS == ["0"]


def test_a_request_may_lower_the_configured_limits_never_raise_them(tmp_path):
    turn, _ = run(make(tmp_path, bumping(1)), meta={"limits": {"max_model_calls": 1}})
    assert (turn.outcome, BUMPS) == ("usage_limit", [])
    BUMPS.clear()
    turn, _ = run(
        make(tmp_path / "b", bumping(2), max_model_calls=2),
        meta={"limits": {"max_model_calls": 50}},
    )
    assert "(max_model_calls = 2)" in turn.error


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"limits": {"max_model_calls": 0}}, "limits.max_model_calls: expected an integer >= 1"),
        ({"limits": {"max_model_calls": "3"}}, "limits.max_model_calls: expected an integer"),
        ({"limits": {"max_tokens": 3}}, "limits.max_tokens: unknown limit"),
        ({"limits": 5}, "limits: expected a table"),
        ({"budget": {"scope": "", "tokens": 3}}, "budget.scope: expected a non-empty string"),
        ({"budget": {"scope": "team:x", "tokens": -1}}, "budget.tokens: expected an integer"),
    ],
)
def test_bad_request_limits_are_refused_at_the_door(tmp_path, meta, message):
    inbox = make(tmp_path, ScriptedModel([])).open_inbox()
    try:
        with pytest.raises(InvalidRequest, match=message):
            inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go", meta=meta))
    finally:
        inbox.store.close()


def test_no_limit_configured_changes_nothing(tmp_path):
    model = bumping(5, per_call=10_000)
    model.steps.append(text("done", usage=tokens(10_000)))
    turn, _ = run(make(tmp_path, model))
    assert (turn.status, turn.output, len(BUMPS)) == (TurnStatus.COMPLETED, "done", 5)


# -- an owner's day ---------------------------------------------------------------------


def test_owner_daily_tokens_hold_across_turns_and_spare_other_owners(tmp_path):
    model = ScriptedModel(
        [
            text("first", usage=tokens(60, 10)),  # alice: 70 today
            tool_call("bump", {"label": "x"}, usage=tokens(25, 5)),  # alice: 100, reached
            text("bob's", usage=tokens(60, 10)),  # bob has his own day
        ]
    )
    runtime = make(tmp_path, model, owner_daily_tokens=100)
    first, _ = run(runtime, thread="cli:a1", owner="alice")
    second, _ = run(runtime, thread="cli:a2", owner="alice")
    bobs, _ = run(runtime, thread="cli:b", owner="bob")
    assert first.status is TurnStatus.COMPLETED
    assert (second.status, second.outcome) == (TurnStatus.FAILED, "usage_limit")
    assert second.error == (
        "daily token limit reached: owner 'alice' used 100 tokens today (UTC) of "
        "owner_daily_tokens = 100"
    )
    assert BUMPS == []
    assert (bobs.status, bobs.output) == (TurnStatus.COMPLETED, "bob's")
    # once over, the owner's next turn is stopped before its first model call
    third, steps = run(runtime, thread="cli:a3", owner="alice")
    assert third.outcome == "usage_limit"
    assert [s.kind for s in steps if s.kind == "model_call"] == []
    model.assert_complete()


def test_the_day_starts_at_midnight_utc():
    assert day_start(86_400 * 3 + 5) == 86_400 * 3


# -- a budget many turns draw on --------------------------------------------------------


def test_a_budget_shared_by_turns_stops_them_with_budget_exceeded(tmp_path):
    budget = {"budget": SpendBudget("team:t1", 100, "team t1").to_meta()}
    model = ScriptedModel(
        [text("a", usage=tokens(50, 10)), tool_call("bump", {}, usage=tokens(40))]
    )
    runtime = make(tmp_path, model)
    first, _ = run(runtime, thread="task:1", meta=budget)
    second, _ = run(runtime, thread="task:2", meta=budget)
    assert first.status is TurnStatus.COMPLETED
    assert (second.status, second.outcome) == (TurnStatus.FAILED, "budget_exceeded")
    assert second.error == "budget exceeded: team t1 spent 100 tokens of its budget of 100"
    assert usage_of(runtime, UsageFilter(budget="team:t1")).total == 100


# -- configuration ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            "[limits]\nmax_tokens_per_turn = -5\n",
            "limits.max_tokens_per_turn: expected a number >= 1",
        ),
        ('[limits]\nmax_model_calls = "ten"\n', "limits.max_model_calls: expected an integer"),
        ("[limits]\nowner_daily_tokens = 1.5\n", "limits.owner_daily_tokens: expected an integer"),
        ("[limits]\nmax_tokens = 5\n", "limits.max_tokens: unknown key"),
    ],
)
def test_bad_limits_in_the_config_name_the_key(tmp_path, toml, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(toml, file=tmp_path / "toolang.toml", env={})


# -- a turn resumed after a crash ---------------------------------------------------------


def test_calls_an_earlier_attempt_made_count_toward_the_resumed_turns_limit(tmp_path):
    """A runtime died after one model call (60 tokens) and its tool call; the turn
    resumed by another runtime replays both from the store — and counts the replayed
    call, so its next call (50 more) reaches the 100-token limit."""
    model = ScriptedModel([tool_call("bump", {"label": "second"}, usage=tokens(45, 5))])
    runtime = make(tmp_path, model, max_tokens_per_turn=100)
    store = runtime.open_store()
    try:
        turn_id = (
            runtime.open_inbox()
            .submit(NewTurnRequest(source="chat", thread_id="cli:crash", input="go", owner="alice"))
            .id
        )
        long_ago = time.time() - 600
        (turn,) = store.claim(run_id="dead", limit=1, now=long_ago, lease_seconds=1, caps={})
        call = {"id": "c1", "name": "bump", "params": {"label": "first"}}
        earlier = [
            ("model_call", f"{turn_id}:model:0", {
                "response": {"text": "", "tool_calls": [call], "usage": tokens(55, 5)},
                "tokens": {"input": 55, "output": 5},
            }),
            ("tool_call", f"{turn_id}:tool:c1", {
                "call": call, "result": {"ok": True, "output": "bumped first"},
            }),
        ]  # fmt: skip
        for kind, key, data in earlier:
            step = StepRecord(turn_id, 0, turn.attempt, kind, "completed", long_ago, long_ago)
            store.record_step(attrs.evolve(step, data=data, idempotency_key=key), run_id="dead")
    finally:
        store.close()

    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    inbox = runtime.open_inbox()
    try:
        resumed = inbox.get(turn_id)
    finally:
        inbox.store.close()
    assert (resumed.status, resumed.outcome, resumed.attempt) == (
        TurnStatus.FAILED,
        "usage_limit",
        2,
    )
    assert "this turn used 110 tokens" in resumed.error
    assert BUMPS == []  # the first call was replayed, the second never made
    assert len(model.calls) == 1
