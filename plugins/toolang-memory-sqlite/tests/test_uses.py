"""Use counts in the SQLite plugin: written behind (never a commit per recall), a bounded
boost in ranking, and pruning past ``max_entries`` that forgets the longest unused first."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from toolang_core.memory.kit import DAY
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.memory import SQLiteMemory


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def driver(tmp_path, clock=None, **settings) -> MemoryDriver:
    plugin = SQLiteMemory(
        tmp_path / "memory.db", MemorySQLiteSettings(**settings), clock=clock or Clock()
    )
    return MemoryDriver(plugin, MemoryCaller())


def committed_uses(tmp_path) -> dict[str, int]:
    """The use counts another connection reads: what was committed."""
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        return dict(conn.execute("SELECT key, use_count FROM memory_items").fetchall())


def test_uses_are_committed_by_the_next_write_not_by_the_recall(tmp_path):
    memory = driver(tmp_path)
    memory.save("agent-a", "the gryphel nests on the north tower", key="gryphel")
    changes = sqlite3.connect(tmp_path / "memory.db")
    before = changes.execute("PRAGMA data_version").fetchone()
    for expected in (1, 2, 3):
        assert memory.recall("agent-a", "gryphel").items[0].use_count == expected
    # no recall committed anything: the file is as the write left it
    assert changes.execute("PRAGMA data_version").fetchone() == before
    assert committed_uses(tmp_path) == {"gryphel": 0}
    assert memory.listed("agent-a")[0].use_count == 3  # the pending ones are reported
    memory.save("agent-a", "a later note", key="later")  # the turn's write takes them along
    assert committed_uses(tmp_path) == {"gryphel": 3, "later": 0}
    memory.call(memory.plugin.close)


def settled(memory: MemoryDriver) -> None:
    """Wait for the jobs handed to the plugin's database thread so far."""
    memory.plugin._own_thread().submit(lambda: None).result(timeout=10)


def held(memory: MemoryDriver) -> threading.Event:
    """Keep the plugin's database thread busy until the returned event is set."""
    release, started = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(10)

    memory.plugin._own_thread().post(hold)
    assert started.wait(10)
    return release


def test_pending_uses_past_the_bound_are_committed_by_the_database_thread(tmp_path):
    memory = driver(tmp_path, pending_uses=2)
    memory.save("agent-a", "gryphel one", key="one")
    memory.save("agent-a", "gryphel two", key="two")
    memory.save("agent-a", "plimsoll three", key="three")
    memory.recall("agent-a", "plimsoll")  # one entry pending: under the bound
    settled(memory)
    assert committed_uses(tmp_path) == {"one": 0, "two": 0, "three": 0}
    release = held(memory)
    # three pending: the recall answers without committing them; the thread commits
    # them after the jobs handed to it before
    assert len(memory.recall("agent-a", "gryphel").items) == 2
    assert committed_uses(tmp_path) == {"one": 0, "two": 0, "three": 0}
    release.set()
    settled(memory)
    assert committed_uses(tmp_path) == {"one": 1, "two": 1, "three": 1}
    # the next recalls count again from nothing pending
    memory.recall("agent-a", "plimsoll")
    settled(memory)
    assert committed_uses(tmp_path) == {"one": 1, "two": 1, "three": 1}
    memory.call(memory.plugin.close)


def test_close_commits_uses_whose_commit_the_thread_has_not_run(tmp_path):
    memory = driver(tmp_path, pending_uses=1)
    memory.save("agent-a", "the gryphel nests", key="gryphel")
    release, thread = held(memory), memory.plugin._own_thread()
    memory.recall("agent-a", "gryphel")  # its commit waits behind the held job
    memory.call(memory.plugin.close)
    assert committed_uses(tmp_path) == {"gryphel": 1}
    release.set()  # the handed-over commit finds nothing left to do
    thread.shutdown(wait=True)
    assert committed_uses(tmp_path) == {"gryphel": 1}


def test_close_commits_pending_uses(tmp_path):
    memory = driver(tmp_path)
    memory.save("agent-a", "the gryphel nests", key="gryphel")
    memory.recall("agent-a", "gryphel")
    memory.call(memory.plugin.close)
    assert committed_uses(tmp_path) == {"gryphel": 1}
    again = driver(tmp_path)
    assert again.listed("agent-a")[0].use_count == 1
    again.call(again.plugin.close)


def test_uses_break_a_near_tie_but_never_lift_a_poor_match(tmp_path):
    clock = Clock()
    memory = driver(tmp_path, clock)
    # two equally good matches for "gryphel tower": the older one wins on recency alone
    memory.save("agent-a", "gryphel tower stories", key="used")
    clock.now += 1
    memory.save("agent-a", "gryphel tower legends", key="fresh")
    # and a poor match: one word of the query among many others
    memory.save(
        "agent-a",
        "gryphel " + " ".join(f"filler{n}" for n in range(60)),
        key="poor",
    )
    assert memory.recall("agent-a", "gryphel tower").items[0].key == "fresh"
    for _ in range(20):  # "used" is recalled often, on its own
        memory.recall("agent-a", "stories")
    ranked = [i.key for i in memory.recall("agent-a", "gryphel tower").items]
    assert ranked[0] == "used"
    assert ranked[-1] == "poor"
    for _ in range(40):
        memory.recall("agent-a", "filler7")  # the poor match used more than any
    assert [i.key for i in memory.recall("agent-a", "gryphel tower").items][-1] == "poor"
    memory.call(memory.plugin.close)


def test_use_weight_zero_ranks_as_before(tmp_path):
    clock = Clock()
    memory = driver(tmp_path, clock, use_weight=0.0)
    memory.save("agent-a", "gryphel tower stories", key="used")
    clock.now += 1
    memory.save("agent-a", "gryphel tower legends", key="fresh")
    for _ in range(20):
        memory.recall("agent-a", "stories")
    assert memory.recall("agent-a", "gryphel tower").items[0].key == "fresh"
    memory.call(memory.plugin.close)


def test_max_entries_forgets_never_used_old_entries_first(tmp_path):
    clock = Clock()
    memory = driver(tmp_path, clock, max_entries=3)
    for n, key in enumerate(("old-used", "old-unused", "newer-unused")):
        clock.now += DAY
        memory.save("agent-a", f"note {key} word{n}", key=key)
    memory.recall("agent-a", "word0")  # old-used has been recalled
    clock.now += DAY
    memory.save("agent-a", "note newest", key="newest")  # one over: one goes
    assert sorted(i.key for i in memory.listed("agent-a")) == [
        "newer-unused",
        "newest",
        "old-used",
    ]
    memory.save("agent-a", "another agent's", key="x", owner="ann")  # its own scope
    assert len(memory.listed("agent-a")) == 3
    assert memory.texts("agent-a", "unused") == ["note newer-unused word2"]  # index kept in step
    memory.call(memory.plugin.close)


def test_a_file_of_the_wide_schema_keeps_its_counts_in_the_uses_table(tmp_path):
    """m004 copies the uses of a file written before it (two columns of the entries,
    kept) into ``memory_uses``."""
    from sqlite_utils import Database

    from toolang_memory_sqlite.schema import MIGRATIONS

    old = Database(tmp_path / "memory.db")
    MIGRATIONS.apply(old, stop_before="m004_uses_of_their_own")
    columns = "id, agent_id, origin, kind, text, created_at, updated_at, use_count, last_used_at"
    old.execute(
        f"INSERT INTO memory_entries ({columns}) VALUES "
        "(1, 'agent-a', 'tool', 'note', 'the gryphel nests', 1.0, 1.0, 5, 900000.0), "
        "(2, 'agent-a', 'tool', 'note', 'the plimsoll line', 1.0, 1.0, 0, NULL)"
    )
    old.execute(
        "INSERT INTO memory_fts (rowid, scope, body) VALUES "
        "(1, 'x', 'the gryphel nests'), (2, 'x', 'the plimsoll line')"
    )
    old.conn.commit()
    old.close()
    memory = driver(tmp_path)
    assert {i.text: i.use_count for i in memory.listed("agent-a")} == {
        "the gryphel nests": 5,
        "the plimsoll line": 0,
    }
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        assert conn.execute("SELECT id, use_count FROM memory_uses").fetchall() == [(1, 5)]
        # a process of the earlier version, still running on the file, keeps working
        conn.execute(
            "UPDATE memory_entries SET use_count = use_count + 1, last_used_at = 2.0 WHERE id = 2"
        )
        assert conn.execute(
            "SELECT e.use_count, e.last_used_at FROM memory_entries AS e WHERE e.id = 2"
        ).fetchone() == (1, 2.0)
    assert {i.text: i.use_count for i in memory.listed("agent-a")}["the plimsoll line"] == 0
    memory.call(memory.plugin.close)


def test_a_use_at_a_time_json_cannot_hold_still_counts(tmp_path):
    clock = Clock()
    memory = driver(tmp_path, clock)
    memory.save("agent-a", "the gryphel nests", key="gryphel")
    clock.now = float("inf")
    memory.recall("agent-a", "gryphel")
    clock.now = 1_000_100.0
    memory.save("agent-a", "a later note", key="later")  # commits the use
    assert committed_uses(tmp_path) == {"gryphel": 1, "later": 0}
    memory.call(memory.plugin.close)


def test_an_entry_forgotten_or_pruned_takes_its_uses_along(tmp_path):
    memory = driver(tmp_path, max_entries=2)
    memory.save("agent-a", "the gryphel nests", key="gryphel")
    memory.save("agent-a", "the plimsoll line", key="plimsoll")
    memory.recall("agent-a", "gryphel")
    memory.recall("agent-a", "plimsoll")
    memory.save("agent-a", "a third note", key="third")  # commits both uses, prunes none
    memory.forget("agent-a", keys=["gryphel"])
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        query = "SELECT e.key, u.use_count FROM memory_uses u JOIN memory_entries e USING (id)"
        used = dict(conn.execute(query))
        assert used == {"plimsoll": 1}
        assert conn.execute("SELECT count(*) FROM memory_uses").fetchone() == (1,)
    memory.call(memory.plugin.close)


def test_a_handed_over_commit_gives_way_to_another_write_and_keeps_the_uses(tmp_path):
    """While another write holds the file, the database thread does not wait for it
    (the recalls behind the commit would wait too): the uses stay pending — listed and
    ranked — and the next recall past the bound hands their commit over again."""
    memory = driver(tmp_path, pending_uses=2)
    memory.save("agent-a", "gryphel one", key="one")
    memory.save("agent-a", "gryphel two", key="two")
    lock = memory.plugin._db.write_lock
    assert lock.acquire(timeout=10)  # another write of this process, under way
    try:
        memory.recall("agent-a", "gryphel")  # two pending: the commit is handed over
        settled(memory)  # the thread gave up at once (it would wait here for ever)
        assert committed_uses(tmp_path) == {"one": 0, "two": 0}
        assert {i.key: i.use_count for i in memory.listed("agent-a")} == {"one": 1, "two": 1}
        memory.recall("agent-a", "gryphel")  # answered while the write goes on
    finally:
        lock.release()
    memory.recall("agent-a", "gryphel")
    settled(memory)
    assert committed_uses(tmp_path) == {"one": 3, "two": 3}
    memory.call(memory.plugin.close)


def test_a_call_after_close_fails_and_starts_no_thread(tmp_path):
    memory = driver(tmp_path)
    memory.save("agent-a", "the gryphel nests", key="gryphel")
    memory.call(memory.plugin.close)

    def threads() -> int:
        return sum(t.name == "memory-sqlite" for t in threading.enumerate())

    before = threads()
    with pytest.raises(Exception, match="closed"):
        memory.recall("agent-a", "gryphel")
    with pytest.raises(Exception, match="closed"):
        memory.save("agent-a", "a later note")
    assert memory.plugin._thread is None and threads() <= before


def stored_counts(tmp_path) -> dict[str, tuple[int, int]]:
    """Each scope's kept count (``memory_agents.entries``) and its entries counted."""
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        rows = conn.execute(
            "SELECT a.agent_id, a.entries, (SELECT count(*) FROM memory_entries AS e "
            "WHERE e.id >> 40 = a.slot) FROM memory_agents AS a"
        ).fetchall()
    return {key.replace("\x1f", "/"): (kept, counted) for key, kept, counted in rows}


def test_each_scopes_entries_are_counted_through_every_write_and_delete(tmp_path):
    """The count a cap reads is kept through inserts grouped or alone, upserts by key
    (no new entry), forgets, expired entries pruned, and a cap's own deletions."""
    clock = Clock()
    memory = driver(tmp_path, clock)
    memory.save("agent-a", "one", "two", "three", thread="t1")  # a group of its own
    memory.save("agent-a", "keyed", key="k")
    memory.save("agent-a", "keyed again", key="k")  # updated, not added
    memory.save("agent-a", "twice", "twice again", key="d")  # one added, then updated
    memory.save("agent-a", "ann's", "ann's too", owner="ann")
    memory.save("agent-a", "short-lived", ttl=10)
    assert stored_counts(tmp_path) == {"agent-a": (6, 6), "agent-a/ann": (2, 2)}
    assert memory.forget("agent-a", thread_id="t1") == 3
    clock.now += 60
    memory.save("agent-b", "another agent's write prunes the expired")
    assert stored_counts(tmp_path) == {
        "agent-a": (2, 2),
        "agent-a/ann": (2, 2),
        "agent-b": (1, 1),
    }
    memory.call(memory.plugin.close)
    capped = driver(tmp_path, clock, max_entries=1)
    capped.save("agent-a", "over the cap", owner="ann")
    assert stored_counts(tmp_path)["agent-a/ann"] == (1, 1)
    capped.call(capped.plugin.close)


def test_a_file_written_before_the_counts_has_them_counted_when_opened(tmp_path):
    """m005 counts each scope's entries (its slot's range of ids) of a file written
    before it."""
    from sqlite_utils import Database

    from toolang_memory_sqlite.schema import MIGRATIONS

    old = Database(tmp_path / "memory.db")
    MIGRATIONS.apply(old, stop_before="m005_entry_counts")
    old.execute(
        "INSERT INTO memory_agents (agent_id, slot, next_seq) VALUES "
        "('agent-a', 1, 4), ('agent-a\x1fann', 2, 2), ('agent-b', 3, 1)"
    )
    columns = "id, agent_id, owner, origin, kind, text, created_at, updated_at"
    a, ann = 1 << 40, 2 << 40
    old.execute(
        f"INSERT INTO memory_entries ({columns}) VALUES "
        f"({a + 1}, 'agent-a', NULL, 'turn', 'note', 'one', 1.0, 1.0), "
        f"({a + 2}, 'agent-a', NULL, 'turn', 'note', 'two', 2.0, 2.0), "
        f"({a + 3}, 'agent-a', NULL, 'turn', 'note', 'three', 3.0, 3.0), "
        f"({ann + 1}, 'agent-a', 'ann', 'turn', 'note', 'ann''s', 1.0, 1.0)"
    )
    old.execute(
        "INSERT INTO memory_fts (rowid, scope, body) VALUES "
        f"({a + 1}, '', 'one'), ({a + 2}, '', 'two'), ({a + 3}, '', 'three'), "
        f"({ann + 1}, '', 'ann''s')"
    )
    old.conn.commit()
    old.close()
    memory = driver(tmp_path, max_entries=2)
    assert len(memory.listed("agent-a")) == 3  # the file is opened (and migrated) lazily
    assert stored_counts(tmp_path) == {
        "agent-a": (3, 3),
        "agent-a/ann": (1, 1),
        "agent-b": (0, 0),
    }
    memory.save("agent-a", "four")  # the cap reads the count: two go, the oldest
    assert memory.listed_texts("agent-a") == ["four", "three"]
    assert stored_counts(tmp_path)["agent-a"] == (2, 2)
    memory.call(memory.plugin.close)


def test_a_file_at_m005_gets_the_index_the_cap_reads_the_recalled_by(tmp_path):
    """m006 adds the index of ``memory_uses`` by scope and last use to a file migrated
    by the plugin's previous release (its m005 did not make it): a capped write there
    reads the recalled entries through it."""
    from sqlite_utils import Database

    from toolang_memory_sqlite.schema import MIGRATIONS

    old = Database(tmp_path / "memory.db")
    MIGRATIONS.apply(old, stop_before="m006_uses_by_scope")
    assert "memory_uses_scope_used" not in {i.name for i in old["memory_uses"].indexes}
    old.close()
    memory = driver(tmp_path, max_entries=2)
    memory.save("agent-a", "otters one")
    memory.save("agent-a", "otters two")
    assert memory.recall("agent-a", "otters").items  # both recalled
    memory.save("agent-a", "otters three")  # the longest unused of the recalled goes
    assert len(memory.listed("agent-a")) == 2
    memory.call(memory.plugin.close)
    conn = sqlite3.connect(tmp_path / "memory.db")
    indexes = {r[1] for r in conn.execute("PRAGMA index_list(memory_uses)")}
    conn.close()
    assert "memory_uses_scope_used" in indexes


def test_the_cap_forgets_the_longest_unused_a_write_counting_as_a_use(tmp_path):
    clock = Clock()
    memory = driver(tmp_path, clock)
    for word in ("alpha", "bravo", "charlie", "delta"):
        clock.now += DAY
        memory.save("agent-a", f"note {word}", key=word)
    for word in ("charlie", "alpha", "delta", "bravo"):  # each used once, in this order
        clock.now += DAY
        memory.recall("agent-a", word)
    memory.call(memory.plugin.close)
    memory = driver(tmp_path, clock, max_entries=2)
    clock.now += DAY
    memory.save("agent-a", "note echo", key="echo")  # three over
    # by last use, or write: charlie, alpha and delta were unused the longest
    assert sorted(i.key for i in memory.listed("agent-a")) == ["bravo", "echo"]
    memory.call(memory.plugin.close)


def test_a_full_memory_whose_entries_are_recalled_keeps_what_is_new(tmp_path):
    """Each turn recalls what the memory holds: at the cap, a new entry is the most
    recently written, not the first to go for never having been recalled (it was, and
    a full memory learnt nothing more)."""
    clock = Clock()
    memory = driver(tmp_path, clock, max_entries=3)
    for n in range(1, 8):
        clock.now += 60
        memory.recall("agent-a", "otter number")
        clock.now += 1
        memory.save("agent-a", f"the otter number {n} is {7 * n}")
    assert memory.listed_texts("agent-a") == [
        "the otter number 7 is 49",
        "the otter number 6 is 42",
        "the otter number 5 is 35",
    ]
    memory.call(memory.plugin.close)


def test_a_cap_lowered_far_below_the_entries_deletes_them_at_the_next_write(tmp_path):
    """More ids than one statement may bind (SQLite: 32,766) are deleted in chunks."""
    memory = driver(tmp_path)
    for start in range(0, 36_000, 500):
        memory.save("agent-a", *(f"note {n}" for n in range(start, start + 500)))
    memory.call(memory.plugin.close)
    memory = driver(tmp_path, max_entries=3)
    memory.save("agent-a", "the newest note")
    kept = ["the newest note", "note 35999", "note 35998"]  # written at one time: by id
    assert memory.listed_texts("agent-a") == kept
    assert stored_counts(tmp_path)["agent-a"] == (3, 3)
    assert sorted(memory.texts("agent-a", "note")) == sorted(kept)  # the index kept in step
    memory.call(memory.plugin.close)


def test_an_agent_id_holding_the_owner_separator_is_refused(tmp_path):
    """``a\\x1fann`` would share agent ``a``'s owner ``ann``'s range of ids and count."""
    memory = driver(tmp_path, max_entries=1)
    memory.save("a", "ann's note", owner="ann")
    with pytest.raises(ValueError, match=r"U\+001F.*nothing of this batch was stored"):
        memory.save("a\x1fann", "another agent's note")
    assert memory.listed_texts("a", owner="ann") == ["ann's note"]
    assert stored_counts(tmp_path) == {"a/ann": (1, 1)}
    assert "U+001F" in (memory.health().last_error or "")
    memory.call(memory.plugin.close)
