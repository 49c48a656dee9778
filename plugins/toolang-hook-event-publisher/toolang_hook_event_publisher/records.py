"""What the sinks receive: tool events built from a finished tool call, and every bus
event turned into one JSON-able record with its secrets masked."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolang_core import new_id, redact, redact_text

if TYPE_CHECKING:
    from toolang_core import Event, ToolCall, ToolCallContext, ToolResult
    from toolang_hook_event_publisher.settings import PublisherSettings

TOOL_COMPLETED = "tool.completed"
TOOL_FAILED = "tool.failed"
TOOL_REFUSED = "tool.refused"


def clip(value: Any, limit: int) -> Any:
    """``value`` with secrets masked; as text cut to ``limit`` characters when its JSON
    is longer than that (a sink must never receive an unbounded tool output)."""
    masked = redact(value)
    text = json.dumps(masked, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return masked
    return text[:limit] + f"… [{len(text) - limit} more characters cut]"


def tool_event(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext, settings: PublisherSettings
) -> Event:
    """The ``tool.completed`` / ``tool.failed`` event of an executed call, or the
    ``tool.refused`` event of a call the chain did not run (with its ``refusal``:
    ``stage``, ``verdict``, ``plugin`` and the masked ``reason``).

    Parameters and output are left out unless the settings opt in: they are the
    likeliest place for personal data, and every bus subscriber sees this event (a
    refused call's parameters arrive masked by the redaction policy already).
    """
    data: dict[str, Any] = {
        "ok": result.ok,
        "error_type": result.error_type,
        "error": None if result.error is None else clip_text(result.error, settings),
        "duration_ms": round(result.duration_ms, 3),
        "agent": ctx.agent,
        "spawn_depth": ctx.spawn_depth,
    }
    if settings.include_params:
        data["params"] = clip(dict(call.params), settings.max_value_chars)
    if settings.include_output and result.ok:
        data["output"] = clip(result.output, settings.max_value_chars)
    refusal = getattr(result, "refusal", None)
    if refusal is not None:
        data["refusal"] = {
            "stage": refusal.stage,
            "verdict": refusal.verdict,
            "plugin": refusal.plugin,
            "reason": clip_text(refusal.reason, settings),
        }
    kind = TOOL_REFUSED if refusal is not None else TOOL_COMPLETED if result.ok else TOOL_FAILED
    return ctx.event(kind, data)


def clip_text(text: str, settings: PublisherSettings) -> str:
    masked = redact_text(text)
    limit = settings.max_value_chars
    if len(masked) <= limit:
        return masked
    return masked[:limit] + f"… [{len(masked) - limit} more characters cut]"


def event_record(event: Event) -> dict[str, Any]:
    """``event`` as the JSON object every sink writes.

    ``id`` is new for each event and the same in every sink and every webhook retry,
    so a receiver can drop duplicates. ``data`` is masked here too: events from other
    plugins pass through this path and a sink is as public as a log.
    """
    return {
        "id": new_id(),
        "kind": event.kind,
        "at": event.at.isoformat(),
        "run_id": event.run_id,
        "thread_id": event.thread_id,
        "turn_id": event.turn_id,
        "data": redact(dict(event.data)),
    }


def record_line(record: dict[str, Any]) -> bytes:
    """One JSON line, newline-terminated (values JSON cannot hold become strings)."""
    return (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode()
