"""llm's streaming: deltas as llm yields them, the same answer as a plain call."""

from __future__ import annotations

import asyncio
import json

from model_llm_kit import chat_reply, echo_script

from toolang_core.models import Message, ModelRequest, ModelResponse
from toolang_model_llm.provider import LlmProvider
from toolang_model_llm.settings import LlmSettings


async def _collect(model, request):
    items = [item async for item in model.stream(request)]
    return [i for i in items if isinstance(i, str)], items[-1]


def test_the_echo_model_is_asked_to_stream_and_its_chunks_are_the_answer():
    model = LlmProvider(LlmSettings()).model("echo")
    request = ModelRequest(messages=(Message("user", "stream this answer please"),))
    deltas, last = asyncio.run(_collect(model, request))
    plain = asyncio.run(model.complete(request))
    assert isinstance(last, ModelResponse) and last.text == ""  # the text came as deltas
    streamed = json.loads("".join(deltas))
    # echo reports how it was called: the same prompt, streamed this time.
    assert streamed == {**json.loads(plain.text), "stream": True}
    assert set(last.usage) == {"input_tokens", "output_tokens"}


def test_tool_calls_arrive_with_the_final_response_of_a_stream():
    model = LlmProvider(LlmSettings()).model("echo")
    script = echo_script(tool_calls=[{"name": "bump", "arguments": {"label": "z"}}])
    request = ModelRequest(messages=(Message("user", script),))
    _, last = asyncio.run(_collect(model, request))
    assert [(c.name, c.params) for c in last.tool_calls] == [("bump", {"label": "z"})]


def test_an_openai_compatible_model_streams_word_by_word_over_the_wire(chat_server, monkeypatch):
    monkeypatch.setenv("TOOLANG_ALLOW_MODEL_REQUESTS", "1")  # only the test's own server
    chat_server.replies.append((200, chat_reply("Berlin is the capital.")))
    model = LlmProvider(LlmSettings()).model("local-chat")
    deltas, last = asyncio.run(_collect(model, ModelRequest(messages=(Message("user", "?"),))))
    assert deltas == ["Berlin ", "is ", "the ", "capital."]
    assert chat_server.requests[0]["stream"] is True
    assert last.usage == {"input_tokens": 11, "output_tokens": 7}


def test_the_readme_says_the_provider_streams():
    # It once listed streaming as not supported while provider.py streamed (issue #31).
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    unsupported = readme.split("## Not supported", 1)[1]
    assert "stream" not in unsupported.lower()
    assert "## Streaming" in readme and "stream=True" in readme
