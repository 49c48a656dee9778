"""Task runs on the PostgreSQL store: the task-run controller uses only the store
contract, so spawning, running, finalizing, merging, cancelling and pruning work here as
on SQLite."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from test_store_postgres_runtime import config_text

import toolang_store_postgres
from toolang_core import (
    AgentDefinition,
    AgentLoad,
    NewTurnRequest,
    SpawnRequest,
    TaskRunController,
    TaskRunStatus,
    TurnFilter,
    TurnStatus,
    hookimpl,
)
from toolang_core.testing.models import ScriptedModel, text, tool_call


class Agents:
    label = "builtin"
    name = "pg-taskrun-agents"

    def load(self, context):
        return AgentLoad(
            definitions=[
                AgentDefinition(name="assistant", tools=("agent_spawn", "agent_wait")),
                AgentDefinition(name="researcher"),
            ]
        )

    @hookimpl
    def toolang_agent_sources(self):
        return self


def answer(request):
    agent = re.search(r"^- agent: (\S+)$", request.messages[0].content, re.M).group(1)
    last = request.messages[-1]
    if agent == "researcher":
        return text("tides follow the moon")
    if last.role == "user":
        return tool_call("agent_spawn", {"instruction": "research tides", "agent": "researcher"})
    output = json.loads(last.content)["output"]
    if output["status"] == "queued":
        return tool_call("agent_wait", {"agent_id": output["agent_id"], "timeout": 30})
    return text(f"found: {output['summary']}")


@pytest.fixture
def runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema):
    extra = '\n[models]\ndefault = "scripted"\n'
    return toolang_runtime(
        config_text(toolang_pg_dsn, toolang_pg_schema, extra, executor="agent"),
        plugins={
            "store-postgres": toolang_store_postgres,
            "scripted": ScriptedModel(answer).plugin(),
            "agents": Agents(),
        },
    )


def test_a_teammate_runs_is_finalized_and_merged_on_postgres(runtime):
    inbox = runtime.open_inbox()
    try:
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:pg", input="go")).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        assert inbox.get(parent).output == "found: tides follow the moon"
        controller = TaskRunController(inbox.store, runtime)  # another connection
        (run,) = controller.list()
        assert (run.status, run.agent_name, run.parent_turn_id) == (
            TaskRunStatus.COMPLETED,
            "researcher",
            parent,
        )
        assert inbox.store.list_records("toolang.taskrun.open") == []
        (notes,) = inbox.store.list_records("toolang.taskrun.notes")
        assert (notes.key, notes.data["notes"][0]["run_id"]) == ("chat:pg", run.id)
    finally:
        inbox.store.close()


def test_a_canceled_parent_cancels_its_runs_and_prune_deletes_them_on_postgres(runtime):
    store = runtime.open_store()
    try:
        controller = TaskRunController(store, runtime)
        parent = (
            runtime.open_inbox()
            .submit(NewTurnRequest(source="chat", thread_id="chat:pg", input="later"))
            .id
        )
        ids = [
            asyncio.run(
                controller.spawn(
                    SpawnRequest(
                        owner="ada", parent_thread_id="chat:pg", parent_turn_id=parent, task=t
                    )
                )
            ).id
            for t in ("a", "b")
        ]
        store.cancel(parent, now=0, reason="not needed")
        assert sorted(asyncio.run(controller.sweep())) == sorted(ids)
        assert {controller.get(i, owner="ada").status for i in ids} == {TaskRunStatus.CANCELED}
        assert sorted(controller.prune(older_than_seconds=0)) == sorted(ids)
        for run_id in ids:
            assert store.get(run_id) is None
            assert store.thread(f"task:{run_id}") is None
        assert store.get(parent).status is TurnStatus.CANCELED
        assert store.list_turns(TurnFilter(source="task")) == []
    finally:
        store.close()
