"""The post-execution stages are isolated: a LearningObserver that raises skips nothing.

A real agent turn with a scripted model runs one tool call through the whole chain with
a raising LearningObserver, in-test observers for every post-execution stage, and the
real toolang-hook-knowledge-saver plugin (installed in the tox `integration` env).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

import toolang_hook_knowledge_saver as knowledge_saver
from toolang_core import NewTurnRequest, Runtime, Tool, TurnStatus, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.testing.models import ScriptedModel, text, tool_call

DOCUMENT = "The deploy runbook: build with make, ship with rsync to the blue hosts. " * 3


def read_doc(name: str) -> str:
    """A document long enough for the knowledge saver to keep."""
    return f"{name}: {DOCUMENT}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(read_doc, blocking=False))


class RaisingObserver:
    @staticmethod
    @hookimpl
    def toolang_observe_tool_result(call, result, ctx):
        raise RuntimeError("observer exploded")


class Probe:
    """Records what one post-execution stage saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []

    def _see(self, stage, call, result):
        self.seen.append((stage, call.name, result.ok))


class ObserverProbe(Probe):
    @hookimpl
    def toolang_observe_tool_result(self, call, result, ctx):
        self._see("LearningObserver", call, result)


class SaverProbe(Probe):
    @hookimpl
    def toolang_save_knowledge(self, call, result, ctx):
        self._see("KnowledgeSaver", call, result)


class PublisherProbe(Probe):
    @hookimpl
    async def toolang_publish_event(self, call, result, ctx):
        self._see("EventPublisher", call, result)


def test_a_raising_learning_observer_stops_no_other_stage_and_fails_no_call(tmp_path):
    model = ScriptedModel([tool_call("read_doc", {"name": "runbook"}, call_id="c1"), text("done")])
    observer, saver, publisher = ObserverProbe(), SaverProbe(), PublisherProbe()
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    # pluggy calls the most recently registered first: the raising observer runs
    # before the observer probe of its own stage.
    runtime = Runtime.with_plugins(
        config,
        [
            ("scripted", model.plugin()),
            ("tools", Tools()),
            ("observer-probe", observer),
            ("raising-observer", RaisingObserver()),
            ("hook-knowledge-saver", knowledge_saver),
            ("saver-probe", saver),
            ("publisher-probe", publisher),
        ],
        env={},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="read")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))

    turn = inbox.get(turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "done")
    assert json.loads(model.calls[1].messages[-1].content) == {
        "ok": True,
        "output": f"runbook: {DOCUMENT}",
    }
    (step,) = [s for s in inbox.store.steps(turn_id) if s.kind == "tool_call"]
    assert step.status == "completed"
    errors = [s for s in step.data["chain"] if s["verdict"] == "error"]
    assert errors == [
        {
            "stage": "LearningObserver",
            "verdict": "error",
            "plugin": "raising-observer",
            "detail": "RuntimeError: observer exploded",
        }
    ]
    assert observer.seen == [("LearningObserver", "read_doc", True)]
    assert saver.seen == [("KnowledgeSaver", "read_doc", True)]
    assert publisher.seen == [("EventPublisher", "read_doc", True)]
    with sqlite3.connect(tmp_path / ".toolang" / "plugins" / "hook-knowledge-saver.db") as db:
        kept = db.execute("SELECT agent, tool, content, turn_id FROM knowledge").fetchall()
    assert kept == [("assistant", "read_doc", f"runbook: {DOCUMENT}", turn_id)]
