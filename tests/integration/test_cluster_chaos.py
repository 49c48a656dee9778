"""Three `toolang run` nodes on one PostgreSQL, one of them SIGKILLed every few seconds.

Each node is a real process with its own home (as on its own machine), every plugin
installed, memory and all five tool-call hooks on, the agent loop with the demo model.
Chat turns and tasks are submitted through every node's home while a chore fires every
two seconds; a killed node is restarted a moment later. Every chat turn and task runs
the non-idempotent `exec_run` once, appending its mark to a file in the one workspace
all nodes share — the side effect this test counts. Every fourth chat also has a chat
turn ask a remote agent (an A2A server in this process, known to every node from its
card) through `ask_agent`: the agent pool's figures for it are updated by whichever
node ran the call. Then:

- no request is lost: every one submitted ends, and none ends twice;
- no side effect is repeated: each mark is in the file at most once, and a turn whose
  mark is missing says its call was *in doubt* (cut off by a kill, never run again);
- each chore occurrence was handed over once, cluster-wide;
- what one node remembered another recalls in its next turn, and every node lists the
  same knowledge and prints the same agent pool, in which the remote agent's calls are
  the calls the traffic made, each counted once (not once per node, nor again by the
  node that resumed a call cut off by a kill).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from toolang_agents_remote.testing import A2AServer
from toolang_core.store import TurnStatus
from toolang_core.testing.processes import wait_for

pytestmark = [pytest.mark.slow]

NODES = 3
CHATS_PER_NODE = 40
TASKS_PER_NODE = 4
KILLS = 8
KILL_EVERY = 3.0
ASK_EVERY = 4  # every fourth chat of a producer also asks the remote agent
REMOTE = "polyglot"

RELAY = """---
name: relay
description: Passes questions on to other agents (the chaos test's asker).
tools: [ask_agent]
---
You pass questions on.
"""

PRODUCER = """
import json, sys, time
from pathlib import Path
from toolang_core import NewTurnRequest, Runtime, load_config

home, prefix, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ask_every, remote = int(sys.argv[4]), sys.argv[5]
inbox = Runtime.from_config(load_config(home / "toolang.toml")).open_inbox()
for i in range(count):
    mark = f"{prefix}-{i}"
    command = json.dumps({"command": f"sleep 0.2; echo {mark} >> marks.txt"})
    time.sleep(0.4)  # spread over the chaos, so that kills land on running turns
    inbox.submit(NewTurnRequest(
        source="chat", thread_id=f"chat:{mark}", input=f"/tool exec_run {command}",
        meta={"mark": mark},
    ))
    if i % ask_every == 0:
        asked = json.dumps({"agent": remote, "request": f"ask {mark}"})
        inbox.submit(NewTurnRequest(
            source="chat", thread_id=f"chat:ask-{mark}", agent="relay",
            input=f"/tool ask_agent {asked}", meta={"ask": mark},
        ))
inbox.store.close()
"""


def node_config(schema: str, workspace: Path, key_file: Path, remote_url: str) -> str:
    return f"""\
home = ".toolang"
[store]
backend = "postgres"
[plugins.store-postgres]
dsn = "${{TOOLANG_PG_DSN}}"
schema = "{schema}"
[log]
format = "json"
level = "info"
[runtime]
executor = "agent"
lease_seconds = 2.0
poll_seconds = 0.2
shutdown_grace_seconds = 0.5
max_attempts = 10
[scheduler]
max_running = 8
[models]
default = "demo"
[agents]
default = "operator"
[memory]
plugin = "postgres"
[tools]
sandbox = "required"
[approvals]
key_file = {json.dumps(str(key_file))}
[plugins.tools-operator]
workspace = {json.dumps(str(workspace))}
[plugins.hook-approval-gate]
auto_approve = ["exec_run"]
[plugins.source-chore]
chores = [{{ key = "tick", schedule = "every 2 seconds", input = "tick" }}]
[plugins.source-task]
poll_seconds = 0.5
[plugins.agents-remote]
endpoints = [{json.dumps(remote_url)}]
timeout_seconds = 60.0
[plugins.agent-pool]
prices = {{ {REMOTE} = 0.25 }}
ping_seconds = 3
"""


class Cluster:
    def __init__(self, root: Path, dsn: str, schema: str, remote: A2AServer) -> None:
        self.root = root
        self.remote = remote
        self.dsn = dsn
        self.workspace = root / "shared-workspace"
        self.workspace.mkdir(parents=True)
        key_file = root / "approval.key"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")},
            "TOOLANG_PG_DSN": dsn,
        }
        self.homes = []
        for i in range(NODES):
            home = root / f"node{i}"
            home.mkdir()
            (home / "toolang.toml").write_text(
                node_config(schema, self.workspace, key_file, remote.url)
            )
            (home / "agents" / "relay").mkdir(parents=True)
            (home / "agents" / "relay" / "AGENT.md").write_text(RELAY)
            self.homes.append(home)
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * NODES
        self.kills = 0

    def start(self, i: int) -> None:
        log = (self.homes[i] / "node.log").open("ab")
        self.procs[i] = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run"],
            cwd=self.homes[i],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        self.kills += 1

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            if proc is not None:
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)

    def produce(self, i: int, count: int) -> subprocess.Popen[str]:
        args = [str(self.homes[i]), f"c{i}", str(count), str(ASK_EVERY), REMOTE]
        return subprocess.Popen(
            [sys.executable, "-c", PRODUCER, *args],
            env=self.env,
            stderr=subprocess.PIPE,
            text=True,
        )

    def add_task(self, i: int, n: int) -> None:
        mark = f"t{i}-{n}"
        command = json.dumps({"command": f"sleep 0.2; echo {mark} >> marks.txt"})
        args = ["tasks", "add", f"task {mark}", "--body", f"/tool exec_run {command}"]
        done = subprocess.run(
            [sys.executable, "-m", "toolang_core", *args, "--ref", mark],
            cwd=self.homes[i],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    def cli(self, i: int, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.homes[i],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def submit(self, i: int, thread: str, text: str) -> str:
        script = (
            "import sys\nfrom pathlib import Path\n"
            "from toolang_core import NewTurnRequest, Runtime, load_config\n"
            "inbox = Runtime.from_config(load_config(Path(sys.argv[1]) / 'toolang.toml'))"
            ".open_inbox()\n"
            "print(inbox.submit(NewTurnRequest(source='chat', thread_id=sys.argv[2], "
            "input=sys.argv[3])).id)\n"
            "inbox.store.close()\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(self.homes[i]), thread, text],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()

    def logs(self) -> str:
        return "\n".join((h / "node.log").read_text(errors="replace")[-3000:] for h in self.homes)


@pytest.fixture
def cluster(tmp_path, toolang_pg_dsn, toolang_pg_schema):
    with A2AServer(REMOTE) as remote:
        started = Cluster(tmp_path, toolang_pg_dsn, toolang_pg_schema, remote)
        yield started
        started.stop_all()


def rows(dsn: str, schema: str, sql: str) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql.format(s=schema)).fetchall()


def test_three_nodes_lose_nothing_and_repeat_no_side_effect_while_nodes_are_killed(
    cluster, toolang_pg_dsn, toolang_pg_schema
):
    phases = [("start", time.monotonic())]  # how long each part took, in the summary
    for i in range(NODES):
        cluster.start(i)

    def chat_requests() -> int:
        return rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            "SELECT count(*) FROM {s}.turn_requests WHERE source = 'chat' AND NOT meta ? 'ask'",
        )[0][0]

    # Traffic through every node's home while the chaos runs.
    producers = [cluster.produce(i, CHATS_PER_NODE) for i in range(NODES)]
    tasks = threading.Thread(
        target=lambda: [
            cluster.add_task(n % NODES, n // NODES) for n in range(TASKS_PER_NODE * NODES)
        ]
    )
    tasks.start()
    rng = random.Random(48)
    for _ in range(KILLS):
        time.sleep(KILL_EVERY * rng.uniform(0.6, 1.0))
        victim = rng.randrange(NODES)
        cluster.kill(victim)
        time.sleep(rng.uniform(0.2, 1.0))
        cluster.start(victim)
    for producer in producers:
        _, err = producer.communicate(timeout=300)
        assert producer.returncode == 0, err
    tasks.join(600)
    assert cluster.kills == KILLS
    phases.append(("chaos", time.monotonic()))
    assert chat_requests() == NODES * CHATS_PER_NODE

    # Every request ends (no node is killed any more).
    def unsettled() -> int:
        return rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            "SELECT count(*) FROM {s}.turn_requests WHERE status NOT IN "
            "('completed', 'failed', 'canceled', 'dropped', 'steered')",
        )[0][0]

    def status_of(turn_id: str) -> str:
        return rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            f"SELECT status FROM {{s}}.turn_requests WHERE id = '{turn_id}'",
        )[0][0]

    def tasks_handed() -> int:
        return rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            "SELECT count(*) FROM {s}.turn_requests WHERE source = 'task'",
        )[0][0]

    wait_for(lambda: tasks_handed() >= TASKS_PER_NODE * NODES, 300, "every task handed over")
    try:
        wait_for(lambda: unsettled() == 0, 600, "every request to end")
    except AssertionError:
        raise AssertionError(f"requests left: {unsettled()}\n{cluster.logs()}") from None
    cluster.stop_all()
    phases.append(("settle", time.monotonic()))

    requests = rows(
        toolang_pg_dsn,
        toolang_pg_schema,
        "SELECT id, source, status, meta, input FROM {s}.turn_requests "
        "WHERE source IN ('chat', 'task')",
    )
    doubted = {
        turn_id
        for (turn_id,) in rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            "SELECT DISTINCT turn_id FROM {s}.turn_steps WHERE data ? 'in_doubt'",
        )
    }
    expected = {f"c{i}-{n}" for i in range(NODES) for n in range(CHATS_PER_NODE)}
    expected |= {f"t{i}-{n}" for i in range(NODES) for n in range(TASKS_PER_NODE)}
    found: dict[str, tuple[str, str]] = {}
    asks: dict[str, tuple[str, str]] = {}
    for turn_id, source, status, meta, text in requests:
        if "ask" in (meta or {}):
            assert meta["ask"] not in asks, f"ask {meta['ask']} was handed over twice"
            asks[meta["ask"]] = (turn_id, status)
            continue
        mark = (meta or {}).get("mark") if source == "chat" else text.split("echo ")[1].split()[0]
        assert mark not in found, f"{mark} was handed over twice: {found[mark]}, {turn_id}"
        found[mark] = (turn_id, status)
    assert set(found) == expected, "requests lost"
    asked = {f"c{i}-{n}" for i in range(NODES) for n in range(0, CHATS_PER_NODE, ASK_EVERY)}
    assert set(asks) == asked, "asks lost"
    marks = Counter((cluster.workspace / "marks.txt").read_text().split())
    repeated = {mark: n for mark, n in marks.items() if n > 1}
    assert repeated == {}, f"side effects repeated: {repeated}\n" + "\n".join(
        f"{mark}: {step}"
        for mark in repeated
        for step in rows(
            toolang_pg_dsn,
            toolang_pg_schema,
            "SELECT attempt, seq, kind, status, idempotency_key, data::text FROM {s}.turn_steps "
            f"WHERE turn_id = '{found[mark][0]}' ORDER BY seq",
        )
    )
    missing = {mark for mark in expected if marks[mark] == 0}
    unexplained = {
        mark
        for mark in missing
        if found[mark][0] not in doubted and found[mark][1] == TurnStatus.COMPLETED.value
    }
    assert unexplained == set(), f"completed without their side effect or a doubt: {unexplained}"

    chores = rows(
        toolang_pg_dsn,
        toolang_pg_schema,
        "SELECT meta FROM {s}.turn_requests WHERE source = 'chore'",
    )
    occurrences = Counter(json.dumps(m["chore"]["occurrence"]) for (m,) in chores)
    assert chores, "no chore fired"
    assert {o: n for o, n in occurrences.items() if n > 1} == {}
    phases.append(("check", time.monotonic()))
    # What node 0 remembers, node 1 recalls in its next turn (each alone on the store).
    cluster.start(0)
    written = cluster.submit(0, "chat:memory-a", "my locker code is quetzal-4471")
    wait_for(lambda: status_of(written) == "completed", 300, "the remembering turn")
    cluster.stop_all()
    cluster.start(1)
    asked = cluster.submit(1, "chat:memory-b", "what is my quetzal locker code?")
    wait_for(lambda: status_of(asked) == "completed", 300, "the recalling turn")
    cluster.stop_all()
    (recall,) = rows(
        toolang_pg_dsn,
        toolang_pg_schema,
        f"SELECT data::text FROM {{s}}.turn_steps WHERE turn_id = '{asked}' "
        "AND kind = 'memory_recall'",
    )
    assert "quetzal-4471" in recall[0]
    phases.append(("memory", time.monotonic()))
    # Every node lists the same knowledge and prints the same agent pool (the commands
    # side by side: they only read).
    with ThreadPoolExecutor(2 * NODES) as commands:
        listed = commands.map(
            lambda i: cluster.cli(i, "knowledge", "list", "--json", "--limit", "500"), range(NODES)
        )
        printed = commands.map(lambda i: cluster.cli(i, "agents", "pool", "--json"), range(NODES))
        knowledge, pools = set(listed), set(printed)
    assert len(knowledge) == 1
    assert len(pools) == 1, "\n".join(pools)
    # The remote agent's figures are what the traffic did: each ask_agent call that
    # completed (every ask turn made one, whichever node ran it and however often a
    # kill made another node resume it) counted once; its price, its pings stored.
    calls = rows(
        toolang_pg_dsn,
        toolang_pg_schema,
        "SELECT s.turn_id, s.data->'result' FROM {s}.turn_steps s "
        "JOIN {s}.turn_requests r ON r.id = s.turn_id AND r.meta ? 'ask' "
        "WHERE s.kind = 'tool_call' AND s.status <> 'intent' "
        "AND s.data->'call'->>'name' = 'ask_agent'",
    )
    assert sorted(turn for turn, _ in calls) == sorted(t for t, _ in asks.values())
    assert {status for _, status in asks.values()} == {TurnStatus.COMPLETED.value}
    failed = [result for _, result in calls if not result["ok"]]
    assert failed == [], f"remote calls failed: {failed}"
    assert {f"ask {mark}" for mark in asks} == set(cluster.remote.messages)
    (polyglot,) = (m for m in json.loads(pools.pop())["members"] if m["name"] == REMOTE)
    assert polyglot["total_calls"] == len(asks)
    assert polyglot["success_rate"] == 1.0 and polyglot["health"] == "healthy"
    assert polyglot["avg_latency_ms"] > 0 and polyglot["trust"] > 0.5
    assert (polyglot["price_per_call"], polyglot["currency"]) == (0.25, "USD")
    assert polyglot["heartbeat"] == "ok", "no node stored a ping of the remote agent"

    phases.append(("lists", time.monotonic()))
    retried = rows(
        toolang_pg_dsn,
        toolang_pg_schema,
        "SELECT count(*) FROM {s}.turn_requests WHERE attempt > 1",
    )[0][0]
    print(
        f"chaos: {cluster.kills} kills, {len(found)} requests, {retried} taken over after a "
        f"kill, {len(doubted)} with a call in doubt, {len(missing)} marks missing, "
        f"{len(chores)} chore turns, {len(asks)} remote calls "
        f"({len(cluster.remote.messages)} messages received); seconds: "
        + ", ".join(f"{n} {t - s:.0f}" for (_, s), (n, t) in itertools.pairwise(phases))
    )
