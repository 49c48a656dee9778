"""Real `toolang run` processes ("nodes") sharing one PostgreSQL schema, and an audit of
every status change made in it (recorded by a trigger with the database's clock)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import psycopg

TERMINAL = ("completed", "failed", "canceled", "dropped", "steered")
ACTIVE = ("running", "awaiting_approval", "canceling")


def node_config(
    schema: str,
    *,
    groups: Mapping[str, Mapping[str, int]] | None = None,
    key_file: Path | None = None,
    **runtime: Any,
) -> str:
    settings = {
        "executor": "echo",
        "lease_seconds": 2.0,
        "poll_seconds": 0.2,
        "shutdown_grace_seconds": 0.5,
        "max_attempts": 5,
        **runtime,
    }
    lines = [
        "[store]",
        'backend = "postgres"',
        "[plugins.store-postgres]",
        'dsn = "${TOOLANG_PG_DSN}"',
        f'schema = "{schema}"',
        "[log]",
        'format = "json"',
        'level = "info"',
        "[runtime]",
        *(f"{k} = {json.dumps(v)}" for k, v in settings.items()),
        "[scheduler]",
        "max_running = 16",
    ]
    for group, keys in (groups or {}).items():
        lines += [f"[scheduler.groups.{group}]", *(f"{k} = {v}" for k, v in keys.items())]
    if key_file is not None:  # every node of one store seals decisions with one key
        lines += ["[approvals]", f"key_file = {json.dumps(str(key_file))}"]
    return "\n".join(lines) + "\n"


def node_env(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(TOOLANG_PG_DSN=dsn, TOOLANG_LOAD_PLUGINS="store-postgres")
    return env


@attrs.define
class Node:
    name: str
    home: Path
    proc: subprocess.Popen[bytes]
    log: Path

    def events(self, event: str | None = None) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and (event is None or record.get("event") == event):
                found.append(record)
        return found


class Nodes:
    """Starts nodes (each with its own home, as on its own machine) and always stops
    them, resuming stopped ones first."""

    def __init__(self, root: Path, dsn: str, schema: str) -> None:
        self.root = root
        self.dsn = dsn
        self.schema = schema
        self.started: list[Node] = []

    @property
    def key_file(self) -> Path:
        """The approval key every node shares (as copied to each machine)."""
        return self.root / "approval.key"

    def home(self, name: str, **config: Any) -> Path:
        home = self.root / name
        home.mkdir(parents=True, exist_ok=True)
        config.setdefault("key_file", self.key_file)
        (home / "toolang.toml").write_text(node_config(self.schema, **config))
        return home

    def start(self, name: str, **config: Any) -> Node:
        home = self.home(name, **config)
        log = home / "node.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
                cwd=home,
                env=node_env(self.dsn),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        node = Node(name, home, proc, log)
        self.started.append(node)
        return node

    def cli(self, name: str, *args: str, **config: Any) -> subprocess.CompletedProcess[str]:
        """Run another `toolang` command as its own node (its own home)."""
        return subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.home(name, **config),
            env=node_env(self.dsn),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def stop(self, node: Node, timeout: float = 60) -> None:
        if node.proc.poll() is None:
            node.proc.send_signal(signal.SIGCONT)
            node.proc.send_signal(signal.SIGTERM)
            try:
                node.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                node.proc.kill()
                node.proc.wait(10)

    def stop_all(self) -> None:
        for node in self.started:
            self.stop(node)


AUDIT_SQL = """
CREATE TABLE {s}.audit (
    id text, thread text, grp text, old text, new text, attempt integer, owner text,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION {s}.audit_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.audit (id, thread, grp, old, new, attempt, owner)
    VALUES (NEW.id, NEW.thread_id, NEW.thread_group, OLD.status, NEW.status, NEW.attempt,
            COALESCE(NEW.lease_owner, OLD.lease_owner));
    RETURN NULL;
END $$;
CREATE TRIGGER audit_status AFTER UPDATE OF status ON {s}.turn_requests
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION {s}.audit_status();
"""


@attrs.frozen
class Change:
    id: str
    thread: str
    group: str
    old: str
    new: str
    attempt: int
    owner: str | None
    at: float


def install_audit(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(AUDIT_SQL.format(s=f'"{schema}"'))


def audit(dsn: str, schema: str) -> list[Change]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            f"SELECT id, thread, grp, old, new, attempt, owner, extract(epoch FROM at)::float8 "
            f'FROM "{schema}".audit ORDER BY at'
        ).fetchall()
    return [Change(*row) for row in rows]


@attrs.frozen
class Span:
    """One stretch during which a turn was active (started → left the active states)."""

    id: str
    thread: str
    group: str
    start: float
    end: float


def spans(changes: Iterable[Change]) -> list[Span]:
    opened: dict[str, Change] = {}
    found = []
    for change in changes:
        if change.old == "queued" and change.new in ACTIVE:
            opened[change.id] = change
        elif change.old in ACTIVE and change.new not in ACTIVE:
            start = opened.pop(change.id)
            found.append(Span(change.id, change.thread, change.group, start.at, change.at))
    assert not opened, f"turns still active: {sorted(opened)}"
    return found


def thread_overlaps(found: Iterable[Span]) -> list[tuple[Span, Span]]:
    by_thread: dict[str, list[Span]] = defaultdict(list)
    for span in found:
        by_thread[span.thread].append(span)
    overlaps = []
    for runs in by_thread.values():
        runs.sort(key=lambda s: s.start)
        overlaps += [(a, b) for a, b in itertools.pairwise(runs) if b.start < a.end]
    return overlaps


def peak_per_group(found: Iterable[Span]) -> dict[str, int]:
    """The most turns of each group active at one instant (a sweep; at equal times an
    end counts before a start)."""
    events: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for span in found:
        events[span.group] += [(span.start, 1), (span.end, -1)]
    peaks = {}
    for group, marks in events.items():
        marks.sort()
        level = peak = 0
        for _, step in marks:
            level += step
            peak = max(peak, level)
        peaks[group] = peak
    return peaks
