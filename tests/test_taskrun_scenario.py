"""The delegation scenario end to end, in one real runtime with a scripted model.

A router spawns three teammates in async mode — a researcher narrowed to one tool, a
slow agent with a short timeout, a writer narrowed to drafting — and waits on them:
the slow one times out (failed, outcome timeout), the writer is stopped (canceled),
the researcher completes after its call outside its narrowed scope was refused. The
router answers with the merged summaries, and the parent thread's history holds the
three notes and nothing of the children's own turns.
"""

from __future__ import annotations

import json
from typing import Any

from taskrun_helpers import make_runtime
from test_taskrun_tools import run_turn

from toolang_core import TaskRunController, TurnFilter, TurnStatus
from toolang_core.models.types import ModelRequest
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import Step, text, tool_call


def tool_outputs(request: ModelRequest) -> list[Any]:
    """Every tool result of the turn so far, in order."""
    return [json.loads(m.content).get("output") for m in request.messages if m.role == "tool"]


def spawned(request: ModelRequest, index: int) -> str:
    return str(tool_outputs(request)[index]["agent_id"])


def merged_answer(request: ModelRequest) -> Step:
    *_, research, slow, _stop, writer = tool_outputs(request)
    lines = [
        f"research: {research['status']}: {research['summary']}",
        f"slow: {slow['status']} ({slow['outcome']}): {slow['summary']}",
        f"writer: {writer['status']}",
    ]
    return text("\n".join(lines))


ROUTER = [
    tool_call(
        "agent_spawn",
        {
            "instruction": "research the tides",
            "agent": "researcher",
            "allowed_tools": ["lookup_fact"],
            "spawn_reason": "facts first",
        },
    ),
    tool_call("agent_spawn", {"instruction": "think forever", "agent": "slowpoke", "timeout": 0.3}),
    tool_call(
        "agent_spawn",
        {"instruction": "draft the report", "agent": "writer", "allowed_tools": ["draft_text"]},
    ),
    lambda r: tool_call("agent_wait", {"agent_id": spawned(r, 0), "timeout": 30}),
    lambda r: tool_call("agent_wait", {"agent_id": spawned(r, 1), "timeout": 30}),
    lambda r: tool_call("agent_stop", {"agent_id": spawned(r, 2)}),
    lambda r: tool_call("agent_wait", {"agent_id": spawned(r, 2), "timeout": 30}),
    merged_answer,
]
RESEARCHER = [
    tool_call("lookup_source", {"topic": "tides"}),  # outside its narrowed scope
    tool_call("lookup_fact", {"topic": "tides"}),
    text("tides follow the moon"),
]
SLOWPOKE = [tool_call("hang", {"label": "forever"}), text("unreachable")]
WRITER = [tool_call("draft_text", {"text": "report"}), text("the report", delay=60)]


def test_a_router_spawns_three_teammates_and_answers_with_their_merged_summaries(tmp_path):
    cast = Cast(assistant=ROUTER, researcher=RESEARCHER, slowpoke=SLOWPOKE, writer=WRITER)
    runtime = make_runtime(tmp_path, cast)
    turn = run_turn(runtime, "report on the tides")

    # The parent answers with the merged summaries.
    assert turn.status is TurnStatus.COMPLETED
    assert turn.output == (
        "research: completed: tides follow the moon\n"
        "slow: failed (timeout): timed out after 0.3 s\n"
        "writer: canceled"
    )

    # Each teammate ended as it should, under the same controller.
    ids = [spawned(cast.requests_of("assistant")[-1], i) for i in range(3)]
    research, slow, writer = (runtime_view(runtime, run_id) for run_id in ids)
    assert (research["status"], research["agent_name"]) == ("completed", "researcher")
    assert (slow["status"], slow["outcome"]) == ("failed", "timeout")
    assert (writer["status"], writer["summary"], writer.get("error")) == (
        "canceled",
        "canceled",
        None,
    )
    assert (research["allowed_tools"], writer["allowed_tools"]) == (["lookup_fact"], ["draft_text"])

    # The researcher's call outside its narrowed scope was refused by the chain.
    refused, allowed = (
        json.loads(m.content)
        for m in cast.requests_of("researcher")[-1].messages
        if m.role == "tool"
    )
    assert (refused["ok"], refused["error_type"]) == (False, "not_allowed")
    assert refused["error"] == "tool 'lookup_source' is outside agent 'researcher''s scope"
    assert allowed == {"ok": True, "output": "fact about tides"}
    assert [s.name for s in cast.requests_of("researcher")[0].tools] == ["lookup_fact"]

    # No child history leaked into the parent thread: its turns are its own, and its
    # next prompt holds the exchange plus one note per run.
    store = runtime.open_store()
    assert [t.id for t in store.list_turns(TurnFilter(thread_id="chat:t"))] == [turn.id]
    for run_id in ids:
        assert [t.id for t in store.list_turns(TurnFilter(thread_id=f"task:{run_id}"))] == [run_id]
    store.close()
    cast.scripts["assistant"] = [text("anything else?")]
    run_turn(runtime, "thanks")
    history = [(m.role, m.content) for m in cast.requests_of("assistant")[-1].messages[1:]]
    assert history[:2] == [("user", "report on the tides"), ("assistant", turn.output)]
    notes = sorted(content for role, content in history[2:-1])
    assert notes == sorted(
        [
            f"[task run {ids[0]} · researcher · completed] tides follow the moon",
            f"[task run {ids[1]} · slowpoke · failed (timeout)] timed out after 0.3 s",
            f"[task run {ids[2]} · writer · canceled] it was stopped before it finished",
        ]
    )
    assert {role for role, _ in history[2:-1]} == {"assistant"}
    assert history[-1] == ("user", "thanks")
    leaked = ("fact about", "lookup_", "draft: report", "research the tides", "think forever")
    assert not [c for _, c in history if any(word in c for word in leaked)]


def runtime_view(runtime: Any, run_id: str) -> dict[str, Any]:
    store = runtime.open_store()
    try:
        return TaskRunController(store, runtime).get(run_id, owner="owner").to_json()
    finally:
        store.close()
