"""``ModelRequest.key``: every model call of a turn carries its step key, the same one
the step is recorded under, so a provider can find an earlier attempt of the call (the
A2A remote-agent provider does, to never send a message twice)."""

from __future__ import annotations

import asyncio

from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


def test_each_model_call_carries_its_step_key(tmp_path):
    model = ScriptedModel(
        [
            tool_call("no_such_tool", {}, call_id="c1"),
            text("it is 3"),
        ]
    )
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    runtime = Runtime.with_plugins(config, [("scripted", model.plugin())], env={})
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:k", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        turn = inbox.get(turn_id)
        steps = inbox.store.steps(turn_id)
    finally:
        inbox.store.close()
    assert turn.status is TurnStatus.COMPLETED, turn.error
    keys = [request.key for request in model.calls]
    assert keys == [f"{turn_id}:model:0", f"{turn_id}:model:1"]
    recorded = {s.idempotency_key for s in steps if s.kind == "model_call"}
    assert set(keys) <= recorded
