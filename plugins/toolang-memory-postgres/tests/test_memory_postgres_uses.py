"""Use counts in the PostgreSQL plugin: written behind (never a commit per recall, the
counts of several nodes adding up), a bounded boost in ranking, and pruning past
``max_entries`` that forgets the longest unused first."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable

import psycopg
import pytest

from toolang_core.memory import MemoryEntry, MemoryForget, MemoryWriteBatch
from toolang_core.memory.kit import DAY
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_postgres import uses


@pytest.fixture
def driver(memory_factory):
    """``driver(clock=None, **settings)``: a plugin object (a node) driven as the runtime does."""
    caller = MemoryCaller()

    def make(clock=None, **settings) -> MemoryDriver:
        return MemoryDriver(memory_factory(clock, **settings), caller)

    yield make
    caller.close()


@pytest.fixture
def committed(pg, entries_schema):
    """``committed(agent)``: the use counts another session reads: what was committed."""

    def read(agent: str) -> dict[str, int]:
        rows = pg.execute(
            f'SELECT key, use_count FROM "{entries_schema}".memory_items WHERE agent_id = %s',
            [agent],
        )
        return dict(rows.fetchall())

    return read


def test_uses_are_written_behind_committed_by_the_next_write_and_add_up_across_nodes(
    driver, committed
):
    node_a, node_b = driver(), driver()
    node_a.save("agent-a", "the gryphel nests on the north tower", key="gryphel")
    for expected in (1, 2, 3):
        item = node_a.recall("agent-a", "gryphel").items[0]
        assert (item.use_count, item.last_used_at is not None) == (expected, True)
    assert committed("agent-a") == {"gryphel": 0}  # no recall committed anything
    assert node_a.listed("agent-a")[0].use_count == 3  # the pending ones are reported
    node_b.recall("agent-a", "gryphel")  # another node counts its own
    node_a.save("agent-a", "a later note", key="later")  # the turn's write takes them along
    assert committed("agent-a") == {"gryphel": 3, "later": 0}
    node_b.call(node_b.plugin.close)  # close commits what is pending
    assert committed("agent-a") == {"gryphel": 4, "later": 0}
    assert {i.key: i.use_count for i in driver().listed("agent-a")} == {"gryphel": 4, "later": 0}
    # forget and health write them too
    node_a.recall("agent-a", "gryphel")
    node_a.forget("agent-a", keys=["later"])
    assert committed("agent-a") == {"gryphel": 5}
    node_a.recall("agent-a", "gryphel")
    assert node_a.health().status == "ok"
    assert committed("agent-a") == {"gryphel": 6}

    # past pending_uses waiting entries the recall commits them itself, in one go
    bounded = driver(pending_uses=2)
    bounded.save("agent-b", "gryphel one", key="one")
    bounded.save("agent-b", "gryphel two", key="two")
    bounded.save("agent-b", "plimsoll three", key="three")
    bounded.recall("agent-b", "plimsoll")  # one entry pending: under the bound
    assert committed("agent-b") == {"one": 0, "two": 0, "three": 0}
    bounded.recall("agent-b", "gryphel")  # three pending: committed at once
    assert committed("agent-b") == {"one": 1, "two": 1, "three": 1}


def test_uses_break_a_near_tie_never_lift_a_poor_match_and_decide_pruning(driver, clock):
    memory = driver(clock)
    # two equally good matches for "gryphel tower": the newer one wins on recency alone
    memory.save("agent-a", "gryphel tower stories", key="used")
    clock.now += 1
    memory.save("agent-a", "gryphel tower legends", key="fresh")
    # and a poor match: one word of the query among many others
    memory.save("agent-a", "gryphel " + " ".join(f"filler{n}" for n in range(60)), key="poor")
    assert memory.recall("agent-a", "gryphel tower").items[0].key == "fresh"
    for _ in range(20):  # "used" is recalled often, on its own
        memory.recall("agent-a", "stories")
    ranked = [i.key for i in memory.recall("agent-a", "gryphel tower").items]
    assert ranked[0] == "used"
    assert ranked[-1] == "poor"
    for _ in range(40):
        memory.recall("agent-a", "filler7")  # the poor match used more than any
    assert [i.key for i in memory.recall("agent-a", "gryphel tower").items][-1] == "poor"
    # use_weight = 0 ranks as before
    unweighted = driver(clock, use_weight=0.0)
    assert unweighted.recall("agent-a", "gryphel tower").items[0].key == "fresh"

    # max_entries: a write past it forgets the longest unused (by last use, or write)
    capped = driver(clock, max_entries=3)
    for n, key in enumerate(("old-used", "old-unused", "newer-unused")):
        clock.now += DAY
        capped.save("agent-c", f"note {key} word{n}", key=key)
    capped.recall("agent-c", "word0")  # old-used has been recalled
    clock.now += DAY
    capped.save("agent-c", "note newest", key="newest")  # one over: one goes
    assert sorted(i.key for i in capped.listed("agent-c")) == ["newer-unused", "newest", "old-used"]
    capped.save("agent-c", "another owner's", key="x", owner="ann")  # its own scope
    assert len(capped.listed("agent-c")) == 3
    assert capped.texts("agent-c", "unused") == ["note newer-unused word2"]


def test_a_full_memory_whose_entries_are_recalled_keeps_what_is_new(driver, clock):
    """At the cap a new entry is the most recently written, not the first to go for
    never having been recalled (as memory-sqlite: a full memory learnt nothing more)."""
    capped = driver(clock, max_entries=3)
    for n in range(1, 8):
        clock.now += 60
        capped.recall("agent-d", "otter number")
        clock.now += 1
        capped.save("agent-d", f"the otter number {n} is {7 * n}")
    assert capped.listed_texts("agent-d") == [
        "the otter number 7 is 49",
        "the otter number 6 is 42",
        "the otter number 5 is 35",
    ]


def test_m003_moves_the_counts_to_a_table_of_their_own_and_they_go_with_their_entries(
    toolang_pg_dsn, toolang_pg_schema, entries_schema, memory_factory, pg
):
    """m003 copies the counts of a table written before it (two columns of the entries,
    kept, so a node of the earlier version still running keeps working); counting a use
    then writes ``memory_uses`` only; deleting an entry, however, deletes its uses."""
    from toolang_core import PluginMigrations
    from toolang_memory_postgres import NAME
    from toolang_memory_postgres.schema import MIGRATIONS
    from toolang_store_postgres.plugin_tables import PostgresPluginDatabases

    before = PluginMigrations(NAME)  # the plugin's migrations up to m002
    for name, step in MIGRATIONS.steps:
        if name == "m003_uses_of_their_own":
            break
        before(name=name)(step)
    old = PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)
    db = old.open(NAME, before)
    columns = "agent_id, origin, kind, text, language, created_at, updated_at, key"
    with db.transaction():
        for key, count, used in (("gryphel", 5, 900000.0), ("plimsoll", 0, None)):
            db.execute(
                f"INSERT INTO memory_entries ({columns}, use_count, last_used_at) "
                "VALUES ('agent-a', 'tool', 'note', ?, 'english', 1.0, 1.0, ?, ?, ?)",
                [f"the {key} line", key, count, used],
            )
    db.close()
    old.close()

    caller = MemoryCaller()
    try:
        memory = MemoryDriver(memory_factory(), caller)
        assert {i.key: i.use_count for i in memory.listed("agent-a")} == {
            "gryphel": 5,
            "plimsoll": 0,
        }
        table = f'"{entries_schema}"'
        assert pg.execute(f"SELECT use_count FROM {table}.memory_uses").fetchall() == [(5,)]
        # a node of the earlier version still writes the old columns: it keeps working
        pg.execute(f"UPDATE {table}.memory_entries SET use_count = 7 WHERE key = 'plimsoll'")
        assert {i.key: i.use_count for i in memory.listed("agent-a")}["plimsoll"] == 0

        memory.recall("agent-a", "plimsoll")
        memory.save("agent-a", "a later note", key="later")  # commits the pending use
        old_versions = pg.execute(
            f"SELECT xmin::text FROM {table}.memory_entries WHERE key = 'plimsoll'"
        ).fetchone()
        memory.recall("agent-a", "plimsoll")
        memory.save("agent-a", "another note", key="another")
        # the entry's row was not rewritten for its use: the count is in memory_uses
        assert (
            pg.execute(
                f"SELECT xmin::text FROM {table}.memory_entries WHERE key = 'plimsoll'"
            ).fetchone()
            == old_versions
        )
        assert pg.execute(
            f"SELECT u.use_count FROM {table}.memory_uses u "
            f"JOIN {table}.memory_entries e ON e.id = u.id WHERE e.key = 'plimsoll'"
        ).fetchone() == (2,)
        memory.forget("agent-a", keys=["gryphel", "plimsoll"])
        assert pg.execute(f"SELECT count(*) FROM {table}.memory_uses").fetchone() == (0,)
    finally:
        caller.close()


def _at_once(*calls: Callable[[], object], timeout: float = 120) -> list[BaseException]:
    """Run each of ``calls`` in a thread of its own, all at once, until all have ended;
    what they raised."""
    failed: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            call()
        except BaseException as exc:  # reported to the test
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), "a call never ended"
    return failed


def _a_session_waits_on_a_lock(dsn: str) -> None:
    """Until a session of the plugin waits on a lock (the other node's turn to move)."""
    deadline = time.monotonic() + 30
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND application_name = 'toolang:memory-postgres'"
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "no session came to wait on a lock"
            time.sleep(0.01)


def test_two_nodes_counting_an_entry_one_of_them_deletes_wait_for_each_other(
    memory_factory, toolang_pg_dsn, pg, entries_schema, monkeypatch
):
    """Node B forgets an entry (its transaction counts its pending use of it, then
    deletes it) while node A, which recalled it too, writes a note (counting its use):
    A waits at the entry until B commits, then leaves it out — no deadlock, no count
    left behind without its entry. (Held at the uses, not the entry, A deadlocked
    with B's delete.)"""
    caller_a, caller_b = MemoryCaller(), MemoryCaller()
    try:
        a = MemoryDriver(memory_factory(), caller_a)
        b = MemoryDriver(memory_factory(), caller_b)
        a.save("agent-a", "the gryphel nests on the north tower", key="gryphel")
        assert a.recall("agent-a", "gryphel").items and b.recall("agent-a", "gryphel").items
        real_flush = uses.flush
        b_counted = threading.Event()
        who: dict[int, str] = {}

        def flush(db, taken):  # B counts first and holds on; then A counts, then B deletes
            node = who.get(threading.get_ident())
            if node == "a":
                assert b_counted.wait(30)
            real_flush(db, taken)
            if node == "b":
                b_counted.set()
                _a_session_waits_on_a_lock(toolang_pg_dsn)

        monkeypatch.setattr(uses, "flush", flush)

        def as_node(node: str, call: Callable[[], object]) -> Callable[[], object]:
            def called() -> object:
                who[threading.get_ident()] = node
                return call()

            return called

        note = MemoryWriteBatch(
            agent_uri="toolang:agent/agent-a",
            agent_id="agent-a",
            entries=(MemoryEntry(text="a later note"),),
        )
        forget = MemoryForget(agent_id="agent-a", keys=("gryphel",))
        failed = _at_once(
            as_node("b", lambda: b.plugin.forget(forget)),
            as_node("a", lambda: a.plugin.remember_now(note)),
        )
        assert not failed, failed
        table = f'"{entries_schema}"'
        assert pg.execute(
            f"SELECT count(*) FROM {table}.memory_uses u WHERE NOT EXISTS "
            f"(SELECT 1 FROM {table}.memory_entries e WHERE e.id = u.id)"
        ).fetchone() == (0,)
    finally:
        caller_a.close()
        caller_b.close()


def test_the_uses_counted_by_nodes_at_once_all_add_up(memory_factory, pg, entries_schema):
    seed_caller = MemoryCaller()
    seed = MemoryDriver(memory_factory(), seed_caller)
    for n in range(20):
        seed.save("agent-a", f"a common word, number {n}", key=f"k{n}")
    seed_caller.close()
    recalled = [0, 0, 0]

    def node(n: int, plugin) -> None:
        caller = MemoryCaller()
        memory = MemoryDriver(plugin, caller)
        try:
            for turn in range(30):
                recalled[n] += len(memory.recall("agent-a", "common", max_items=20).items)
                memory.save("agent-a", f"note {n} {turn}")
        finally:
            caller.close()

    plugins = [memory_factory() for _ in range(3)]
    failed = _at_once(*(functools.partial(node, n, plugin) for n, plugin in enumerate(plugins)))
    assert not failed, failed
    table = f'"{entries_schema}"'
    assert pg.execute(f"SELECT sum(use_count) FROM {table}.memory_uses").fetchone() == (
        sum(recalled),
    )
