"""Helpers for toolang-model-llm's tests: real runtimes, a counted tool, a chat server."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import toolang_model_llm
from toolang_core import NewTurnRequest, Tool, hookimpl

AGENT_CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0

[agents]
instruction = "You are the test agent."

[models]
default = "{model}"
"""


class BumpTool:
    """A tool with a side effect the tests can count."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def bump(self, label: str) -> str:
        """Count one call under ``label``."""
        self.calls.append(label)
        return f"bumped {label}"

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(self.bump, blocking=False))


def agent_runtime(make_runtime, model: str, *, tools: BumpTool | None = None, extra: str = ""):
    """A runtime running the agent executor with ``model`` and this plugin."""
    plugins: dict[str, object] = {toolang_model_llm.NAME: toolang_model_llm}
    if tools is not None:
        plugins["tools"] = tools
    return make_runtime(AGENT_CONFIG.format(model=model) + extra, plugins=plugins)


def run_turn(runtime, text: str, thread: str = "cli:t", meta: dict[str, Any] | None = None):
    """Submit ``text``, run the runtime until idle; the turn and its steps."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id=thread, input=text, meta=meta or {})
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox.get(turn_id), inbox.store.steps(turn_id)


def echo_script(prompt: str = "", **fields: Any) -> str:
    """A prompt llm-echo reads as a script (``tool_calls``, ``raw``)."""
    return json.dumps({"prompt": prompt, **fields})


def chat_reply(
    content: str | None = None, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A Chat Completions answer body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for call in tool_calls
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "local-chat",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def stream_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Chat Completions answer as the chunks of its streamed form (word by word, the
    tool calls in one delta, then the finish reason and the usage), as OpenAI sends them
    when a request says ``"stream": true``."""
    (choice,) = body["choices"]
    message = choice["message"]
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body["model"],
    }
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    for word in re.findall(r"\s*\S+\s*", message.get("content") or ""):
        chunks.append({**base, "choices": [{"index": 0, "delta": {"content": word}}]})
    if message.get("tool_calls"):
        calls = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    )
    chunks.append({**base, "choices": [], "usage": body["usage"]})
    return chunks


class ChatServer:
    """An OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1.

    Answers each request with the next of ``replies`` (``(status, body)``, or with a
    dict of response headers third) — streamed
    as server-sent chunks when the request asks to stream — and records every request
    body in ``requests``.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[tuple[Any, ...]] = []
        """``(status, body)`` or ``(status, body, headers)`` per request, in order."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(json.loads(self.rfile.read(length)))
                reply = (
                    server.replies.pop(0)
                    if server.replies
                    else (500, {"error": {"message": "no reply scripted"}})
                )
                status, body = reply[0], reply[1]
                headers: dict[str, str] = reply[2] if len(reply) > 2 else {}
                if status == 200 and server.requests[-1].get("stream"):
                    events = [f"data: {json.dumps(c)}\n\n" for c in stream_chunks(body)]
                    data = ("".join(events) + "data: [DONE]\n\n").encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def register_with_llm(self, llm_home: Path, model_id: str, *, schemas: bool = False) -> None:
        """Declare ``model_id`` in llm's extra OpenAI models (JSON is valid YAML); with
        ``schemas`` it supports structured output (llm's ``schema=``)."""
        model = {
            "model_id": model_id,
            "model_name": model_id,
            "api_base": self.url,
            "supports_tools": True,
            "supports_schema": schemas,
        }
        (llm_home / "extra-openai-models.yaml").write_text(json.dumps([model]))

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
