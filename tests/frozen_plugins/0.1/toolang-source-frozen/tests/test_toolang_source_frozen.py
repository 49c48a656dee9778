"""The source through a real runtime: its run places a turn the runtime completes."""

import asyncio

from toolang_core import TurnFilter, TurnStatus

import toolang_source_frozen as plugin

CONFIG = """
[runtime]
executor = "echo"  # answers with the input: the test is about the source, not a model

[plugins.source-frozen]
input = "time for the daily summary"
"""


def run_once(runtime):
    """Run the source with ``stop`` already set: it places its request and returns."""
    source = runtime.turn_sources(["frozen"])["frozen"]
    stop = asyncio.Event()
    stop.set()
    asyncio.run(source.run(runtime.open_inbox(), stop))


def test_a_run_places_a_turn_the_runtime_completes(toolang_runtime):
    runtime = toolang_runtime(CONFIG, plugins={"source-frozen": plugin})
    run_once(runtime)
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    (turn,) = runtime.open_store().list_turns(TurnFilter(source="frozen"))
    assert (turn.status, turn.thread_id) == (TurnStatus.COMPLETED, "frozen:main")
    assert turn.output == "time for the daily summary"


def test_a_second_run_in_the_same_slot_places_nothing_new(toolang_runtime):
    runtime = toolang_runtime(CONFIG, plugins={"source-frozen": plugin})
    run_once(runtime)
    run_once(runtime)
    assert len(runtime.open_store().list_turns(TurnFilter(source="frozen"))) == 1
