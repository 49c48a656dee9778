"""Streaming answers: deltas reach watchers as produced; the stored output is their join."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.models import ModelError, ModelRequest, ModelResponse
from toolang_core.redaction_stream import StreamMasker
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text
from toolang_core.testing.runtimes import serving, wait_status
from toolang_core.turn.streaming import TurnStreams, stream_response

OPENING = "Hello, this answer opens with a sentence long enough to pass the hold of the mask. "
SHOWN_BEFORE_GATE = StreamMasker().push(OPENING)
"""What watchers see of the opening while the model waits: all but the masker's tail."""


class GatedModel:
    """Streams :data:`OPENING`, then waits for ``gate``, then "streaming world"."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.first_sent = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("a streaming model is streamed")

    async def stream(self, request: ModelRequest):
        yield OPENING
        self.first_sent.set()
        await self.gate.wait()
        yield "streaming "
        yield "world"
        yield ModelResponse(model="gated")

    def plugin(self):
        model = self

        class Provider:
            def model(self, model_id):
                return model

        class Plugin:
            @staticmethod
            @hookimpl
            def toolang_register_models(register):
                register("gated", lambda context: Provider())

        return Plugin()


def make(tmp_path, model, name):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default=name),
    )
    return Runtime.with_plugins(config, [(name, model.plugin())], env={})


async def drain(watch, until: str) -> str:
    seen = ""
    while seen != until:
        seen += (await asyncio.wait_for(watch.queue.get(), 10)).delta
    return seen


def test_watchers_get_the_deltas_and_a_late_one_catches_up_and_output_is_their_join(tmp_path):
    model = GatedModel()
    runtime = make(tmp_path, model, "gated")

    async def scenario():
        async with serving(runtime, sources=()):
            turn_id = runtime.inbox.submit(
                NewTurnRequest(source="chat", thread_id="cli:s", input="hi")
            ).id
            streams = TurnStreams.of(runtime)
            early = streams.watch(turn_id)
            await asyncio.wait_for(model.first_sent.wait(), 10)
            late = streams.watch(turn_id)  # attaches mid-call
            gone = streams.watch(turn_id)
            gone.close()  # a watcher leaving changes nothing for the turn
            assert await drain(late, SHOWN_BEFORE_GATE) == SHOWN_BEFORE_GATE
            model.gate.set()
            whole = OPENING + "streaming world"
            assert await drain(early, whole) == whole
            assert (
                await drain(late, whole[len(SHOWN_BEFORE_GATE) :])
                == (whole[len(SHOWN_BEFORE_GATE) :])
            )
            turn = await wait_status(runtime.inbox, turn_id, {"completed", "failed"})
            early.close()
            late.close()
            return turn

    turn = asyncio.run(scenario())
    assert 0 < len(SHOWN_BEFORE_GATE) < len(OPENING)
    assert turn.status is TurnStatus.COMPLETED
    assert turn.output == OPENING + "streaming world"


def test_the_scripted_model_streams_word_by_word_keeping_whitespace(tmp_path):
    model = ScriptedModel([text("  two  words\nand more ")])
    runtime = make(tmp_path, model, "scripted")

    async def scenario():
        async with serving(runtime, sources=()):
            turn_id = runtime.inbox.submit(
                NewTurnRequest(source="chat", thread_id="cli:w", input="hi")
            ).id
            watch = TurnStreams.of(runtime).watch(turn_id)
            deltas = []
            while "".join(deltas) != "  two  words\nand more ":
                deltas.append((await asyncio.wait_for(watch.queue.get(), 10)).delta)
            watch.close()
            return deltas, await wait_status(runtime.inbox, turn_id, {"completed"})

    deltas, turn = asyncio.run(scenario())
    assert turn.output == "".join(deltas)

    async def words() -> list[str]:
        again = ScriptedModel([text("  two  words\nand more ")])
        return [d async for d in again.stream(ModelRequest(messages=())) if isinstance(d, str)]

    # The model yields four words; watchers get them masked, a few words behind (this
    # short answer whole, when the call ends).
    assert asyncio.run(words()) == ["  two  ", "words\n", "and ", "more "]


def test_a_stream_yielding_something_else_is_a_model_error():
    async def bad(request):
        yield 42

    with pytest.raises(ModelError, match="must yield str deltas and one ModelResponse"):
        asyncio.run(stream_response(bad, ModelRequest(messages=()), lambda d: None))


def test_streamed_text_replaces_the_final_responses_text():
    async def stream(request):
        yield "a"
        yield "b"
        yield ModelResponse(text="something else")

    response = asyncio.run(stream_response(stream, ModelRequest(messages=()), lambda d: None))
    assert response.text == "ab"


def test_text_relayed_from_another_runtime_reaches_watchers_once_in_order():
    """A turn running in another runtime of a shared store: its text comes as parts with
    their offsets, some sent again (a renewed watch is answered with the text so far);
    a watcher gets each character once, and a new model call starts over."""
    streams = TurnStreams()
    watch = streams.watch("t1")
    streams.relay("t1", "c1", 0, "hello ")
    streams.relay("t1", "c1", 6, "wor")
    streams.relay("t1", "c1", 0, "hello wor")  # the text so far, again: nothing new
    streams.relay("t1", "c1", 4, "o world")  # overlaps: only "ld" is new
    streams.relay("t1", "c2", 0, "next")
    streams.relay("t2", "c1", 0, "nobody watches this")
    got = []
    while not watch.queue.empty():
        delta = watch.queue.get_nowait()
        got.append((delta.call, delta.delta))
    assert got == [("c1", "hello "), ("c1", "wor"), ("c1", "ld"), ("c2", "next")]
    watch.close()
    streams.relay("t1", "c2", 4, " more")  # after the last watcher left: dropped
    assert watch.queue.empty()
