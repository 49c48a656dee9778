"""Fixtures for toolang-model-llm's tests: a private llm home and a local chat server."""

from __future__ import annotations

import pytest
from model_llm_kit import ChatServer


@pytest.fixture(autouse=True)
def llm_home(tmp_path, monkeypatch):
    """llm's user directory (keys.json, extra models) for this test only."""
    home = tmp_path / "llm-home"
    home.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    for name in ("OPENAI_API_KEY", "LLM_ECHO_NEEDS_KEY_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def chat_server(llm_home, monkeypatch):
    """An OpenAI-compatible endpoint on 127.0.0.1, known to llm as model ``local-chat``
    (a networked model: the real-model guard applies to it)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with ChatServer() as server:
        server.register_with_llm(llm_home, "local-chat")
        yield server
