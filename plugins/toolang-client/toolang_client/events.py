"""A turn's Server-Sent Events, parsed and typed.

:class:`EventParser` reads the ``text/event-stream`` lines the API sends (comments and
keep-alives skipped) and :func:`typed` turns each event's ``data`` into its model
(:mod:`toolang_client.models`). ``progress`` (what a tool reported) and any event a
newer server adds come as :class:`ProgressEvent` / :class:`UnknownEvent`.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from toolang_client import models
from toolang_client.convert import structure
from toolang_client.errors import StreamError


@attrs.frozen
class ProgressEvent:
    """``progress``: what a running tool reported (its own JSON object)."""

    data: dict[str, Any]


@attrs.frozen
class UnknownEvent:
    """An event this client does not know (a newer server's): its name and data."""

    name: str
    data: Any


Event = (
    models.AdmittedEvent
    | models.ModelCallEvent
    | ProgressEvent
    | models.ToolCallEvent
    | models.ApprovalEvent
    | models.TextEvent
    | models.StepEvent
    | models.FinishedEvent
    | UnknownEvent
)
"""One event of a turn's stream."""

_MODELS: Final[dict[str, type[Any]]] = {
    "admitted": models.AdmittedEvent,
    "model_call": models.ModelCallEvent,
    "tool_call": models.ToolCallEvent,
    "approval": models.ApprovalEvent,
    "text": models.TextEvent,
    "step": models.StepEvent,
    "finished": models.FinishedEvent,
}


def typed(name: str, data: Any) -> Event:
    """The event ``name`` with its decoded ``data``, as its model."""
    if name == "progress" and isinstance(data, dict):
        return ProgressEvent(data)
    model = _MODELS.get(name)
    if model is None:
        return UnknownEvent(name, data)
    try:
        return structure(data, model)  # type: ignore[no-any-return]
    except Exception as exc:
        raise StreamError(f"event {name!r} does not fit its model: {exc}") from exc


class EventParser:
    """Feed it the stream's lines (``feed``); it returns the events each completes."""

    def __init__(self) -> None:
        self._name = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> list[Event]:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):  # a comment: the server's keep-alive
            return []
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            self._name = value
        elif key == "data":
            self._data.append(value)
        return []

    def _dispatch(self) -> list[Event]:
        if not self._data:
            self._name = "message"
            return []
        raw, name = "\n".join(self._data), self._name
        self._name, self._data = "message", []
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise StreamError(f"event {name!r}: its data is not JSON: {raw[:80]!r}") from exc
        return [typed(name, data)]


class TurnText:
    """What a stream showed so far: the turn's id, the text of the last model call
    (which joins to the stored output) and the ``finished`` event once it came."""

    def __init__(self, turn_id: str | None) -> None:
        self.turn_id = turn_id
        self.finished: models.FinishedEvent | None = None
        self._call: str | None = None
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        """The answer's text as streamed (the last model call's deltas, joined)."""
        return "".join(self._parts)

    def saw(self, event: Event) -> None:
        if isinstance(event, models.TextEvent):
            if event.call != self._call:
                self._call, self._parts = event.call, []
            self._parts.append(event.delta)
        elif isinstance(event, models.FinishedEvent):
            self.finished = event
            self.turn_id = event.turn_id
