"""Typed answers over llm: a model that supports llm's ``schema=`` gets the answer's
JSON Schema natively (structured output on the wire); one that does not gets it in the
prompt only. Either way toolang validates the answer."""

from __future__ import annotations

import json

import pytest
from model_llm_kit import agent_runtime, chat_reply, run_turn

from toolang_core import TurnStatus

SCHEMA = {
    "type": "object",
    "properties": {"capital": {"type": "string"}},
    "required": ["capital"],
}


@pytest.fixture(autouse=True)
def _allowed(monkeypatch):
    # The only server these calls reach is the test's own, on 127.0.0.1.
    monkeypatch.setenv("TOOLANG_ALLOW_MODEL_REQUESTS", "1")


def test_a_model_with_structured_output_gets_the_schema_on_the_wire(
    toolang_runtime, chat_server, llm_home
):
    chat_server.register_with_llm(llm_home, "local-chat", schemas=True)
    chat_server.replies += [(200, chat_reply('{"capital": "Paris"}'))]
    runtime = agent_runtime(toolang_runtime, "llm/local-chat")
    turn, _ = run_turn(runtime, "Capital of France?", meta={"output_schema": SCHEMA})
    assert (turn.status, json.loads(turn.output)) == (TurnStatus.COMPLETED, {"capital": "Paris"})
    (sent,) = chat_server.requests
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["capital"]


def test_a_model_without_it_gets_the_schema_in_the_prompt_and_is_asked_again(
    toolang_runtime, chat_server
):
    chat_server.replies += [
        (200, chat_reply("Paris, of course.")),
        (200, chat_reply('{"capital": "Paris"}')),
    ]
    runtime = agent_runtime(toolang_runtime, "llm/local-chat")
    turn, steps = run_turn(runtime, "Capital of France?", meta={"output_schema": SCHEMA})
    assert (turn.status, json.loads(turn.output)) == (TurnStatus.COMPLETED, {"capital": "Paris"})
    first, second = chat_server.requests
    assert "response_format" not in first
    assert '"required": ["capital"]' in first["messages"][0]["content"]
    assert "not JSON" in second["messages"][-1]["content"]
    assert [s.data["valid"] for s in steps if s.kind == "output_check"] == [False, True]
