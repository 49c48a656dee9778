"""What reaches a real provider plugin: llm's OpenAI plugin talking to a local server.

The server stands in for the provider's API (the model boundary); llm, its OpenAI
plugin and the openai client are real, so these tests see the wire format a provider
would see.
"""

from __future__ import annotations

import json

import pytest
from model_llm_kit import BumpTool, agent_runtime, chat_reply, run_turn

from toolang_core import TurnStatus


@pytest.fixture(autouse=True)
def _allowed(monkeypatch):
    # The only server these calls reach is the test's own, on 127.0.0.1.
    monkeypatch.setenv("TOOLANG_ALLOW_MODEL_REQUESTS", "1")


def test_the_whole_conversation_reaches_the_provider_with_tool_ids(toolang_runtime, chat_server):
    chat_server.replies += [
        (
            200,
            chat_reply(tool_calls=[{"id": "call_7", "name": "bump", "arguments": {"label": "a"}}]),
        ),
        (200, chat_reply("Bumped it.")),
    ]
    tools = BumpTool()
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/local-chat", tools=tools), "bump a")
    assert (turn.status, turn.output, tools.calls) == (TurnStatus.COMPLETED, "Bumped it.", ["a"])
    first, second = chat_server.requests
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"].startswith("You are the test agent.")
    assert first["messages"][1]["content"] == "bump a"
    # the agent's tools: its own, and the core's ask_person (a tool no agent claims goes
    # to the default agent here)
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert sorted(offered) == ["ask_person", "bump"]
    assert offered["bump"]["parameters"]["required"] == ["label"]
    assert second["messages"][:2] == first["messages"]
    assistant, tool = second["messages"][2:]
    assert assistant["role"] == "assistant"
    assert [(c["id"], c["function"]["name"]) for c in assistant["tool_calls"]] == [
        ("call_7", "bump")
    ]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"label": "a"}
    assert (tool["role"], tool["tool_call_id"]) == ("tool", "call_7")
    assert json.loads(tool["content"]) == {"ok": True, "output": "bumped a"}


def test_earlier_turns_of_the_thread_are_sent_as_history(toolang_runtime, chat_server):
    chat_server.replies += [(200, chat_reply("Paris.")), (200, chat_reply("Berlin."))]
    runtime = agent_runtime(toolang_runtime, "llm/local-chat")
    run_turn(runtime, "Capital of France?")
    turn, _ = run_turn(runtime, "And Germany?")
    assert turn.output == "Berlin."
    sent = [(m["role"], m["content"]) for m in chat_server.requests[1]["messages"][1:]]
    assert sent == [
        ("user", "Capital of France?"),
        ("assistant", "Paris."),
        ("user", "And Germany?"),
    ]


def test_provider_usage_is_recorded(toolang_runtime, chat_server):
    chat_server.replies.append((200, chat_reply("ok")))
    _, steps = run_turn(agent_runtime(toolang_runtime, "llm/local-chat"), "hi")
    assert steps[1].data["response"]["usage"] == {"input_tokens": 11, "output_tokens": 7}


def test_a_provider_error_fails_the_turn_with_its_message_and_secrets_masked(
    toolang_runtime, chat_server
):
    leaked = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0"
    message = f"Incorrect API key provided: {leaked}. Find your key at the dashboard."
    chat_server.replies.append((401, {"error": {"message": message, "code": "invalid_api_key"}}))
    turn, steps = run_turn(agent_runtime(toolang_runtime, "llm/local-chat"), "hi")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "llm model 'local-chat' failed: AuthenticationError" in turn.error
    assert "Incorrect API key provided: ********" in turn.error
    assert leaked not in turn.error
    assert leaked not in json.dumps([s.error for s in steps])
