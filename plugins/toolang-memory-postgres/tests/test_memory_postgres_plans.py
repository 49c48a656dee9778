"""Plans the scope's statements get once PostgreSQL has the table's statistics.

``agent_id = ? AND coalesce(owner, '') = ? AND owner IS NOT DISTINCT FROM ?`` was
estimated at one row whatever the scope held (``IS NOT DISTINCT FROM`` has no
estimate of its own), so PostgreSQL read the whole table and sorted it for a listing of
20 entries, and a cap probed the uses of each entry by reading the uses' table: once
autovacuum had analyzed 100,000 entries, a listing took 0.6 s and a capped write 0.5 s.
These tests read the plans (``EXPLAIN``) after ``ANALYZE``, on two agents' entries.
"""

from __future__ import annotations

import json

import pytest

from toolang_core.memory import (
    MemoryEntry,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryWriteBatch,
    kit,
)
from toolang_memory_postgres import uses
from toolang_memory_postgres.schema import ENTRIES, ITEMS, USES
from toolang_memory_postgres.statements import LIVE, SCOPE

PER_AGENT = 3000


@pytest.fixture
def analyzed(memory_factory, pg, entries_schema):
    """Two agents' entries (a few recalled), with the tables analyzed; a connection on
    the plugin's schema."""
    plugin = memory_factory()
    for agent in ("a", "b"):
        for start in range(0, PER_AGENT, 500):
            entries = tuple(
                MemoryEntry(text=f"note {n} of {agent}") for n in range(start, start + 500)
            )
            plugin.remember_now(MemoryWriteBatch(f"toolang://h/agents/{agent}", agent, entries))
    pg.execute(f'SET search_path TO "{entries_schema}"')
    pg.execute(
        f"INSERT INTO {USES} (id, use_count, last_used_at) "
        f"SELECT id, 1, updated_at FROM {ENTRIES} WHERE id % 10 = 0"
    )
    pg.execute(f"ANALYZE {ENTRIES}")
    pg.execute(f"ANALYZE {USES}")
    return pg


def plan(pg, sql: str, params: list) -> str:
    """The plan of ``sql`` (``?`` parameters) as JSON text."""
    rows = pg.execute("EXPLAIN (FORMAT JSON) " + sql.replace("?", "%s"), params).fetchall()
    return json.dumps(rows[0][0])


def scans(node, relation: str) -> list[tuple[str, str | None]]:
    """How the plan ``node`` (parsed) reads ``relation``: each scan's type and index."""
    found = []
    if isinstance(node, list):
        for child in node:
            found += scans(child, relation)
    elif isinstance(node, dict):
        if node.get("Relation Name") == relation:
            found.append((node["Node Type"], node.get("Index Name")))
        for value in node.values():
            found += scans(value, relation)
    return found


def indexes(node) -> set[str]:
    """The indexes the plan ``node`` (parsed) reads."""
    if isinstance(node, list):
        return set().union(*(indexes(child) for child in node))
    if isinstance(node, dict):
        found = {node["Index Name"]} if "Index Name" in node else set()
        return found.union(*(indexes(value) for value in node.values()))
    return set()


@pytest.mark.parametrize("owner", [None, "ada"])
def test_a_listing_reads_the_newest_entries_off_the_scope_index(analyzed, owner):
    request = MemoryListRequest(agent_id="a", owner=owner, limit=20)
    sql, params = kit.list_statement(request, ITEMS, (SCOPE, ["a", owner, owner]), LIVE, 0.0)
    text = plan(analyzed, sql, params)
    assert "Seq Scan" not in text, text
    assert f"{ENTRIES}_scope_updated" in text


def test_a_cap_reads_the_least_used_by_probes_not_by_reading_every_entry(analyzed):
    scope = ["a", None, None]
    never = plan(analyzed, uses._NEVER_USED, [*scope, 5])
    assert "Seq Scan" not in never and f"{ENTRIES}_scope_updated" in never, never
    used = plan(analyzed, uses._LEAST_USED, [*scope, 5])
    # each recalled entry probes its entry by id: the entries are never read whole
    assert scans(json.loads(used), ENTRIES) == [("Index Scan", f"{ENTRIES}_pkey")], used


def test_a_cap_keeps_the_limit_on_two_agents_entries(memory_factory, analyzed):
    plugin = memory_factory(max_entries=PER_AGENT - 10)
    plugin.remember_now(MemoryWriteBatch("toolang://h/agents/a", "a", (MemoryEntry(text="new"),)))
    counts = dict(analyzed.execute(f"SELECT agent_id, count(*) FROM {ENTRIES} GROUP BY 1"))
    assert counts == {"a": PER_AGENT - 10, "b": PER_AGENT}
    texts = {r[0] for r in analyzed.execute(f"SELECT text FROM {ENTRIES} WHERE agent_id = 'a'")}
    assert "new" in texts
    # the oldest never-recalled went: notes 0..10 of a, less the recalled ones among them
    assert "note 1 of a" not in texts


def test_a_recall_of_a_rare_word_reads_its_matches_off_the_full_text_index(
    memory_factory, analyzed
):
    """The scope holds half the table: its matches of ``17`` are read off the GIN index
    and checked, where PostgreSQL read the whole scope's index to spare fetching the
    other agent's match (a bitmap of every entry of the scope), or the table from its
    start for the counts of common words."""
    plugin = memory_factory(ranked_matches=100)
    statements: list[tuple[str, list]] = []
    connection = plugin._connection
    opened = connection.database()

    class Spy:
        def __getattr__(self, name):
            return getattr(opened, name)

        def execute(self, sql, params=()):
            statements.append((sql, list(params)))
            return opened.execute(sql, params)

    connection._db = Spy()
    recalled = plugin.recall_now(MemoryRecallRequest("toolang://h/agents/a", "a", "note 17"))
    assert recalled.diagnostics["mode"] == "rare-words"
    assert [i.text for i in recalled.items] == ["note 17 of a"]
    full_text = [(s, p) for s, p in statements if "search @@ to_tsquery" in s]
    assert len(full_text) == 2  # the words' counts, then the matches ranked
    for sql, params in full_text:
        with analyzed.transaction():
            analyzed.execute("SET LOCAL enable_seqscan = off")
            text = plan(analyzed, sql, params)
        assert "Seq Scan" not in text, text
        assert indexes(json.loads(text)) == {f"{ENTRIES}_search"}, text
