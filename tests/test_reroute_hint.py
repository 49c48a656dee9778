"""After a hand-off fails, the delegating model's next prompt names the specialist and
why (Lango: "Post-handoff tool failures generate a reroute hint that names the failed
specialist and tells the orchestrator to try a different specialist or answer
directly")."""

from __future__ import annotations

from toolang_core import TurnStatus
from toolang_core.testing.cast import Cast, last_result
from toolang_core.testing.delegation import make_runtime, run_turn
from toolang_core.testing.models import error, text, tool_call

HINT = "Reroute: specialist 'researcher' failed"


def last_tool_message(cast, agent="assistant"):
    return [
        r.messages[-1].content for r in cast.requests_of(agent) if r.messages[-1].role == "tool"
    ]


def test_a_failed_ask_agent_names_the_specialist_and_why_in_the_next_prompt(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("ask_agent", {"agent": "researcher", "request": "tides?"}),
            tool_call("ask_agent", {"agent": "writer", "request": "tides?"}, call_id="w"),
            text("the writer answered"),
        ],
        researcher=[error("the model is down")],
        writer=[text("the moon")],
    )
    turn = run_turn(make_runtime(tmp_path, cast))
    assert turn.status is TurnStatus.COMPLETED
    failed, answered = last_tool_message(cast)
    assert HINT in failed and "the model is down" in failed
    assert "do not hand this to 'researcher' again" in failed
    assert HINT not in answered


def test_a_failed_task_run_and_teammate_carry_the_hint(tmp_path):
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run",
                {"task": "tides?", "agent_name": "researcher", "mode": "sync"},
                call_id="s",
            ),
            tool_call("agent_spawn", {"instruction": "tides?", "agent": "researcher"}, call_id="a"),
            lambda request: tool_call(
                "agent_wait", {"agent_id": last_result(request)["output"]["agent_id"]}, call_id="w"
            ),
            text("both failed"),
        ],
        researcher=[error("the model is down")],
    )
    run_turn(make_runtime(tmp_path, cast))
    synced, _, waited = last_tool_message(cast)
    for result in (synced, waited):
        assert '"status": "failed"' in result
        assert HINT in result, result
