"""The output guardrail: with ``redact_answers`` on, an agent's final answer has its
personal data and secrets masked before it is stored and returned (real turns, a
scripted model)."""

from __future__ import annotations

import asyncio
import json

import toolang_hook_security_filter as plugin
from toolang_core import AgentDefinition, NewTurnRequest, TurnStatus
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import text, tool_call

EMAIL = "ann.smith@example.com"
KEY = "sk-proj-Zq8v3LmN0pR5tW7yB2dF4hJ6"
ANSWER = f"Write to {EMAIL}; the key is {KEY}."


def answer_turn(toolang_runtime, toolang_scripted_model, settings: str = ""):
    model = toolang_scripted_model([text(ANSWER)])
    runtime = toolang_runtime(
        f'[models]\ndefault = "scripted"\n[plugins.hook-security-filter]\n{settings}',
        plugins={plugin.NAME: plugin, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return runtime, inbox.get(turn_id), inbox.store.steps(turn_id)


def test_redact_answers_masks_the_final_answer_and_the_trace_names_the_filter(
    toolang_runtime, toolang_scripted_model
):
    _, turn, steps = answer_turn(toolang_runtime, toolang_scripted_model, "redact_answers = true\n")
    assert turn.status is TurnStatus.COMPLETED
    assert EMAIL not in turn.output and KEY not in turn.output
    assert turn.output.startswith("Write to ")
    (step,) = [s for s in steps if s.kind == "guardrail"]
    assert step.data["hook"] == "toolang_check_model_output"
    (rewrite,) = step.data["rewritten_by"]
    assert rewrite["plugin"] == plugin.NAME
    assert rewrite["reason"].startswith("masked personal data in the answer: ")
    assert "email" in rewrite["reason"] and "secret" in rewrite["reason"]
    stored = json.dumps([dict(s.data) for s in steps])
    assert EMAIL not in stored and KEY not in stored


def test_the_answer_is_masked_as_the_scrubber_masks_it(toolang_runtime, toolang_scripted_model):
    runtime, turn, _ = answer_turn(
        toolang_runtime, toolang_scripted_model, "redact_answers = true\n"
    )
    expected = plugin.policy_for(runtime).mask_answer(ANSWER)
    assert expected is not None and turn.output == expected[0]


def test_redact_answers_is_off_by_default(toolang_runtime, toolang_scripted_model):
    runtime, turn, steps = answer_turn(toolang_runtime, toolang_scripted_model)
    assert turn.status is TurnStatus.COMPLETED
    assert not [s for s in steps if s.kind == "guardrail"]
    assert plugin.policy_for(runtime).mask_answer(ANSWER) is None


def test_an_answer_without_a_tool_call_builds_no_policy_when_answers_are_not_redacted(
    toolang_runtime, toolang_scripted_model
):
    """A one-shot run builds the policy when a tool call needs it; with
    ``redact_answers`` off the output guardrail needs none (it was built for every
    answer: the rules' import and the scrubber's expressions, for nothing)."""
    model = toolang_scripted_model([text(ANSWER)])
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={plugin.NAME: plugin, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=(), only=[turn_id]))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert runtime.plugin_state(plugin.NAME, lambda: "not built") == "not built"


def test_only_the_kinds_of_pii_kinds_are_masked(toolang_runtime, toolang_scripted_model):
    _, turn, steps = answer_turn(
        toolang_runtime,
        toolang_scripted_model,
        'redact_answers = true\npii_kinds = ["secret"]\n',
    )
    (step,) = [s for s in steps if s.kind == "guardrail"]
    assert step.data["rewritten_by"][0]["reason"].endswith(": 1 secret")
    assert KEY not in turn.output


def asked_answer(toolang_runtime, settings: str) -> str:
    """What the asking agent is handed by an ``ask_agent`` specialist answering ANSWER
    (the result filter off: only the answer guardrail may mask it)."""
    cast = Cast(
        assistant=[tool_call("ask_agent", {"agent": "researcher", "request": "who?"}), text("ok")],
        researcher=[text(ANSWER)],
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n[plugins.hook-security-filter]\n'
        f"redact_results = false\n{settings}",
        plugins={
            plugin.NAME: plugin,
            "scripted": cast.plugin(),
            "agents": AgentsPlugin(AgentDefinition(name="researcher", description="finds")),
        },
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    told = cast.requests_of("assistant")[-1].messages[-1]
    assert told.role == "tool"
    return str(json.loads(told.content)["output"])


def test_an_asked_agents_answer_is_masked_before_the_asking_agent_sees_it(toolang_runtime):
    assert EMAIL in asked_answer(toolang_runtime, "redact_answers = false\n")  # the control
    masked = asked_answer(toolang_runtime, "redact_answers = true\n")
    assert EMAIL not in masked and KEY not in masked and masked.startswith("Write to ")
