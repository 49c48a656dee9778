"""The call log lives on the store's backend: a remote call recorded by one node is
found by another node sharing the store, so a turn resumed there follows the same
remote task and the remote agent gets the message once. On both backends: SQLite files
(nodes sharing one home) and a PostgreSQL schema (nodes with homes of their own).

Node A is a real process, SIGKILLed while it waits for the remote task; node B is a
second plugin object over its own offer, as another process opens it."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolang_agents_remote import RemoteSettings
from toolang_agents_remote.calls import CallLog, RemoteAgentProvider
from toolang_agents_remote.testing import A2AServer
from toolang_core import PluginDatabases
from toolang_core.models import Message, ModelRequest
from toolang_core.store.sqlite.plugin_tables import SqlitePluginDatabases

KEY = "turn-7:model:0"
TEXT = "review this once"
OLD_SCHEMA = (
    "CREATE TABLE calls (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
    "message_id TEXT NOT NULL, task_id TEXT, state TEXT NOT NULL, error TEXT, "
    "started REAL NOT NULL, finished REAL)"
)


def offer(place: dict[str, str]) -> PluginDatabases:
    """A node's plugin databases, as its runtime would build them for ``place``."""
    if place["backend"] == "sqlite":
        return SqlitePluginDatabases(Path(place["directory"]))
    from toolang_store_postgres.plugin_tables import PostgresPluginDatabases

    return PostgresPluginDatabases(place["dsn"], store_schema=place["schema"])


def call(provider: RemoteAgentProvider, url: str) -> Any:
    request = ModelRequest(messages=(Message(role="user", content=TEXT),), key=KEY)
    return asyncio.run(provider.model(url).complete(request))


NODE_A = """
import json, os, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_call_log_nodes import call, offer
from toolang_agents_remote import RemoteSettings
from toolang_agents_remote.calls import RemoteAgentProvider

place = json.loads(os.environ["CALL_LOG_PLACE"])
url = sys.argv[1]
provider = RemoteAgentProvider(RemoteSettings(endpoints=[url]), Path(sys.argv[2]), offer(place))
call(provider, url)
"""


@pytest.fixture(params=["sqlite", "postgres"])
def place(request, tmp_path) -> dict[str, str]:
    """Where both nodes keep plugins' databases."""
    if request.param == "sqlite":
        return {"backend": "sqlite", "directory": str(tmp_path / "shared-home" / "plugins")}
    return {
        "backend": "postgres",
        "dsn": request.getfixturevalue("toolang_pg_dsn"),
        "schema": request.getfixturevalue("toolang_pg_schema"),
    }


def wait_for(check, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)
    return found


def test_a_call_recorded_by_one_node_is_followed_by_another(place, tmp_path):
    import json

    with A2AServer("reviewer", held=True) as server:
        node_b = RemoteAgentProvider(
            RemoteSettings(endpoints=[server.url]), tmp_path / "b", offer(place)
        )
        a = subprocess.Popen(
            [
                sys.executable,
                "-c",
                NODE_A.format(tests=str(Path(__file__).parent)),
                server.url,
                str(tmp_path / "a"),
            ],
            env={**os.environ, "CALL_LOG_PLACE": json.dumps(place)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            # Node B sees node A's call, with its remote task, through the shared store.
            def recorded() -> tuple[str, str | None] | None:
                assert a.poll() is None, a.communicate()[0].decode(errors="replace")
                found = node_b.log.find(KEY) if _exists(place, node_b.log) else None
                return found if found is not None and found[1] is not None else None

            message_id, task_id = wait_for(recorded, 120, "node A to record the remote task")
            assert server.messages == [TEXT]
            a.send_signal(signal.SIGKILL)  # node A dies waiting: its turn is resumed on B
            a.wait(30)
            assert server.release is not None
            server.release.set()
            answer = call(node_b, server.url)
        finally:
            if a.poll() is None:
                a.kill()
                a.wait(30)
            assert a.stdout is not None
            a.stdout.close()
        [logged] = node_b.log.recent(server.url)
        node_b.log.close()
    assert answer.text == TEXT
    assert answer.model == f"a2a:{server.url}#{task_id}"  # followed A's task
    assert server.messages == [TEXT]  # the remote agent got the message once
    assert message_id.startswith("toolang-")
    assert (logged["task_id"], logged["state"]) == (task_id, "completed")


def _exists(place: dict[str, str], log: CallLog) -> bool:
    """Whether node A has created the log yet (node B would create it otherwise, which
    is also fine, but then the test would not show that B found A's schema)."""
    if place["backend"] == "sqlite":
        return (Path(place["directory"]) / "agents-remote.db").exists()
    import psycopg

    with psycopg.connect(place["dsn"], autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'calls'",
            (f"{place['schema']}__agents_remote",),
        ).fetchone()
    return found is not None


def test_the_per_node_file_of_earlier_versions_is_carried_over_once(place, tmp_path):
    home = tmp_path / "home"
    old = home / "agents-remote" / "calls.db"
    old.parent.mkdir(parents=True)
    with sqlite3.connect(old) as db:
        db.execute(OLD_SCHEMA)
        db.execute(
            "INSERT INTO calls VALUES ('k-old', 'http://far', 'toolang-m', 't-9', 'waiting', "
            "NULL, 100.0, NULL)"
        )
    db.close()
    log = CallLog(offer(place), home)
    try:
        assert log.find("k-old") == ("toolang-m", "t-9")  # resumed after the upgrade
        assert not old.exists() and old.with_name("calls.db.imported").exists()
        log.end("k-old", "completed")
    finally:
        log.close()
    again = CallLog(offer(place), home)  # the renamed file is not read again
    try:
        [call] = again.recent("http://far")
        assert (call["task_id"], call["state"]) == ("t-9", "completed")
    finally:
        again.close()


def test_a_postgres_runtime_keeps_the_call_log_in_the_plugins_schema(
    toolang_runtime, toolang_pg_config, toolang_pg_schema
):
    """The wiring: the runtime's ``plugin_databases`` service reaches the ``a2a`` model
    provider and the agent source (`toolang agents show` reads the calls there)."""
    import json

    import toolang_agents_remote
    import toolang_store_postgres
    from toolang_core.models.resolve import ModelResolver

    with A2AServer("polyglot") as server:
        runtime = toolang_runtime(
            toolang_pg_config
            + f"\n[plugins.agents-remote]\nendpoints = {json.dumps([server.url])}\n",
            plugins={
                "store-postgres": toolang_store_postgres,
                "agents-remote": toolang_agents_remote,
            },
        )
        model = ModelResolver(runtime).resolve(f"a2a/{server.url}")
        request = ModelRequest(messages=(Message(role="user", content="hola"),), key=KEY)
        assert asyncio.run(model.complete(request)).text == "hola"
        log = model.provider.log
        try:
            assert f"{toolang_pg_schema}__agents_remote" in log.db.where
        finally:
            log.close()
        detail = runtime.agents.registry.health["polyglot"].detail
    assert "last 1 call(s): 1 completed" in detail
    assert not (runtime.config.home / "plugins" / "agents-remote.db").exists()
