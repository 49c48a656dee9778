"""A blocking tool that outlives its time limit keeps its plugin database open.

The turn gives up on the call when its time limit passes, but the worker thread goes
on. Shutting the runtime down must not close the plugin database under that thread
(closing an SQLite connection while another thread steps a statement on it can crash
the process): the thread finishes its writes, and the log says what was left open.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import structlog

from toolang_core import PluginMigrations, Tool, ToolCallContext, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig, ToolsConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call

MIGRATIONS = PluginMigrations("slow-writer")


@MIGRATIONS()
def m001_rows(db):
    db.execute("CREATE TABLE rows (n INTEGER)")


ROWS = 200


class SlowWriter:
    """``slow_write``: waits past the turn's tool time limit, then writes ``ROWS`` rows one
    statement at a time on the runtime's connection to its plugin database."""

    def __init__(self) -> None:
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self.timed_out = threading.Event()

    def write(self, context: ToolCallContext) -> str:
        try:
            db = context.runtime.plugin_database("slow-writer", MIGRATIONS)
            self.timed_out.wait(30)  # the turn has given up on this call
            for n in range(ROWS):
                db.execute("INSERT INTO rows VALUES (?)", (n,))
                time.sleep(0.002)
            return "written"
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self.finished.set()

    @hookimpl
    def toolang_register_tools(self, register):
        register(
            Tool(
                name="slow_write",
                description="",
                parameters={"type": "object"},
                function=self.write,
                takes_context=True,
            )
        )


def test_a_tool_thread_past_its_time_limit_keeps_its_database_through_shutdown(tmp_path):
    writer = SlowWriter()
    model = ScriptedModel([tool_call("slow_write", {}, call_id="c1"), text("moved on")])
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        tools=ToolsConfig(timeout_seconds=1.5),  # a loaded machine's queue fits in it
    )
    runtime = Runtime.with_plugins(
        config, [("scripted", model.plugin()), ("slow-writer", writer)], env={}
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id

    async def serve_then_release() -> None:
        await runtime.serve(asyncio.Event(), until_idle=True, sources=())
        # The runtime has wound down (its databases closed, or left open): only now does
        # the tool's thread start writing.
        writer.timed_out.set()

    with structlog.testing.capture_logs() as logs:
        asyncio.run(serve_then_release())  # returns once the default executor's threads end
    assert writer.finished.wait(30)
    assert writer.error is None, f"the tool's thread failed: {writer.error!r}"
    turn = inbox.get(turn_id)
    inbox.store.close()
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "moved on")
    assert "timed out after 1.5 s" in model.calls[1].messages[-1].content
    with sqlite3.connect(tmp_path / ".toolang" / "plugins" / "slow-writer.db") as conn:
        assert conn.execute("SELECT count(*) FROM rows").fetchone() == (ROWS,)
    assert [e["tool_threads"] for e in logs if e["event"] == "plugin_databases.left_open"] == [1]
