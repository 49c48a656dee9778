"""Streaming answers: a model's text as it is produced, fanned out to watchers.

A model may offer, besides ``complete``, an optional ``stream(request)``: an async
iterator yielding text deltas (``str``) and, last, the whole :class:`ModelResponse`
(tool calls, usage). The agent loop prefers ``stream`` when it exists, publishes each
delta to the runtime's :class:`TurnStreams` and stores the response whose text is the
concatenation of the deltas — so what a watcher saw is what the turn stored.

Watchers (the HTTP server's SSE, a one-shot CLI) live in the runtime's process and
attach and detach freely: publishing never waits on them, a slow or gone watcher
never affects the turn, and one attaching mid-call first gets the call's text so far.

Watchers get the text masked by the redaction policy, through one
:class:`~toolang_core.redaction_stream.StreamMasker` per model call: a secret split
across deltas is masked whole, the text comes a few words behind the model (see that
module for the rule), and the deltas join to the call's text as stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.models.types import ModelError, ModelRequest, ModelResponse
from toolang_core.redaction_stream import StreamMasker

if TYPE_CHECKING:
    from toolang_core.redaction import RedactionPolicy
    from toolang_core.runtime_parts import CoreRuntime

STATE_KEY: Final = "toolang:turn_streams"


@attrs.frozen
class TextDelta:
    """Text one model call produced; ``call`` names the call (its step key)."""

    turn_id: str
    call: str
    delta: str


class Watch:
    """One watcher of one turn: an unbounded queue of deltas (publishing never waits)."""

    def __init__(self, streams: TurnStreams, turn_id: str) -> None:
        self.turn_id = turn_id
        self.queue: asyncio.Queue[TextDelta] = asyncio.Queue()
        self._streams = streams

    def close(self) -> None:
        self._streams._detach(self)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Call:
    """One model call in progress: its key, the masked text shown so far, its masker."""

    __slots__ = ("key", "masker", "shown")

    def __init__(self, key: str, redaction: RedactionPolicy | None) -> None:
        self.key = key
        self.shown: list[str] = []
        self.masker = StreamMasker(redaction)


class TurnStreams:
    """The runtime's live text of the model calls in progress, per turn (masked)."""

    def __init__(self, redaction: RedactionPolicy | None = None) -> None:
        """``redaction``: the policy masking what watchers get (the runtime's, from
        :meth:`of`; when left out, the policy in effect where each call starts)."""
        self._redaction = redaction
        self._calls: dict[str, _Call] = {}
        self._watches: dict[str, set[Watch]] = {}

    @staticmethod
    def of(runtime: CoreRuntime) -> TurnStreams:
        """The runtime's one instance (created on first use), masking with its policy."""
        return runtime.plugin_state(STATE_KEY, lambda: TurnStreams(runtime.redaction))

    def watch(self, turn_id: str) -> Watch:
        """Attach to ``turn_id``; the current call's text so far is queued at once."""
        watch = Watch(self, turn_id)
        self._watches.setdefault(turn_id, set()).add(watch)
        current = self._calls.get(turn_id)
        if current is not None and current.shown:
            watch.queue.put_nowait(TextDelta(turn_id, current.key, "".join(current.shown)))
        return watch

    def _detach(self, watch: Watch) -> None:
        watches = self._watches.get(watch.turn_id)
        if watches is not None:
            watches.discard(watch)
            if not watches:
                del self._watches[watch.turn_id]

    def begin(self, turn_id: str, call: str) -> None:
        """Model call ``call`` of ``turn_id`` starts streaming."""
        self._calls[turn_id] = _Call(call, self._redaction)

    def publish(self, turn_id: str, call: str, delta: str) -> None:
        """``delta`` of ``call``'s text: watchers get it masked, maybe a little later."""
        current = self._calls.get(turn_id)
        if current is None or current.key != call:
            current = _Call(call, self._redaction)
            self._calls[turn_id] = current
        self._show(turn_id, current, current.masker.push(delta))

    def end(self, turn_id: str, call: str) -> None:
        """``call`` stopped streaming (done or failed): the text held back goes out."""
        current = self._calls.get(turn_id)
        if current is not None and current.key == call:
            self._show(turn_id, current, current.masker.flush())
            del self._calls[turn_id]

    def _show(self, turn_id: str, call: _Call, text: str) -> None:
        if not text:
            return
        call.shown.append(text)
        for watch in self._watches.get(turn_id, ()):
            watch.queue.put_nowait(TextDelta(turn_id, call.key, text))


async def stream_response(
    stream: Callable[[ModelRequest], AsyncIterator[Any]],
    request: ModelRequest,
    on_delta: Callable[[str], None],
) -> ModelResponse:
    """Run a model's ``stream``; return its response with the streamed text as its text.

    :raises ModelError: when the stream yields something else than ``str`` deltas and
        one final ``ModelResponse``.
    """
    deltas: list[str] = []
    response: ModelResponse | None = None
    async for item in stream(request):
        if isinstance(item, str):
            if response is not None:
                raise ModelError("the model's stream yielded text after its final response")
            if item:
                deltas.append(item)
                on_delta(item)
        elif isinstance(item, ModelResponse):
            response = item
        else:
            raise ModelError(
                f"a model's stream must yield str deltas and one ModelResponse, got {item!r}"
            )
    if response is None:
        response = ModelResponse()
    if deltas:  # what the watchers saw is what the turn stores
        response = attrs.evolve(response, text="".join(deltas))
    return response
