"""A tool whose output is not JSON (a set, bytes, an object, a lone surrogate, NaN or
an infinity) fails its own call, named, and its turn goes on: the model is told, the
call is recorded as failed (it ran; a resumed turn never runs it again), the runtime
serves the next turn. Before, the whole turn failed with an unnamed ``TypeError`` and the
call's step stayed an intent."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call

RAN: list[str] = []
OUTPUTS = {
    "set": {1, 2},
    "bytes": b"\x00\x01",
    "object": object(),
    "surrogate": "half a pair \ud800",
    "nested": {"rows": [{"at": {3}}]},
    "nan": float("nan"),
    "infinity": {"rate": [1.0, float("-inf")]},
    "nul-keys": {"k\x00": 1, "k\\x00": 2},  # the same key once the NUL is written out
}


class Odd:
    @hookimpl
    def toolang_register_tools(self, register):
        def odd(kind: str) -> object:
            """Return something odd.

            :param kind: which
            """
            RAN.append(kind)
            return OUTPUTS[kind]

        register(Tool.from_function(odd, blocking=False))


def two_turns(toolang_runtime, model):
    """A runtime with the ``odd`` tool and ``model`` serves a turn asking for it, then
    another on a thread of its own: ``(inbox, the first's id, the second's id)``."""
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n', plugins={"odd": Odd(), "scripted": model.plugin()}
    )
    inbox = runtime.open_inbox()
    first = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="odd")).id
    second = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:b", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox, first, second


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_a_tool_whose_output_is_not_json_fails_its_call_named_and_the_turn_goes_on(
    toolang_runtime, kind
):
    RAN.clear()
    model = ScriptedModel(
        [tool_call("odd", {"kind": kind}), text("it gave me nothing"), text("hi")]
    )
    inbox, first, second = two_turns(toolang_runtime, model)
    turn = inbox.get(first)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "it gave me nothing"), turn.error
    assert inbox.get(second).status is TurnStatus.COMPLETED
    assert [kind] == RAN
    (call,) = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    assert call.status == "failed"  # recorded: a resumed turn replays it, never runs it
    result = call.data["result"]
    assert (result["ok"], result["error_type"]) == (False, "ToolOutputError")
    assert "tool 'odd' returned output that is not JSON" in result["error"]
    # the model was told
    told = json.loads(model.calls[1].messages[-1].content)
    assert (told["error_type"], "not JSON" in told["error"]) == ("ToolOutputError", True)
    inbox.store.close()


@pytest.mark.parametrize("param", ["NaN", '"half \\ud800"', "1e400"])
def test_a_model_asking_for_a_tool_with_unstorable_parameters_fails_its_turn_named(
    toolang_runtime, param
):
    """A provider's tool-call arguments are JSON text the model plugin parses, and
    ``json.loads`` reads ``NaN``, ``1e400`` (an infinity) and a lone surrogate, none of
    which a store can write: the model's attempt fails naming the model and the
    tool (the tool never runs), the turn ends ``model_error``, the next turn is
    served. Before, the step could not be stored: the turn's commit failed, with the
    other turns committed with it, and it stayed running until its lease ran out."""
    RAN.clear()
    model = ScriptedModel([tool_call("odd", {"kind": json.loads(param)}), text("hi")])
    inbox, first, second = two_turns(toolang_runtime, model)
    turn = inbox.get(first)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "asked for tool 'odd' with parameters that are not JSON" in (turn.error or "")
    assert RAN == []
    assert inbox.get(second).status is TurnStatus.COMPLETED
    inbox.store.close()
