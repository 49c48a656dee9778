"""A scripted model for tests that run ``toolang`` in a subprocess.

Expose it through an entry point of a test distribution (``scripted =
toolang_core.testing.script_file_plugin``) and point ``TOOLANG_SCRIPT`` at a JSON list of
steps::

    [{"tool_calls": [{"id": "c1", "name": "fs_write", "params": {"path": "a", "text": "b"}}]},
     {"text": "done", "delay": 0.5}]

A step may fail instead: ``{"error": "slow down", "error_kind": "rate_limit"}`` raises a
``ModelError`` of that kind; ``{"text": "hi", "usage": {"input_tokens": 12}}`` reports
token usage as a provider would. With ``TOOLANG_SCRIPT_LOG`` set, each call appends the
index of the step it asked for to that file.

It takes attachments of the types in ``TOOLANG_SCRIPT_ATTACHMENT_TYPES`` (comma
separated; default every type, empty: none). A step ``{"text": "{attachments}"}``
answers with what the call brought: ``name media/type size`` per attachment, ``;``
between them.

The answer to a call is the step whose index is the number of assistant messages since
the conversation's last user message — so the model holds no state, and a turn resumed
in a new process (which replays earlier answers from the store) gets the right step. A
message sending an invalid typed answer back (:mod:`toolang_core.turn.output`) is the
runtime's, not a user's: counting goes on past it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs

from toolang_core.markers import hookimpl
from toolang_core.models.types import ModelError, ModelRequest, ModelResponse
from toolang_core.testing.models import Step, _respond, stream_words
from toolang_core.tools.types import ToolCall
from toolang_core.turn.output import RETRY_PREFIX


class ScriptFileModel:
    def __init__(self, path: Path) -> None:
        self.steps = [_step(raw) for raw in json.loads(path.read_text(encoding="utf-8"))]
        types = os.environ.get("TOOLANG_SCRIPT_ATTACHMENT_TYPES", "*/*")
        self.attachment_types = tuple(t.strip() for t in types.split(",") if t.strip())

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await _respond(self._step(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The step's answer word by word (``word_delay`` seconds between words)."""
        step = self._step(request)
        async for item in stream_words(await _respond(step), step.word_delay):
            yield item

    def _step(self, request: ModelRequest) -> Step:
        step = self.steps[self._index(request)]
        if step.text == ATTACHMENTS:
            step = attrs.evolve(step, text=_attachments_seen(request))
        return step

    def _index(self, request: ModelRequest) -> int:
        index = 0
        for message in reversed(request.messages):
            if message.role == "user" and not message.content.startswith(RETRY_PREFIX):
                break
            if message.role == "assistant":
                index += 1
        log = os.environ.get("TOOLANG_SCRIPT_LOG")
        if log:  # one line per call, across processes: what a kill test counts
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{index}\n")
        if index >= len(self.steps):
            raise ModelError(f"the script has {len(self.steps)} step(s); step {index} was asked")
        return index


ATTACHMENTS = "{attachments}"


def _attachments_seen(request: ModelRequest) -> str:
    seen = [a for m in request.messages for a in m.attachments]
    return "; ".join(f"{a.ref.name} {a.media_type} {a.ref.size}" for a in seen) or "(none)"


def _step(raw: dict[str, Any]) -> Step:
    calls = tuple(
        ToolCall(c.get("id", ""), c["name"], c.get("params", {})) for c in raw.get("tool_calls", ())
    )
    return Step(
        text=raw.get("text", ""),
        tool_calls=calls,
        error=raw.get("error"),
        error_kind=raw.get("error_kind"),
        delay=float(raw.get("delay", 0)),
        word_delay=float(raw.get("word_delay", 0)),
        usage={str(k): int(v) for k, v in (raw.get("usage") or {}).items()},
    )


class _Provider:
    def model(self, model_id: str | None) -> ScriptFileModel:
        path = os.environ.get("TOOLANG_SCRIPT")
        if not path:
            raise ModelError("the scripted model needs TOOLANG_SCRIPT (a JSON file of steps)")
        return ScriptFileModel(Path(path))


@hookimpl
def toolang_register_models(register: Any) -> None:
    register("scripted", lambda context: _Provider(), description="a scripted model (tests)")
