"""The model-facing team tools in a real turn: the calling agent forms a team it
leads, delegates, reads its status and disbands it; the turn's metadata stays out of
the members' prompts unless shared."""

from __future__ import annotations

import json

from teams_helpers import CONTROL, W1, W2, W3, make_runtime, outputs, run_turn

from toolang_core import AgentDefinition
from toolang_core.testing.cast import Cast, last_output, user_text
from toolang_core.testing.models import text, tool_call

LEADER = AgentDefinition(name="assistant", prefixes=(*CONTROL, "team_"), description="leads")


def team_id(request) -> str:
    return str(last_output(request)["team_id"])


SCRIPT = [
    tool_call(
        "team_form",
        {"goal": "survey", "capability": "survey", "workers": 3, "share_context": ["ticket"]},
    ),
    lambda r: tool_call("team_delegate", {"team_id": team_id(r), "task": "capital of France?"}),
    lambda r: tool_call("team_status", {"team_id": last_output(r)["team_id"]}),
    lambda r: tool_call("team_disband", {"team_id": team_id(r), "reason": "done"}),
    text("the team says Paris"),
]


def test_an_agent_forms_a_team_delegates_reads_its_status_and_disbands_it(tmp_path):
    answers = {"w1": "Paris", "w2": "Paris", "w3": "Lyon"}
    cast = Cast(assistant=SCRIPT, **{n: (lambda r, n=n: text(answers[n])) for n in answers})
    runtime = make_runtime(tmp_path, cast, agents=(LEADER, W1, W2, W3))
    turn = run_turn(runtime, "survey", meta={"ticket": "OPS-7", "api_key": "sk-SECRET-1"})
    assert turn.output == "the team says Paris", outputs(cast)
    formed, delegated, status, disbanded = outputs(cast)
    assert formed["leader"] == "assistant" and formed["status"] == "active"
    assert [m["role"] for m in formed["members"]] == ["leader", "worker", "worker", "worker"]
    assert delegated["status"] == "completed" and delegated["result"] == "Paris"
    assert sorted(c["result"] for c in delegated["candidates"]) == ["Lyon", "Paris", "Paris"]
    assert status["tasks"][0]["chosen"] == "Paris"
    assert disbanded["status"] == "disbanded"
    worker_prompts = [user_text(r) for n in answers for r in cast.requests_of(n)]
    assert len(worker_prompts) == 3
    assert all("- ticket: OPS-7" in p and "sk-SECRET-1" not in p for p in worker_prompts)
    assert all(
        "sk-SECRET-1" not in json.dumps([m.content for m in r.messages])
        for r in cast.requests
        if r not in cast.requests_of("assistant")
    )


def test_an_unknown_strategy_is_refused_with_the_choices(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("team_form", {"goal": "g", "capability": "survey", "strategy": "coin"}),
            text("no"),
        ]
    )
    runtime = make_runtime(tmp_path, cast, agents=(LEADER, W1))
    run_turn(runtime, "form")
    (error,) = outputs(cast)
    assert 'unsupported strategy "coin"' in str(error) and "majority_vote" in str(error)
