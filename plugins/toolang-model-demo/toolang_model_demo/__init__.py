"""toolang-model-demo: the ``demo`` model — deterministic, offline, clearly a stand-in."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from toolang_core import RegisterFactory, ToolCall, hookimpl
from toolang_core.models import Message, ModelNotFound, ModelRequest, ModelResponse

if TYPE_CHECKING:
    from toolang_core import PluginContext

NAME = "model-demo"
_WORD = re.compile(r"\s*\S+\s*|\s+")
_TOOL = re.compile(r"/tool\s+([A-Za-z][\w-]*)\s*(\{.*\})?", re.S)
_ANSWER = re.compile(r"/answer\s+(.*)", re.S)


class DemoModel:
    """Answers from rules, never from knowledge (see the package README). It takes
    attachments of any type and says what it got (name, type, size), never what is in
    them."""

    attachment_types = ("*/*",)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = self._answer(request)
        usage = estimate_usage(request, response)
        return ModelResponse(response.text, response.tool_calls, usage, response.model)

    def _answer(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1] if request.messages else Message(role="user")
        if last.role == "tool":
            return ModelResponse(text=_report(request.messages), model="demo")
        verbatim = _ANSWER.search(last.content) if last.role == "user" else None
        if verbatim is not None:  # e.g. a typed answer: `/answer {"city": "Oslo"}`
            return ModelResponse(text=verbatim.group(1).strip(), model="demo")
        asked = _TOOL.search(last.content) if last.role == "user" else None
        if asked is not None:
            name, raw = asked.group(1), asked.group(2) or "{}"
            available = {t.name for t in request.tools}
            if name not in available:
                known = ", ".join(sorted(available)) or "none"
                return ModelResponse(
                    text=f"(demo model) I may not use {name!r} here (tools: {known}).", model="demo"
                )
            try:
                params = json.loads(raw)
            except ValueError as exc:
                return ModelResponse(
                    text=f"(demo model) Those parameters are not JSON: {exc}", model="demo"
                )
            return ModelResponse(
                tool_calls=(ToolCall(call_id="", name=name, params=params),), model="demo"
            )
        said = f"(demo model) You said: {last.content.strip()}"
        if last.attachments:
            said += (
                " [attached: "
                + "; ".join(
                    f"{a.ref.name} ({a.media_type}, {a.ref.size} bytes)" for a in last.attachments
                )
                + "]"
            )
        return ModelResponse(text=said, model="demo")

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """The same answer as :meth:`complete`, word by word (whitespace kept)."""
        response = await self.complete(request)
        for word in _WORD.findall(response.text):
            yield word
        yield response


def estimate_usage(request: ModelRequest, response: ModelResponse) -> dict[str, int]:
    """The usage the demo model reports: a documented estimate of four characters a
    token (every message in, the answer and its tool calls out), so spend limits and
    ``toolang status`` have figures to show without a real model."""
    sent = sum(
        len(m.content) + sum(len(json.dumps(c.params)) for c in m.tool_calls)
        for m in request.messages
    )
    said = len(response.text) + sum(
        len(c.name) + len(json.dumps(c.params)) for c in response.tool_calls
    )
    return {"input_tokens": -(-sent // 4), "output_tokens": -(-said // 4)}


def _report(messages: tuple[Message, ...]) -> str:
    results = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.append(f"{message.name} returned {message.content[:400]}")
    return "(demo model) " + "; ".join(reversed(results))


class DemoProvider:
    def model(self, model_id: str | None) -> DemoModel:
        if model_id not in (None, "", "demo"):
            raise ModelNotFound(f"the demo provider has one model, 'demo', not {model_id!r}")
        return DemoModel()


def _provider(context: PluginContext) -> DemoProvider:
    return DemoProvider()


@hookimpl
def toolang_register_models(register: RegisterFactory) -> None:
    register("demo", _provider, description="a deterministic offline stand-in (not a model)")
