"""The real-model guard: llm's networked models are blocked in tests, echo is not."""

from __future__ import annotations

import pytest
from model_llm_kit import agent_runtime, chat_reply, run_turn

from toolang_core import TurnStatus


@pytest.fixture(autouse=True)
def _blocked(monkeypatch):
    monkeypatch.setenv("TOOLANG_ALLOW_MODEL_REQUESTS", "0")


def test_a_networked_model_is_blocked_before_any_request(toolang_runtime, chat_server):
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/local-chat"), "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "real model calls are blocked" in turn.error
    assert chat_server.requests == []


def test_openai_models_are_blocked_even_without_a_key(toolang_runtime):
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/gpt-4o-mini"), "hello")
    assert turn.outcome == "model_error"
    assert "llm model 'gpt-4o-mini': real model calls are blocked" in turn.error


def test_echo_runs_while_real_model_calls_are_blocked(toolang_runtime):
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo"), "hello")
    assert turn.status is TurnStatus.COMPLETED, turn.error


def test_a_model_listed_as_offline_runs_while_blocked(toolang_runtime, chat_server):
    chat_server.replies.append((200, chat_reply("local answer")))
    extra = '\n[plugins.model-llm]\noffline_models = ["local-chat"]\n'
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/local-chat", extra=extra), "hi")
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "local answer")
