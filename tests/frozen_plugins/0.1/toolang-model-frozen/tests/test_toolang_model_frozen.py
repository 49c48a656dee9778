"""The model answers a real turn of the runtime."""

import asyncio

from toolang_core import NewTurnRequest, TurnStatus

import toolang_model_frozen as plugin


def test_it_answers_a_turn(toolang_runtime):
    runtime = toolang_runtime(
        '[models]\ndefault = "frozen"\n', plugins={"model-frozen": plugin}
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="t1", input="hello")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    turn = inbox.get(turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "(frozen) hello")
