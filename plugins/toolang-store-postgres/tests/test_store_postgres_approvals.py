"""Sealed approval decisions on the PostgreSQL store: a decision written straight into
the database is ignored (the turn stays parked), and nodes of one store must share the
approval key — a node with another key, or none, refuses to start and says why."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest
from store_postgres_nodes import Nodes
from structlog.testing import capture_logs

import toolang_store_postgres
from toolang_core import ApprovalBook, ApprovalKey, Tool, hookimpl
from toolang_core.store import NewTurnRequest, TurnStatus
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.processes import wait_for
from toolang_store_postgres.store import PostgresStore

RAN: list[str] = []


def touch(name: str) -> str:
    """Record a run."""
    RAN.append(name)
    return f"touched {name}"


class AskEveryTime:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(touch, blocking=False))

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return ask_a_person(call, ctx, prompt=f"run {call.name}?", requester="tester")


def forge_approval(dsn: str, schema: str, approval_id: str) -> None:
    """What a SQL client with the database but not the key would write."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        updated = conn.execute(
            f'UPDATE "{schema}".records SET data = data || '
            """'{"status": "approved", "decided_by": "cli:someone-else"}'::jsonb """
            "WHERE kind = 'toolang.approval' AND data->>'id' = %s",
            (approval_id,),
        ).rowcount
    assert updated == 1


def test_a_decision_forged_in_the_database_is_ignored_and_the_turn_stays_parked(
    toolang_runtime, toolang_pg_dsn, toolang_pg_schema, toolang_scripted_model
):
    RAN.clear()
    model = toolang_scripted_model([tool_call("touch", {"name": "x"}), text("done")])
    runtime = toolang_runtime(
        f'[store]\nbackend = "postgres"\n[plugins.store-postgres]\ndsn = "{toolang_pg_dsn}"\n'
        f'schema = "{toolang_pg_schema}"\n[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n'
        'shutdown_grace_seconds = 0\n[models]\ndefault = "scripted"\n',
        plugins={
            "store-postgres": toolang_store_postgres,
            "scripted": model.plugin(),
            "gate": AskEveryTime(),
        },
    )
    other = runtime.open_inbox()

    async def scenario(logs: list[dict[str, object]]) -> object:
        turn_id = other.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="go")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        book = ApprovalBook(other.store)
        try:
            await _until(lambda: other.get(turn_id).status is TurnStatus.AWAITING_APPROVAL)
            (pending,) = book.list("pending")
            forge_approval(toolang_pg_dsn, toolang_pg_schema, pending.id)
            await _until(lambda: any(e["event"] == "approval.decision_forged" for e in logs))
            assert other.get(turn_id).status is TurnStatus.AWAITING_APPROVAL
            assert RAN == []
            assert [a.id for a in book.list("pending")] == [pending.id]
            book.decide(pending.id, approved=True, by="cli:tester")  # a person still can
            await _until(lambda: other.get(turn_id).status.is_terminal)
            return other.get(turn_id)
        finally:
            stop.set()
            await serving

    try:
        with capture_logs() as logs:
            turn = asyncio.run(scenario(logs))
        assert (turn.status, RAN) == (TurnStatus.COMPLETED, ["x"])  # type: ignore[attr-defined]
        (decided,) = ApprovalBook(other.store).list()
        assert (decided.status, decided.decided_by) == ("approved", "cli:tester")
    finally:
        other.store.close()


async def _until(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


@pytest.fixture
def nodes(tmp_path, toolang_pg_dsn, toolang_pg_schema):
    PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema).close()
    started = Nodes(tmp_path, toolang_pg_dsn, toolang_pg_schema)
    yield started
    started.stop_all()


def test_a_node_with_another_approval_key_or_none_refuses_to_start(nodes, tmp_path):
    first = nodes.start("a")
    wait_for(nodes.key_file.is_file, 60, "the first node to make the shared key")
    wait_for(lambda: first.events("runtime.started"), 60, "the first node to start")
    other_key = tmp_path / "other.key"
    other_key.write_text(ApprovalKey.generate().secret.hex() + "\n")
    for name, key_file, expected in (
        ("b", other_key, "is not the key this store's decisions are sealed with"),
        ("c", tmp_path / "nowhere.key", "is missing, but this store's decisions are sealed"),
    ):
        node = nodes.start(name, key_file=key_file)
        assert node.proc.wait(60) == 2, node.log.read_text()
        said = node.log.read_text()
        assert expected in said and str(key_file) in said and "[approvals] key_file" in said
        assert "Traceback" not in said
    assert not (tmp_path / "nowhere.key").exists()  # never made up on a store that has one
    sharing = nodes.start("d")  # the same key file: starts
    wait_for(lambda: sharing.events("runtime.started"), 60, "a node sharing the key to start")
