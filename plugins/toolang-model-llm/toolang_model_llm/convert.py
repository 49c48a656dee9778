"""Translate toolang's messages into llm's prompt arguments, and llm's answer back.

toolang sends the whole conversation on every call; llm (0.32+) takes it as
``model.prompt(messages=[...])``. The trailing input — the last user message and the
tool results just before it — goes in ``prompt=`` and ``tool_results=`` instead: llm
folds them back onto the end of ``messages`` (so models that read ``prompt.messages``
see the same list), and model plugins written for the older API, which read
``prompt.prompt``, ``prompt.system`` and ``prompt.tool_results``, still see this
call's input.

Attachments ride along as ``llm.Attachment`` objects pointing at toolang's stored file
(``path=``, the type toolang sniffed, never guessed again): the trailing user message's
in ``attachments=``, an earlier message's as ``AttachmentPart``s of that message, a
tool result's (the files its tool gave back) as that result's ``attachments``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolang_core import Attachment, ToolCall
from toolang_core.models import Message, ModelError, ModelRequest, ModelResponse, ToolSpec


def prompt_arguments(request: ModelRequest, *, with_tools: bool) -> dict[str, Any]:
    """Keyword arguments for ``model.prompt()`` that carry ``request`` faithfully.

    ``with_tools`` false leaves the tool definitions out (for models that cannot call
    tools). Tool definitions never carry an implementation: llm cannot run a tool, so
    every call comes back to toolang's chain.
    """
    import llm

    history, prompt, results = _split_trailing_input(request.messages)
    system = next((m.content for m in request.messages if m.role == "system"), None)
    last = request.messages[-1] if request.messages else None
    attached = last.attachments if prompt is not None and last is not None else ()
    arguments: dict[str, Any] = {
        "messages": to_llm_messages(history),
        "prompt": prompt,
        "system": system or None,
        "tool_results": [
            llm.ToolResult(
                name=m.name or "",
                output=m.content,
                tool_call_id=m.tool_call_id,
                attachments=[to_llm_attachment(a) for a in m.attachments],
            )
            for m in results
        ],
    }
    if attached:
        arguments["attachments"] = [to_llm_attachment(a) for a in attached]
    if with_tools and request.tools:
        arguments["tools"] = [to_llm_tool(spec) for spec in request.tools]
    return arguments


def to_llm_attachment(attachment: Attachment) -> Any:
    """An ``llm.Attachment`` reading toolang's stored file, of the type toolang sniffed."""
    import llm

    return llm.Attachment(type=attachment.media_type, path=str(attachment.path))


def _split_trailing_input(
    messages: Sequence[Message],
) -> tuple[Sequence[Message], str | None, Sequence[Message]]:
    """``(history, last user text, tool results before it)``."""
    end = len(messages)
    prompt = None
    if end and messages[end - 1].role == "user" and messages[end - 1].content:
        prompt = messages[end - 1].content
        end -= 1
    start = end
    while start and messages[start - 1].role == "tool":
        start -= 1
    return messages[:start], prompt, messages[start:end]


def to_llm_messages(messages: Iterable[Message]) -> list[Any]:
    """``llm.Message`` objects for toolang messages.

    Consecutive tool results become one ``tool`` message, as llm builds them itself
    (providers such as Anthropic want all results of one step together).
    """
    from llm.parts import (
        AttachmentPart,
        Message as LlmMessage,
        TextPart,
        ToolCallPart,
        ToolResultPart,
    )

    out: list[Any] = []
    for message in messages:
        if message.role == "tool":
            part = ToolResultPart(
                name=message.name or "",
                output=message.content,
                tool_call_id=message.tool_call_id,
                attachments=[to_llm_attachment(a) for a in message.attachments],
            )
            if out and out[-1].role == "tool":
                out[-1].parts.append(part)
            else:
                out.append(LlmMessage(role="tool", parts=[part]))
            continue
        parts: list[Any] = [TextPart(text=message.content)] if message.content else []
        parts.extend(
            ToolCallPart(
                name=call.name, arguments=dict(call.params), tool_call_id=call.call_id or None
            )
            for call in message.tool_calls
        )
        parts.extend(AttachmentPart(attachment=to_llm_attachment(a)) for a in message.attachments)
        out.append(LlmMessage(role=message.role, parts=parts))
    return out


def to_llm_tool(spec: ToolSpec) -> Any:
    """An ``llm.Tool`` with no implementation: the model may ask, only toolang runs it."""
    import llm

    # A plain-JSON copy: some model plugins adjust schemas in place.
    schema = json.loads(json.dumps(spec.parameters))
    return llm.Tool(name=spec.name, description=spec.description, input_schema=schema)


def to_model_response(
    *, text: str, tool_calls: Iterable[Any], usage: Any, model: str
) -> ModelResponse:
    """A toolang :class:`ModelResponse` from llm's text, ``ToolCall`` list and ``Usage``."""
    calls = tuple(
        ToolCall(
            call_id=call.tool_call_id or "",
            name=call.name,
            params=_arguments(call.name, call.arguments, model),
        )
        for call in tool_calls
    )
    counts = {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cached_tokens": _cached(getattr(usage, "details", None)),
    }
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage={k: v for k, v in counts.items() if isinstance(v, int)},
        model=model,
    )


def _cached(details: Any) -> int | None:
    """The cached input tokens in llm's usage ``details``, where the provider said:
    OpenAI's ``prompt_tokens_details`` / ``input_tokens_details``, Anthropic's
    ``cache_read_input_tokens``."""
    if not isinstance(details, dict):
        return None
    cached = details.get("cache_read_input_tokens")
    for key in ("prompt_tokens_details", "input_tokens_details"):
        nested = details.get(key)
        if cached is None and isinstance(nested, dict):
            cached = nested.get("cached_tokens")
    return cached if isinstance(cached, int) and not isinstance(cached, bool) else None


def _arguments(tool: str, arguments: Any, model: str) -> dict[str, Any]:
    if isinstance(arguments, str):  # a plugin that left the provider's JSON text as is
        with contextlib.suppress(ValueError):  # not JSON: refused just below
            arguments = json.loads(arguments) if arguments.strip() else {}
    if not isinstance(arguments, Mapping):
        raise ModelError(
            f"llm model {model!r} asked for tool {tool!r} with arguments that are not a "
            f"JSON object: {str(arguments)[:200]!r}"
        )
    return dict(arguments)
