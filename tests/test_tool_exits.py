"""A tool that calls sys.exit() (argparse on bad arguments, a click command run
standalone) fails its own call: the runtime goes on serving every other turn."""

from __future__ import annotations

import asyncio

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


class Exits:
    @hookimpl
    def toolang_register_tools(self, register):
        def parse(args: str) -> str:
            """Parse command-line arguments.

            :param args: the arguments
            """
            raise SystemExit(2)

        register(Tool.from_function(parse))  # blocking: in a worker thread


def test_a_turn_whose_tool_exits_completes_and_the_next_turn_runs(toolang_runtime):
    model = ScriptedModel(
        [tool_call("parse", {"args": "--bad"}), text("it could not parse that"), text("hello")]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={"exits": Exits(), "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    first = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="parse --bad")).id
    second = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:b", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(first).status is TurnStatus.COMPLETED
    assert inbox.get(second).status is TurnStatus.COMPLETED
    (call,) = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    result = call.data["result"]
    assert (result["ok"], result["error_type"]) == (False, "SystemExit")
    inbox.store.close()
