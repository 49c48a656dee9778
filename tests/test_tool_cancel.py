"""A canceled turn cancels the async tool it is running: the cancellation reaches the
tool's own await, the trace shows the call as canceled, and what the tool would have
returned afterwards is never recorded."""

from __future__ import annotations

import asyncio
import time

from toolang_core import Tool, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


class SlowTool:
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.seen: list[str] = []

    async def slow_work(self) -> str:
        """Work that takes a minute."""
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.seen.append("canceled")
            raise
        self.seen.append("finished")
        return "done after a minute"

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(self.slow_work, name="slow_work"))


def test_canceling_the_turn_cancels_the_running_async_tool(tmp_path):
    tool = SlowTool()
    model = ScriptedModel([tool_call("slow_work", {}), text("never")])
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    runtime = Runtime.with_plugins(config, [("scripted", model.plugin()), ("slow", tool)], env={})

    async def scenario() -> None:
        inbox = runtime.open_inbox()
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:s", input="go")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            await asyncio.wait_for(tool.started.wait(), 20)
            began = time.monotonic()
            inbox.cancel(turn_id)
            # The tool's minute of work is the bound (tool.seen below says whether it
            # ended canceled or finished); the deadline only keeps a broken run short.
            while not inbox.get(turn_id).status.is_terminal:
                assert time.monotonic() - began < 120, "the turn did not end"
                await asyncio.sleep(0.02)
        finally:
            stop.set()
            await serving
        turn = inbox.get(turn_id)
        assert turn.status is TurnStatus.CANCELED
        assert tool.seen == ["canceled"]  # the cancellation reached the tool's await
        (step,) = [s for s in inbox.store.steps(turn_id) if s.kind == "tool_call"]
        assert step.data["result"]["error_type"] == "canceled"
        assert step.status == "failed"  # its intent completed as canceled: never in doubt
        assert "done after a minute" not in str(step.data)
        inbox.store.close()

    asyncio.run(scenario())
