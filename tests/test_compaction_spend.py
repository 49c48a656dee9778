"""A compaction's summarising calls are spent like any model call: their usage is stored
on the ``compaction`` step, summed by the store per turn, thread and owner, counted
against the turn's spend limits, and shown in the trace (docs/long-conversations.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_long_conversations import THREAD, WordModel, answer, is_summary_call, say

from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.config.spend import LimitsConfig
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.runtime import Runtime
from toolang_core.spend import USAGE_LIMIT
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.store.usage import UsageFilter
from toolang_core.testing.models import tokens
from toolang_core.turn.timeline import timeline

SUMMARY_USAGE = tokens(50, 10)
AGENT_USAGE = tokens(20, 2)


def costly(request: ModelRequest) -> ModelResponse:
    """The scripted model of the long-conversation tests, reporting usage: 60 tokens a
    summarising call, 22 an agent's call."""
    said = answer(request)
    usage = SUMMARY_USAGE if is_summary_call(request) else AGENT_USAGE
    return ModelResponse(text=said.text, usage=usage)


def make(tmp_path: Path, **limits: int) -> tuple[Runtime, WordModel]:
    model = WordModel(costly)
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(context_tokens=300),
        limits=LimitsConfig(**limits),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin())], env={}), model


def run_thread(runtime: Runtime, count: int) -> list[str]:
    inbox = runtime.open_inbox()
    ids = [
        inbox.submit(
            NewTurnRequest(source="chat", thread_id=THREAD, input=say(n), owner="alice")
        ).id
        for n in range(1, count + 1)
    ]
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    inbox.store.close()
    return ids


def test_a_summarising_calls_usage_is_stored_summed_and_shown_in_the_trace(tmp_path):
    runtime, model = make(tmp_path)
    ids = run_thread(runtime, 8)
    store = runtime.open_inbox().store
    try:
        compacting = [i for i in ids if any(s.kind == "compaction" for s in store.steps(i))]
        assert compacting
        turn = store.get(compacting[0])
        steps = store.steps(turn.id)
        folded = [s for s in steps if s.kind == "compaction"]
        assert [s.data["tokens"] for s in folded] == [{"input": 50, "output": 10}] * len(folded)
        used = store.usage(UsageFilter(turn_id=turn.id))
        assert used.model_calls == len(folded) + 1
        assert used.total == 60 * len(folded) + 22
        everything = store.usage(UsageFilter(owner="alice"))
        assert everything.model_calls == len(model.calls)
        summaries = sum(is_summary_call(c) for c in model.calls)
        assert everything.total == 60 * summaries + 22 * (len(model.calls) - summaries)
        assert "60 tokens spent" in "\n".join(timeline(turn, steps))
    finally:
        store.close()


def test_a_turns_model_call_limit_counts_its_summarising_calls(tmp_path):
    """One model call a turn: a turn that had to compact has made it, and stops before
    asking its agent's model."""
    runtime, _ = make(tmp_path, max_model_calls=1)
    ids = run_thread(runtime, 8)
    store = runtime.open_inbox().store
    try:
        turns = [store.get(i) for i in ids]
        compacted = [t for t in turns if any(s.kind == "compaction" for s in store.steps(t.id))]
        assert compacted
        for turn in compacted:
            assert turn.status is TurnStatus.FAILED
            assert turn.outcome == USAGE_LIMIT
            assert "max_model_calls = 1" in (turn.error or "")
            assert [s.kind for s in store.steps(turn.id)].count("model_call") == 0
        assert all(t.status is TurnStatus.COMPLETED for t in turns if t not in compacted)
    finally:
        store.close()


def test_an_earlier_attempts_summarising_call_counts_toward_the_resumed_turns_limit(tmp_path):
    """A runtime died after a compaction (its step stored); the turn resumed by another
    runtime counts that call: with one model call a turn, it stops before its model."""
    import time

    import attrs

    from toolang_core.store.types import StepRecord

    runtime, model = make(tmp_path, max_model_calls=1)
    store = runtime.open_store()
    try:
        turn_id = (
            runtime.open_inbox()
            .submit(NewTurnRequest(source="chat", thread_id=THREAD, input="hi", owner="alice"))
            .id
        )
        long_ago = time.time() - 600
        (turn,) = store.claim(run_id="dead", limit=1, now=long_ago, lease_seconds=1, caps={})
        step = StepRecord(turn_id, 0, turn.attempt, "compaction", "completed", long_ago, long_ago)
        data = {"summary": "x", "tokens": {"input": 50, "output": 10}}
        key = f"{turn_id}:compaction:1"
        store.record_step(attrs.evolve(step, data=data, idempotency_key=key), run_id="dead")
    finally:
        store.close()
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    inbox = runtime.open_inbox()
    try:
        turn = inbox.get(turn_id)
        assert (turn.status, turn.outcome) == (TurnStatus.FAILED, USAGE_LIMIT)
        assert model.calls == []
        assert inbox.store.usage(UsageFilter(turn_id=turn_id)).total == 60
    finally:
        inbox.store.close()
