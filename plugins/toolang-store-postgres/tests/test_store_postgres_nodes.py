"""Several `toolang run` processes on one PostgreSQL schema, as nodes on several machines:
every rule holds across them, a dead or paused node's turn is taken over safely, and a
cancel reaches a turn wherever it runs. The audit trigger records every status change,
so the checks are on what happened, not only on the final rows."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter

import psycopg
import pytest
from store_postgres_nodes import (
    TERMINAL,
    Nodes,
    audit,
    install_audit,
    node_env,
    peak_per_group,
    spans,
    thread_overlaps,
)

from toolang_core.store import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import wait_for
from toolang_store_postgres.store import PostgresStore

REQUESTS, THREADS, PRODUCERS, NODES = 5000, 500, 2, 3
GROUPS = {
    "g0": {"priority": 40, "max_running": 1},
    "g1": {"priority": 30, "max_running": 2},
    "g2": {"priority": 20, "max_running": 3},
    "g3": {"priority": 10},
    # Submissions to g4 take the locking path (a max_queued rule) instead of one INSERT.
    "g4": {"priority": 0, "max_running": 4, "max_queued": 100_000},
}
CAPS = {group: keys["max_running"] for group, keys in GROUPS.items() if "max_running" in keys}

PRODUCER = """
import random, sys
from pathlib import Path
from toolang_core import NewTurnRequest, Runtime, load_config

home = Path(sys.argv[1])
index, count, threads = (int(arg) for arg in sys.argv[2:5])
inbox = Runtime.from_config(load_config(home / "toolang.toml")).open_inbox()
rng = random.Random(index)
for i in range(count):
    t = rng.randrange(threads)
    delay = rng.choice([0, 0, 0, 0.002, 0.005])
    inbox.submit(NewTurnRequest(
        source="chat", thread_id=f"t{t}", thread_group=f"g{t % 5}", input=f"p{index}-{i}",
        meta={"echo": {"delay_seconds": delay}},
    ))
inbox.store.close()
"""


@pytest.fixture
def nodes(tmp_path, toolang_pg_dsn, toolang_pg_schema):
    PostgresStore(
        toolang_pg_dsn, schema_name=toolang_pg_schema
    ).close()  # migrate, then add the audit
    install_audit(toolang_pg_dsn, toolang_pg_schema)
    started = Nodes(tmp_path, toolang_pg_dsn, toolang_pg_schema)
    yield started
    started.stop_all()


@pytest.fixture
def store(toolang_pg_dsn, toolang_pg_schema):
    opened = PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema)
    yield opened
    opened.close()


def running_runs(store: PostgresStore) -> dict[str, int]:
    return {r.id: r.pid for r in store.list_runs(limit=50) if r.status == "running"}


def test_nodes_and_producers_at_once_keep_every_rule(
    nodes, store, toolang_pg_dsn, toolang_pg_schema
):
    started = [nodes.start(f"node{i}", groups=GROUPS, lease_seconds=10.0) for i in range(NODES)]
    wait_for(lambda: len(running_runs(store)) == NODES, 60, "every node to start")
    producer_home = nodes.home("producer", groups=GROUPS)
    args = [str(producer_home), "", str(REQUESTS // PRODUCERS), str(THREADS)]
    producers = [
        subprocess.Popen(
            [sys.executable, "-c", PRODUCER, *args[:1], str(i), *args[2:]],
            env=node_env(toolang_pg_dsn),
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PRODUCERS)
    ]
    for producer in producers:
        _, err = producer.communicate(timeout=300)
        assert producer.returncode == 0, err

    def settled() -> bool:
        return sum(c.count for c in store.counts() if c.status.is_terminal) == REQUESTS

    wait_for(settled, 300, f"all {REQUESTS} requests to end")
    nodes.stop_all()
    assert all(node.proc.returncode == 0 for node in started)

    by_status: Counter[TurnStatus] = Counter()
    for count in store.counts():
        by_status[count.status] += count.count
    assert by_status == {TurnStatus.COMPLETED: REQUESTS}
    changes = audit(toolang_pg_dsn, toolang_pg_schema)
    ended = Counter(c.id for c in changes if c.new in TERMINAL)
    assert len(ended) == REQUESTS
    assert set(ended.values()) == {1}, "a request ended more than once"
    found = spans(changes)
    assert thread_overlaps(found) == []
    peaks = peak_per_group(found)
    assert all(peaks[group] <= cap for group, cap in CAPS.items()), peaks
    assert len({c.owner for c in changes if c.new == "running"}) == NODES  # all took part


def submit_slow_turn(store: PostgresStore, seconds: float) -> str:
    echo = {"echo": {"delay_seconds": seconds}}
    request = NewTurnRequest(source="chat", thread_id="chat:slow", input="slow", meta=echo)
    return store.submit(request, SubmitRules("chat", 40), now=time.time()).id


def holder(store: PostgresStore, turn_id: str, nodes: list) -> tuple[str, object]:
    """The run holding ``turn_id`` and its node, once the turn runs."""
    turn = wait_for(
        lambda: (t := store.get(turn_id)) and t.status is TurnStatus.RUNNING and t,
        60,
        "the turn to start",
    )
    pid = {r.id: r.pid for r in store.list_runs(limit=50)}[turn.lease_owner]
    (node,) = [n for n in nodes if n.proc.pid == pid]
    return turn.lease_owner, node


def test_a_killed_nodes_turn_is_taken_over_by_another(
    nodes, store, toolang_pg_dsn, toolang_pg_schema
):
    pair = [nodes.start(name, lease_seconds=2.0) for name in ("a", "b")]
    wait_for(lambda: len(running_runs(store)) == 2, 60, "both nodes to start")
    turn_id = submit_slow_turn(store, 3.0)
    dead_run, victim = holder(store, turn_id, pair)
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait(10)

    turn = wait_for(
        lambda: (t := store.get(turn_id)) and t.status.is_terminal and t, 60, "the takeover"
    )
    assert (turn.status, turn.attempt) == (TurnStatus.COMPLETED, 2)
    starts = [
        (c.attempt, c.owner) for c in audit(toolang_pg_dsn, toolang_pg_schema) if c.new == "running"
    ]
    assert starts[0] == (1, dead_run)
    assert starts[1][0] == 2
    assert starts[1][1] != dead_run
    assert [(s.kind, s.attempt) for s in store.steps(turn_id)] == [("echo", 2)]


def test_a_resumed_zombie_cannot_complete_a_turn_another_node_took_over(
    nodes, store, toolang_pg_dsn, toolang_pg_schema
):
    pair = [nodes.start(name, lease_seconds=2.0) for name in ("a", "b")]
    wait_for(lambda: len(running_runs(store)) == 2, 60, "both nodes to start")
    turn_id = submit_slow_turn(store, 3.0)
    _, zombie = holder(store, turn_id, pair)
    zombie.proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: (t := store.get(turn_id)) and t.status.is_terminal, 60, "the takeover")
    finally:
        zombie.proc.send_signal(signal.SIGCONT)

    def refused() -> list:
        return [
            e
            for e in zombie.events()
            if e.get("event") in {"turn.fenced", "turn.lease_lost"} and e.get("turn") == turn_id
        ]

    (refusal,) = wait_for(refused, 30, "the zombie to find its lease gone")
    assert refusal["attempt"] == 1
    turn = store.get(turn_id)
    assert (turn.status, turn.attempt) == (TurnStatus.COMPLETED, 2)
    changes = audit(toolang_pg_dsn, toolang_pg_schema)
    assert [c.new for c in changes if c.id == turn_id].count("completed") == 1
    assert [(s.kind, s.attempt) for s in store.steps(turn_id)] == [("echo", 2)]
    assert zombie.proc.poll() is None  # it lives on and keeps serving


def test_cancel_from_one_node_reaches_a_turn_running_on_another(nodes, store):
    pair = [nodes.start(name) for name in ("a", "b")]
    try:
        wait_for(lambda: len(running_runs(store)) == 2, 180, "both nodes to start")
    except AssertionError as exc:
        logs = "\n".join(f"{n.name}: {n.log.read_text(errors='replace')[-2000:]}" for n in pair)
        raise AssertionError(f"{exc}\n{logs}") from None
    turn_id = submit_slow_turn(store, 120.0)
    _, running_on = holder(store, turn_id, pair)

    done = nodes.cli("c", "cancel", turn_id, "--reason", "no longer needed")
    assert done.returncode == 0, done.stderr

    turn = wait_for(  # long before the turn's 120 s of work would end
        lambda: (t := store.get(turn_id)) and t.status.is_terminal and t, 30, "the cancel"
    )
    assert (turn.status, turn.outcome, turn.error) == (
        TurnStatus.CANCELED,
        "canceled",
        "no longer needed",
    )
    assert running_on.proc.poll() is None


def test_a_node_rides_out_its_connections_being_cut(
    nodes, store, toolang_pg_dsn, toolang_pg_schema
):
    (node,) = [nodes.start("a")]
    wait_for(lambda: len(running_runs(store)) == 1, 60, "the node to start")
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
            (f"toolang:%:{node.proc.pid}",),
        )
    ids = [
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{i}", input=str(i)),
            SubmitRules("chat", 40),
            now=time.time(),
        ).id
        for i in range(5)
    ]
    wait_for(lambda: all(store.get(i).status is TurnStatus.COMPLETED for i in ids), 60, "the turns")
    assert node.proc.poll() is None
    wait_for(store.runtime_running, 30, "its presence to return with a heartbeat")
