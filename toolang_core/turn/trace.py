"""What a turn's steps store: clipped (with a flag). Secrets are masked where steps and
traces are written (``TurnContext.record_step``, the prompt-trace stage), and here only
in a text about to be cut."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from toolang_core.attachments.types import AttachmentRef
from toolang_core.models.types import Message, ModelResponse
from toolang_core.redaction import Masked, redact, redact_text
from toolang_core.store.json_text import dumps
from toolang_core.tools.chain import StageRecord
from toolang_core.tools.types import ToolCall, ToolResult

TEXT_LIMIT = 4_000


def clip(text: str, limit: int = TEXT_LIMIT) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def call_json(call: ToolCall) -> dict[str, Any]:
    return {"id": call.call_id, "name": call.name, "params": dict(call.params)}


def result_json(result: ToolResult) -> dict[str, Any]:
    data = {
        "ok": result.ok,
        "output": result.output,
        "error": result.error,
        "error_type": result.error_type,
        "duration_ms": round(result.duration_ms, 3),
    }
    if result.attachments:  # references only: the bytes are in the attachment store
        data["attachments"] = [ref.to_json() for ref in result.attachments]
    return data


def messages_json(messages: Iterable[Message]) -> tuple[list[dict[str, Any]], bool]:
    """The prompt as stored in a trace: each message clipped."""
    out, truncated = [], False
    for message in messages:
        entry, cut = message_json(message)
        truncated = truncated or cut
        out.append(entry)
    return out, truncated


def message_json(message: Message) -> tuple[dict[str, Any], bool]:
    """One message as a trace stores it (clipped), and whether it was cut."""
    content = message.content
    if len(content) > TEXT_LIMIT:  # masked before the cut, which could halve a secret
        content = redact_text(content)
    content, cut = clip(content)
    entry: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        entry["tool_calls"] = [call_json(c) for c in message.tool_calls]
    if message.tool_call_id:
        entry["tool_call_id"] = message.tool_call_id
    if message.attachments:  # references only: an attachment's bytes never reach a trace
        entry["attachments"] = [a.ref.to_json() for a in message.attachments]
    return entry, cut


class MaskedMessages:
    """The messages of one agent loop as its model calls' steps store them, masked by
    the redaction policy and encoded once: every model call's prompt repeats the one
    before it, and only what is new is masked and encoded."""

    __slots__ = ("_ids", "_items", "_json", "_prompt", "_truncated")

    def __init__(self) -> None:
        # The last prompt: its messages (held, so their ids stay theirs), their ids,
        # their items as stored and those items' JSON, and whether one was clipped.
        self._prompt: list[Message] = []
        self._ids: list[int] = []
        self._items: list[dict[str, Any]] = []
        self._json = "[]"
        self._truncated = False

    def json(self, messages: Iterable[Message]) -> tuple[Masked, bool]:
        """:func:`messages_json`, masked: a :class:`~toolang_core.redaction.Masked`
        list (which the step's own masking keeps as it is) carrying its JSON."""
        prompt = list(messages)
        ids = list(map(id, prompt))
        known = len(self._ids)
        if not (known and ids[:known] == self._ids):  # not the last prompt and more
            known, self._items, self._json, self._truncated = 0, [], "[]", False
        new: list[dict[str, Any]] = []
        truncated = self._truncated
        for message in prompt[known:]:
            content = message.content
            if (
                len(content) <= TEXT_LIMIT
                and not message.tool_calls
                and not message.tool_call_id
                and not message.attachments
            ):
                # most messages: message_json's entry, nothing to clip
                new.append({"role": message.role, "content": redact_text(content)})
                continue
            entry, cut = message_json(message)
            # redact(entry) without the walk: "role" and "tool_call_id" are names the
            # policy keeps as they are, the content is a text, the calls are walked.
            entry["content"] = redact_text(entry["content"])
            if "tool_calls" in entry:
                entry["tool_calls"] = redact(entry["tool_calls"])
            if "attachments" in entry:  # a file's name is text from a person
                entry["attachments"] = redact(entry["attachments"])
            new.append(entry)
            truncated = truncated or cut
        if new:
            added = dumps(new)
            self._json = added if not known else f"{self._json[:-1]},{added[1:]}"
            self._items = self._items + new
        self._prompt, self._ids, self._truncated = prompt, ids, truncated
        return Masked(self._items, self._json), truncated


def chain_json(stages: Iterable[StageRecord]) -> Masked:
    """Each chain stage's verdict as a tool call's step stores it, masked, carrying its
    JSON: the stage, the verdict and the plugin are names the code and the
    configuration give, kept as they are; the detail is text (a reason, a person's
    message) and is masked."""
    items: list[dict[str, Any]] = []
    encoded: list[str] = []
    for s in stages:
        if s.detail:
            entry = {
                "stage": s.stage,
                "verdict": s.verdict,
                "plugin": s.plugin,
                "detail": redact_text(s.detail),
            }
            text = dumps(entry)
        else:
            entry, text = _plain_stage(s.stage, s.verdict, s.plugin)
        items.append(entry)
        encoded.append(text)
    return Masked(items, "[" + ",".join(encoded) + "]")


@functools.lru_cache(maxsize=1_024)
def _plain_stage(stage: str, verdict: str, plugin: str | None) -> tuple[dict[str, Any], str]:
    """A verdict without detail, as stored, and its JSON: names only, nothing the
    policy masks, the same for every call (most verdicts of most calls)."""
    entry = {"stage": stage, "verdict": verdict, "plugin": plugin, "detail": ""}
    return entry, dumps(entry)


def response_json(response: ModelResponse) -> dict[str, Any]:
    """A model's answer as stored: complete, so a resumed turn can replay it."""
    return {
        "text": response.text,
        "tool_calls": [call_json(c) for c in response.tool_calls],
        "usage": dict(response.usage),
        "model": response.model,
    }


def response_from_json(data: dict[str, Any]) -> ModelResponse:
    calls = tuple(
        ToolCall(call_id=c["id"], name=c["name"], params=c["params"])
        for c in data.get("tool_calls", ())
    )
    return ModelResponse(
        text=data.get("text", ""),
        tool_calls=calls,
        usage=data.get("usage", {}),
        model=data.get("model", ""),
    )


def call_from_json(data: dict[str, Any]) -> ToolCall:
    return ToolCall(call_id=data["id"], name=data["name"], params=data.get("params", {}))


def result_from_json(data: dict[str, Any]) -> ToolResult:
    return ToolResult(
        ok=data["ok"],
        output=data.get("output"),
        error=data.get("error"),
        error_type=data.get("error_type"),
        duration_ms=float(data.get("duration_ms", 0.0)),
        attachments=tuple(
            AttachmentRef.from_json(ref, where="result.attachments")
            for ref in data.get("attachments", ())
        ),
    )
