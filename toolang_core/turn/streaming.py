"""Streaming answers: a model's text as it is produced, fanned out to watchers.

A model may offer, besides ``complete``, an optional ``stream(request)``: an async
iterator yielding text deltas (``str``) and, last, the whole :class:`ModelResponse`
(tool calls, usage). The agent loop prefers ``stream`` when it exists, publishes each
delta to the runtime's :class:`TurnStreams` and stores the response whose text is the
concatenation of the deltas — so what a watcher saw is what the turn stored.

Watchers (the HTTP server's SSE, a one-shot CLI) live in the runtime's process and
attach and detach freely: publishing never waits on them, a slow or gone watcher
never affects the turn, and one attaching mid-call first gets the call's text so far.
With a store shared by several runtimes, a watcher also gets the text of a turn running
in another one, relayed by :mod:`toolang_core.turn.signals` (each part once, in order;
a part lost on the way is made up by the turn's stored answer, as for a late watcher).

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
    from toolang_core.turn.signals import TurnSignals

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

    __slots__ = ("key", "length", "masker", "shown")

    def __init__(self, key: str, redaction: RedactionPolicy | None) -> None:
        self.key = key
        self.shown: list[str] = []
        self.length = 0
        self.masker = StreamMasker(redaction)


class TurnStreams:
    """The runtime's live text of the model calls in progress, per turn (masked)."""

    def __init__(
        self, redaction: RedactionPolicy | None = None, signals: TurnSignals | None = None
    ) -> None:
        """``redaction``: the policy masking what watchers get (the runtime's, from
        :meth:`of`; when left out, the policy in effect where each call starts).
        ``signals``: the runtime's turn signals, linking watchers and calls to other
        runtimes of a shared store (from :meth:`of`)."""
        self._redaction = redaction
        self._signals = signals
        self._calls: dict[str, _Call] = {}
        self._watches: dict[str, set[Watch]] = {}
        self._relayed: dict[str, tuple[str, int]] = {}
        """Per turn watched here and running elsewhere: its call and text length got."""

    @staticmethod
    def of(runtime: CoreRuntime) -> TurnStreams:
        """The runtime's one instance (created on first use), masking with its policy."""
        from toolang_core.turn.signals import TurnSignals

        def make() -> TurnStreams:
            signals = TurnSignals.of(runtime)
            streams = TurnStreams(runtime.redaction, signals)
            signals._streams = streams
            return streams

        return runtime.plugin_state(STATE_KEY, make)

    def watch(self, turn_id: str) -> Watch:
        """Attach to ``turn_id``; the current call's text so far is queued at once."""
        watch = Watch(self, turn_id)
        self._watches.setdefault(turn_id, set()).add(watch)
        if self._signals is not None:
            self._signals.interested(turn_id)
        current = self._calls.get(turn_id)
        if current is not None and current.shown:
            watch.queue.put_nowait(TextDelta(turn_id, current.key, "".join(current.shown)))
        return watch

    def _detach(self, watch: Watch) -> None:
        watches = self._watches.get(watch.turn_id)
        if watches is not None and watch in watches:
            watches.discard(watch)
            if self._signals is not None:
                self._signals.uninterested(watch.turn_id)
            if not watches:
                del self._watches[watch.turn_id]
                self._relayed.pop(watch.turn_id, None)

    def so_far(self, turn_id: str) -> tuple[str, str] | None:
        """The call of ``turn_id`` streaming here and its (masked) text so far."""
        current = self._calls.get(turn_id)
        if current is None or not current.shown:
            return None
        return current.key, "".join(current.shown)

    def relay(self, turn_id: str, call: str, at: int, text: str) -> None:
        """Text of ``call`` from another runtime, at offset ``at`` of the call's text:
        what this runtime's watchers did not get yet goes to them."""
        if turn_id in self._calls or turn_id not in self._watches:
            return  # running here (its watchers get it first-hand), or nobody watches
        got_call, got = self._relayed.get(turn_id, ("", 0))
        if call != got_call:
            got = 0
        new = text[max(0, got - at) :] if at <= got else text  # a gap: lost on the way
        if not new:
            return
        self._relayed[turn_id] = (call, max(got, at) + len(new))
        for watch in self._watches[turn_id]:
            watch.queue.put_nowait(TextDelta(turn_id, call, new))

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
        at, call.length = call.length, call.length + len(text)
        for watch in self._watches.get(turn_id, ()):
            watch.queue.put_nowait(TextDelta(turn_id, call.key, text))
        if self._signals is not None:
            self._signals.text(turn_id, call.key, at, text)


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
