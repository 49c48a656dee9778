"""What the SQLite memory plugin does beyond the shared contract: its location, settings,
ranking, clipping, pruning, size and error reports."""

from __future__ import annotations

import sqlite3
import threading

import pytest

import toolang_memory_sqlite
from toolang_core import ConfigError
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.database import MemoryClosed
from toolang_memory_sqlite.memory import SQLiteMemory, SQLiteMemoryError
from toolang_memory_sqlite.ranking import DAY

T0 = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def open_memory(tmp_path, clock):
    opened: list[SQLiteMemory] = []

    def make(path=None, **settings) -> MemoryDriver:
        plugin = SQLiteMemory(
            path or tmp_path / "memory.db", MemorySQLiteSettings(**settings), clock=clock
        )
        opened.append(plugin)
        return MemoryDriver(plugin, MemoryCaller())

    yield make
    for plugin in opened:
        plugin.close()


@pytest.fixture
def memory(open_memory):
    return open_memory()


def runtime_memory(toolang_runtime, config: str = "") -> SQLiteMemory:
    runtime = toolang_runtime(config, plugins={"memory-sqlite": toolang_memory_sqlite})
    registration = runtime.host.components.of_kind("memory")["sqlite"]
    return registration.factory(runtime.plugin_context("memory-sqlite"))


# location and settings ---------------------------------------------------------------


def test_the_plugin_registers_memory_sqlite_with_its_own_file_under_home(
    toolang_runtime, toolang_home
):
    plugin = runtime_memory(toolang_runtime, '[memory]\nplugin = "sqlite"\n')
    try:
        MemoryDriver(plugin, MemoryCaller()).save("agent-a", "hello")
    finally:
        plugin.close()
    assert plugin.path == toolang_home.path / ".toolang" / "plugins" / "memory-sqlite.db"
    assert plugin.path.exists()


def test_path_places_the_file_relative_to_the_config(toolang_runtime, toolang_home):
    plugin = runtime_memory(toolang_runtime, '[plugins.memory-sqlite]\npath = "data/m.db"\n')
    plugin.close()
    assert plugin.path == toolang_home.path / "data" / "m.db"


def test_database_store_keeps_entries_in_the_execution_store_file(toolang_runtime):
    config = '[plugins.memory-sqlite]\ndatabase = "store"\n'
    runtime = toolang_runtime(config, plugins={"memory-sqlite": toolang_memory_sqlite})
    plugin = runtime.host.components.of_kind("memory")["sqlite"].factory(
        runtime.plugin_context("memory-sqlite")
    )
    try:
        MemoryDriver(plugin, MemoryCaller()).save("agent-a", "in the store file")
        assert plugin.path == runtime.config.store_path
        store = runtime.open_store()  # the store accepts the memory tables made first
        store.close()
        tables = sqlite3.connect(plugin.path).execute("SELECT name FROM sqlite_master").fetchall()
        assert ("memory_entries",) in tables
    finally:
        plugin.close()


def test_database_store_needs_the_sqlite_store(toolang_home):
    toolang_home.write_config('[store]\nbackend = "pg"\n')
    config = toolang_home.load({})
    with pytest.raises(ConfigError, match=r"plugins\.memory-sqlite\.database.*backend = \"pg\""):
        toolang_memory_sqlite.database_path(config, MemorySQLiteSettings(database="store"))


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("candidates = 0", r"plugins\.memory-sqlite: candidates: expected a number >= 1"),
        ("recency_weight = 1.5", r"recency_weight: expected a number from 0 to 1"),
        ('database = "elsewhere"', r"plugins\.memory-sqlite\.database: expected one of 'own'"),
        ('database = "store"\npath = "m.db"', r'path: set only with database = "own"'),
    ],
)
def test_a_bad_setting_names_its_key(toolang_runtime, section, message):
    with pytest.raises(ConfigError, match=message):
        toolang_runtime(
            f"[plugins.memory-sqlite]\n{section}\n",
            plugins={"memory-sqlite": toolang_memory_sqlite},
        )


# ranking -----------------------------------------------------------------------------


def test_without_recency_weight_the_better_match_wins_however_old(open_memory, clock):
    memory = open_memory(recency_weight=0.0)
    memory.save("a", "otter otter otter holt")
    clock.now += 365 * DAY
    memory.save("a", "an otter")
    assert memory.texts("a", "otter holt") == ["otter otter otter holt", "an otter"]


def test_with_full_recency_weight_the_newest_match_wins(open_memory, clock):
    memory = open_memory(recency_weight=1.0)
    memory.save("a", "otter otter otter holt")
    clock.now += DAY
    memory.save("a", "an otter")
    assert memory.texts("a", "otter holt") == ["an otter", "otter otter otter holt"]


def test_recency_decides_between_equal_matches(memory, clock):
    memory.save("a", "the badger sett")
    clock.now += 10 * DAY
    memory.save("a", "the badger holt")
    assert memory.texts("a", "badger") == ["the badger holt", "the badger sett"]


def test_scores_follow_the_documented_formula(open_memory, clock):
    memory = open_memory(recency_weight=0.25, recency_half_life_days=10.0)
    memory.save("a", "heron")
    clock.now += 10 * DAY  # one half-life later
    (item,) = memory.recall("a", "heron").items
    assert item.score == pytest.approx(0.75 * 1.0 + 0.25 * 0.5)


def test_a_query_of_only_punctuation_recalls_nothing_and_says_so(memory):
    memory.save("a", "anything")
    result = memory.recall("a", "?!… ()")
    assert (result.items, result.diagnostics["terms"]) == ((), 0)


# bounded work --------------------------------------------------------------------------


def test_a_query_within_the_budget_is_ranked_by_bm25_over_all_its_words(open_memory):
    memory = open_memory(ranked_matches=10)
    memory.save("a", "the lynx", "the lynx and the ocelot")
    result = memory.recall("a", "lynx ocelot")
    assert result.diagnostics["mode"] == "bm25"
    assert [i.text for i in result.items] == ["the lynx and the ocelot", "the lynx"]


def test_past_the_budget_the_rarest_words_are_kept(open_memory):
    memory = open_memory(ranked_matches=10)
    memory.save("a", *(f"common entry {n}" for n in range(30)), "the rare entry")
    result = memory.recall("a", "rare entry")
    assert (result.diagnostics["mode"], result.diagnostics["dropped_terms"]) == ("rare-words", 1)
    assert [i.text for i in result.items] == ["the rare entry"]


def test_a_word_common_before_a_forget_is_counted_again_after_it(open_memory):
    memory = open_memory(ranked_matches=10)
    memory.save("a", *(f"common entry {n}" for n in range(30)), key=None, kind="bulk")
    memory.save("a", "the rare entry", kind="keep")
    assert memory.recall("a", "rare entry").diagnostics["mode"] == "rare-words"
    assert memory.recall("a", "rare entry").diagnostics["mode"] == "rare-words"  # remembered
    memory.forget("a", kind="bulk")  # "entry" matches one entry now
    result = memory.recall("a", "rare entry")
    assert (result.diagnostics["mode"], result.diagnostics["dropped_terms"]) == ("bm25", 0)


def test_when_every_word_is_common_the_newest_matches_rank_by_words_held(open_memory, clock):
    memory = open_memory(ranked_matches=10)
    memory.save("a", "alpha and beta, written first")
    clock.now += 1
    memory.save("a", *(f"alpha {n}" for n in range(15)), *(f"beta {n}" for n in range(15)))
    clock.now += 1
    memory.save("a", "alpha and beta, written last")
    result = memory.recall("a", "alpha beta", max_items=3)
    assert result.diagnostics["mode"] == "common-words"
    texts = [i.text for i in result.items]
    assert texts[0] == "alpha and beta, written last"
    assert "alpha and beta, written first" not in texts  # older than the newest 10 matches


def test_a_word_in_half_the_entries_matching_more_than_the_candidates_is_left_out(
    open_memory,
):
    # "otter" is in every entry: bm25 gives it no weight, and with more matches than
    # the 5 candidates, which of them would be candidates is decided by length alone.
    memory = open_memory(ranked_matches=100, candidates=5)
    memory.save("a", *(f"otter {n}" for n in range(20)), "the otter boat")
    result = memory.recall("a", "otter boat")
    assert (result.diagnostics["mode"], result.diagnostics["dropped_terms"]) == ("rare-words", 1)
    assert [i.text for i in result.items] == ["the otter boat"]


def test_a_weightless_word_is_not_counted_again_while_it_stays_weightless(tmp_path, clock):
    plugin = SQLiteMemory(
        tmp_path / "memory.db", MemorySQLiteSettings(ranked_matches=100, candidates=5), clock=clock
    )
    memory = MemoryDriver(plugin, MemoryCaller())
    try:
        memory.save("a", *(f"otter {n}" for n in range(20)), "the otter boat")
        statements: list[str] = []
        conn = plugin._db.main()  # the runtime's recalls use it
        conn.set_trace_callback(statements.append)
        first = memory.recall("a", "otter boat")
        counted_first = sum('"otter"' in s and "count(*)" in s for s in statements)
        statements.clear()
        again = memory.recall("a", "otter boat")
        assert counted_first == 1
        assert not [s for s in statements if '"otter"' in s and "count(*)" in s]
        assert [i.text for i in again.items] == [i.text for i in first.items]
        memory.save("a", *(f"heron {n}" for n in range(30)))  # now in under half the entries
        statements.clear()
        result = memory.recall("a", "otter boat")
        assert [s for s in statements if '"otter"' in s and "count(*)" in s]  # counted again
        assert result.diagnostics["mode"] == "bm25"
    finally:
        plugin.close()


def test_a_weightless_word_with_no_more_matches_than_the_candidates_stays(open_memory):
    memory = open_memory(ranked_matches=100, candidates=5)
    memory.save("a", "otter one", "otter two", "the otter boat")
    result = memory.recall("a", "otter boat")
    assert (result.diagnostics["mode"], result.diagnostics["dropped_terms"]) == ("bm25", 0)
    assert result.items[0].text == "the otter boat"
    assert len(result.items) == 3


def test_a_word_in_under_half_the_entries_stays_however_many_it_matches(open_memory):
    memory = open_memory(ranked_matches=100, candidates=5)
    memory.save("a", *(f"otter {n}" for n in range(20)), *(f"heron {n}" for n in range(22)))
    memory.save("a", "the otter boat")
    result = memory.recall("a", "otter boat")
    assert (result.diagnostics["mode"], result.diagnostics["dropped_terms"]) == ("bm25", 0)
    assert result.items[0].text == "the otter boat"


def test_when_only_weightless_words_match_the_newest_matches_come_first(open_memory, clock):
    memory = open_memory(ranked_matches=10, candidates=5)
    for n in range(15):
        memory.save("a", f"otter {n}")
        clock.now += 1
    result = memory.recall("a", "otter fox", max_items=3)
    assert result.diagnostics["mode"] == "common-words"
    assert [i.text for i in result.items] == ["otter 14", "otter 13", "otter 12"]


def test_the_indexed_rows_are_read_from_the_index_not_counted(memory, tmp_path):
    from toolang_memory_sqlite.search import indexed_rows

    memory.save("a", *(f"entry {n}" for n in range(300)), kind="bulk")
    memory.save("b", *(f"entry {n}" for n in range(20000, 20030)))
    memory.forget("a", kind="bulk")
    memory.save("a", *(f"entry {n}" for n in range(200)))
    conn = sqlite3.connect(tmp_path / "memory.db")
    try:
        assert indexed_rows(conn) == conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
        assert indexed_rows(conn) == 230
    finally:
        conn.close()


def test_thread_narrowing_happens_before_the_candidate_limit(open_memory):
    memory = open_memory(candidates=2)
    memory.save("a", *(f"caracal caracal caracal {n}" for n in range(5)), thread="chat:2")
    memory.save("a", "one caracal", thread="chat:1")
    assert memory.texts("a", "caracal", thread="chat:1") == ["one caracal"]


def test_another_agents_entries_do_not_use_up_the_budget(open_memory):
    memory = open_memory(ranked_matches=10, candidates=3)
    memory.save("b", *(f"serval serval {n}" for n in range(50)))
    memory.save("a", "a serval")
    assert memory.texts("a", "serval") == ["a serval"]


# limits and clipping -----------------------------------------------------------------


def test_an_entry_longer_than_max_chars_comes_back_clipped(memory):
    memory.save("a", "narwhal " + "tusk " * 400)
    result = memory.recall("a", "narwhal", max_chars=500)
    (item,) = result.items
    assert len(item.text) == 500
    assert item.text.startswith("narwhal tusk") and item.text.endswith("…")
    assert result.diagnostics["clipped"] == 1


def test_an_entry_is_skipped_rather_than_clipped_to_a_sliver(memory):
    memory.save("a", "walrus " * 100, "a walrus")  # 700 characters and 8
    assert memory.texts("a", "walrus", max_chars=150) == ["a walrus"]


def test_an_entry_over_max_entry_chars_is_refused_with_its_batch(open_memory):
    memory = open_memory(max_entry_chars=100)
    with pytest.raises(ValueError, match=r"entry 2 of 2 .*101 characters.*max_entry_chars"):
        memory.save("a", "fits", "x" * 101)
    assert memory.listed_texts("a") == []


@pytest.mark.parametrize("ttl", [0, -5, float("inf"), float("nan")])
def test_a_ttl_that_is_not_a_positive_finite_number_is_refused(memory, ttl):
    with pytest.raises(ValueError, match="ttl_seconds must be a positive number"):
        memory.save("a", "x", ttl=ttl)


def test_meta_that_is_not_json_is_refused(memory):
    with pytest.raises(ValueError, match="meta must be JSON-serialisable"):
        memory.save("a", "x", meta={"when": object()})


def test_text_with_a_lone_surrogate_is_refused_and_nothing_stored(memory):
    with pytest.raises(ValueError, match="lone surrogate"):
        memory.save("a", "fine", "broken \ud800 text")
    assert memory.listed_texts("a") == []


# time to live and pruning ------------------------------------------------------------


def test_each_write_prunes_one_batch_of_expired_entries(open_memory, clock):
    memory = open_memory(prune_batch=10)
    memory.save("a", *(f"brief {n}" for n in range(25)), ttl=60)
    clock.now += 61
    assert memory.save("a", "new").diagnostics["pruned_expired"] == 10
    assert memory.save("a", "newer").diagnostics["pruned_expired"] == 10


def test_health_prunes_every_expired_entry(open_memory, clock):
    memory = open_memory(prune_batch=10)
    memory.save("a", *(f"brief {n}" for n in range(25)), ttl=60)
    memory.save("a", "lasting")
    clock.now += 61
    health = memory.health()
    assert (health.entries, health.meta["pruned_expired"]) == (1, 25)


def test_prune_deletes_expired_entries_from_the_index_too(memory, clock):
    memory.save("a", "ephemeral mayfly", ttl=5)
    clock.now += 6
    assert memory.plugin.prune() == 1
    conn = sqlite3.connect(memory.plugin.path)
    assert conn.execute("SELECT count(*) FROM memory_fts").fetchone() == (0,)
    conn.close()


# health and failures -----------------------------------------------------------------


def test_health_reports_the_size_of_its_own_file(memory):
    memory.save("a", "x" * 50_000)
    health = memory.health()
    conn = sqlite3.connect(memory.plugin.path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the file alone holds every page now
    conn.close()
    assert health.size_bytes == memory.plugin.path.stat().st_size
    assert health.size_bytes > 50_000


def test_health_in_the_store_file_reports_only_the_memory_tables(toolang_runtime):
    plugin = runtime_memory(toolang_runtime, '[plugins.memory-sqlite]\ndatabase = "store"\n')
    try:
        MemoryDriver(plugin, MemoryCaller()).save("a", "y" * 50_000)
        health = plugin.health()
    finally:
        plugin.close()
    assert 50_000 < health.size_bytes < plugin.path.stat().st_size
    assert "execution store" in health.detail


def test_a_failure_is_named_and_health_turns_degraded(open_memory, tmp_path):
    memory = open_memory(busy_timeout_seconds=0.01)
    memory.save("a", "before")
    other = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SQLiteMemoryError, match=r"remember on .*memory\.db failed: .*locked"):
            memory.save("a", "while locked")
    finally:
        other.execute("ROLLBACK")
        other.close()
    health = memory.health()
    assert health.status == "degraded"
    assert "locked" in health.last_error


def test_health_during_another_processs_long_write_is_degraded_not_down(open_memory, tmp_path):
    memory = open_memory(busy_timeout_seconds=0.01)
    memory.save("a", "kept", ttl=5)
    other = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock; readers still read
    try:
        health = memory.health()
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert (health.status, health.entries) == ("degraded", 1)
    assert "prune" in health.last_error


def test_a_file_that_is_not_a_database_makes_health_down(tmp_path, open_memory):
    path = tmp_path / "memory.db"
    path.write_bytes(b"not a database at all" * 200)
    memory = open_memory(path)
    health = memory.health()
    assert health.status == "down"
    assert str(path) in health.detail
    with pytest.raises(SQLiteMemoryError, match="not a readable"):
        memory.save("a", "x")
    assert path.read_bytes() == b"not a database at all" * 200


def test_a_closed_plugin_says_so(memory):
    memory.plugin.close()
    with pytest.raises(MemoryClosed, match="closed"):
        memory.save("a", "x")


# concurrency across plugin objects ---------------------------------------------------


def test_two_plugin_objects_on_one_file_write_at_once_and_lose_nothing(open_memory):
    first, second = open_memory(), open_memory()
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def write(memory: MemoryDriver, name: str) -> None:
        try:
            start.wait()
            for n in range(50):
                memory.save("a", f"{name} {n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(first, "first")),
        threading.Thread(target=write, args=(second, "second")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(first.listed("a")) == 100


# writes of concurrent turns ---------------------------------------------------------


def test_concurrent_writes_are_committed_together_and_a_bad_batch_spoils_only_itself(
    tmp_path, clock
):
    import asyncio

    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    groups: list[int] = []
    write_group = plugin._group

    def counted(group):  # a spy on the real writer: how many batches each transaction held
        groups.append(len(group))
        return write_group(group)

    plugin._calls._call = counted
    texts = [f"entry {n} about otters" for n in range(12)]
    texts[5] = "broken \ud800 text"

    def batch(text: str) -> MemoryWriteBatch:
        return MemoryWriteBatch(
            agent_uri="toolang:agent/a", agent_id="a", entries=(MemoryEntry(text=text),)
        )

    async def write_all() -> list[object]:
        return await asyncio.gather(
            *(plugin.remember(batch(t)) for t in texts), return_exceptions=True
        )

    try:
        outcomes = asyncio.run(write_all())
        assert isinstance(outcomes[5], ValueError) and "lone surrogate" in str(outcomes[5])
        assert [o.written for n, o in enumerate(outcomes) if n != 5] == [1] * 11
        assert sum(groups) == 12 and len(groups) < 12  # grouped, every batch once
        driver = MemoryDriver(plugin, MemoryCaller())
        assert sorted(driver.listed_texts("a")) == sorted(t for n, t in enumerate(texts) if n != 5)
    finally:
        plugin.close()


def test_a_group_of_writes_without_keys_takes_the_same_few_statements_however_many(tmp_path, clock):
    from toolang_core.memory import (
        MemoryEntry,
        MemoryLimits,
        MemoryListRequest,
        MemoryRecallRequest,
        MemoryWriteBatch,
    )

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)

    def batch(agent: str, thread: str, *texts: str, key: str | None = None) -> object:
        entries = tuple(MemoryEntry(text=t, key=key) for t in texts)
        b = MemoryWriteBatch(
            agent_uri=f"toolang:agent/{agent}", agent_id=agent, entries=entries, thread_id=thread
        )
        return b, [plugin._checked(b, n, e) for n, e in enumerate(entries)]

    def statements_for(group: list[object]) -> tuple[list[object], int]:
        statements: list[str] = []
        conn = plugin._db.main()
        conn.set_trace_callback(statements.append)
        try:
            outcomes = plugin._own_thread().submit(plugin._write_group, group, conn).result()
            # The plugin's statements, not FTS5's own (which name the schema: 'main'.…).
            return outcomes, [s for s in statements if "'main'." not in s]
        finally:
            conn.set_trace_callback(None)

    try:
        plugin.remember_now(batch("a", "t1", "an earlier otter")[0])  # agents known
        plugin.remember_now(batch("b", "t1", "an earlier heron")[0])
        few, taken = statements_for(
            [batch("a", "t1", "otter one"), batch("b", "t2", "heron one", "heron two")]
        )
        many, taken_many = statements_for(
            [batch("a", "t1" if n % 2 else "t2", f"otter {n}") for n in range(20)]
        )
        assert [r.written for r in few] == [1, 2] and [r.written for r in many] == [1] * 20
        assert (
            len(taken_many) == len(taken) - 1 == 8
        )  # one agent's ids, not two  # one agent's ids instead of two
        driver = MemoryDriver(plugin, MemoryCaller())
        assert sorted(driver.listed_texts("b")) == ["an earlier heron", "heron one", "heron two"]
        ids = [int(i.id) for i in plugin.list_entries(MemoryListRequest(agent_id="a", limit=50))]
        assert ids == sorted(ids, reverse=True) and ids[0] - ids[-1] == 21  # one range, in order
        narrowed = plugin.recall_now(
            MemoryRecallRequest(
                agent_uri="toolang:agent/a",
                agent_id="a",
                query_text="otter",
                thread_id="t2",
                limits=MemoryLimits(max_items=50),
            )
        )
        assert sorted(i.text for i in narrowed.items) == sorted(
            f"otter {n}" for n in range(0, 20, 2)
        )
        keyed, _ = statements_for([batch("a", "t1", "keyed otter", key="k"), batch("a", "t1", "x")])
        assert [r.written for r in keyed] == [1, 1]  # a key: each batch alone, upserted
        again, _ = statements_for([batch("a", "t1", "keyed otter again", key="k")])
        texts = driver.listed_texts("a")
        assert "keyed otter again" in texts and "keyed otter" not in texts
        assert again[0].written == 1
    finally:
        plugin.close()


def test_concurrent_recalls_are_done_together_and_a_bad_one_fails_alone(tmp_path, clock):
    import asyncio

    from toolang_core.memory import MemoryLimits, MemoryRecallRequest

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    driver = MemoryDriver(plugin, MemoryCaller())
    driver.save("a", *(f"the {animal} swims" for animal in ("otter", "seal", "heron")))
    groups: list[int] = []
    recall_group = plugin._group

    def counted(group):  # a spy on the real recalls: how many each call to the thread held
        groups.append(len(group))
        return recall_group(group)

    plugin._calls._call = counted
    queries = ["otter", "seal", "heron", "broken", "otter seal"] * 4

    def request(query: str) -> MemoryRecallRequest:
        agent = "bad \ud800 agent" if query == "broken" else "a"  # not valid Unicode
        return MemoryRecallRequest(
            agent_uri="toolang:agent/a", agent_id=agent, query_text=query, limits=MemoryLimits()
        )

    async def recall_all() -> list[object]:
        return await asyncio.gather(
            *(plugin.recall(request(q)) for q in queries), return_exceptions=True
        )

    try:
        outcomes = asyncio.run(recall_all())
        assert sum(groups) == len(queries) and len(groups) < len(queries)
        for query, outcome in zip(queries, outcomes, strict=True):
            if query == "broken":
                assert isinstance(outcome, ValueError) and "lone surrogate" in str(outcome)
                continue
            alone = plugin.recall_now(request(query))
            assert [i.text for i in outcome.items] == [i.text for i in alone.items]
            assert outcome.items  # every good query finds something
    finally:
        plugin.close()


def test_the_remembered_word_counts_are_bounded_oldest_first():
    from toolang_memory_sqlite.search import CommonWords

    counts = CommonWords(most=3, clock=lambda: 0.0)
    for word in ("a", "b", "c", "d"):
        counts.add(word, 100)
    assert [counts.at_least(w) for w in ("a", "b", "c", "d")] == [0, 100, 100, 100]
    counts.add("b", 120)  # counted again: the newest now
    counts.add("e", 100)
    assert [counts.at_least(w) for w in ("b", "c", "d", "e")] == [120, 0, 100, 100]


def test_recalls_and_writes_handed_in_together_go_in_one_group_and_fail_apart(tmp_path, clock):
    import asyncio

    from toolang_core.memory import (
        MemoryEntry,
        MemoryLimits,
        MemoryRecallRequest,
        MemoryWriteBatch,
    )

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    MemoryDriver(plugin, MemoryCaller()).save("a", "the otter swims")
    groups: list[list[str]] = []
    real_group = plugin._group

    def spied(group):  # the real call, noting what each hand-over held
        groups.append([type(c).__name__ for c in group])
        return real_group(group)

    plugin._calls._call = spied
    recall = MemoryRecallRequest(
        agent_uri="toolang:agent/a", agent_id="a", query_text="otter", limits=MemoryLimits()
    )
    write = MemoryWriteBatch(
        agent_uri="toolang:agent/a", agent_id="a", entries=(MemoryEntry(text="a seal dives"),)
    )

    async def both() -> list[object]:
        return await asyncio.gather(
            *(plugin.recall(recall) for _ in range(3)),
            *(plugin.remember(write) for _ in range(3)),
            return_exceptions=True,
        )

    try:
        outcomes = asyncio.run(both())
        assert [o.items[0].text for o in outcomes[:3]] == ["the otter swims"] * 3
        assert [o.written for o in outcomes[3:]] == [1, 1, 1]
        assert groups[0] == ["MemoryRecallRequest"] * 3 + ["tuple"] * 3  # one hand-over

        def locked(writes, conn=None, wait=True):  # the transaction cannot start: writes fail
            raise SQLiteMemoryError("memory-sqlite: remember failed: database is locked")

        plugin._write_group = locked
        outcomes = asyncio.run(both())
        assert [o.items[0].text for o in outcomes[:3]] == ["the otter swims"] * 3
        assert all(isinstance(o, SQLiteMemoryError) for o in outcomes[3:])
    finally:
        plugin.close()


def test_a_caller_that_stops_waiting_leaves_its_group_and_the_next_going():
    import asyncio

    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    executor = DatabaseThread("test")
    gate = threading.Event()
    groups: list[list[int]] = []

    def call(items):
        groups.append(list(items))
        gate.wait(5)
        return [n * 2 if n != 4 else ValueError("four") for n in items]

    calls = GroupCalls(call, lambda: executor)

    async def scenario():
        first = asyncio.create_task(calls.add(1))
        await asyncio.sleep(0.02)  # the first group is under way in the thread
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.02):
                await calls.add(2)  # waits for the next group, then gives up
        later = [asyncio.create_task(calls.add(n)) for n in (3, 4)]
        await asyncio.sleep(0.02)
        gate.set()
        return await first, await asyncio.gather(*later, return_exceptions=True)

    try:
        first, (third, fourth) = asyncio.run(scenario())
    finally:
        executor.shutdown()
    assert (first, third) == (2, 6)
    assert isinstance(fourth, ValueError)  # an exception for one item fails that one
    assert groups == [[1], [2, 3, 4]]  # the one that gave up was still in its group


def test_a_group_answered_wrongly_fails_its_callers_and_the_next_group_still_goes():
    """A call that answers the wrong number of outcomes, or ends in a BaseException,
    fails its group's callers — it does not leave every later call waiting."""
    import asyncio

    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    executor = DatabaseThread("test")

    def call(items):
        if items == [1]:
            return []  # one outcome short
        if items == [2]:
            raise SystemExit(3)
        return [n * 2 for n in items]

    calls = GroupCalls(call, lambda: executor)

    async def scenario():
        outcomes = []
        for n in (1, 2, 3):
            try:
                outcomes.append(await asyncio.wait_for(calls.add(n), 5))
            except RuntimeError as exc:
                outcomes.append(str(exc))
        return outcomes

    try:
        first, second, third = asyncio.run(scenario())
    finally:
        executor.shutdown()
    assert first == "memory-sqlite: 0 outcomes for a group of 1 calls"
    assert "SystemExit(3)" in second
    assert third == 6


# lone calls, done at once in the event loop's thread ----------------------------------


def _recall_request(agent: str, query: str):
    from toolang_core.memory import MemoryLimits, MemoryRecallRequest

    return MemoryRecallRequest(
        agent_uri=f"toolang:agent/{agent}", agent_id=agent, query_text=query, limits=MemoryLimits()
    )


def _write_batch(agent: str, text: str):
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    return MemoryWriteBatch(
        agent_uri=f"toolang:agent/{agent}", agent_id=agent, entries=(MemoryEntry(text=text),)
    )


def test_a_lone_recall_and_write_are_done_in_the_loops_thread_on_the_shared_connection(
    tmp_path, clock
):
    import asyncio

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    threads: list[str] = []
    real_recall = plugin._recall

    def spied(request, conn):
        threads.append(threading.current_thread().name)
        assert conn is plugin._db.main()
        return real_recall(request, conn)

    plugin._recall = spied

    async def one_at_a_time():
        written = await plugin.remember(_write_batch("a", "the otter swims"))
        recalled = await plugin.recall(_recall_request("a", "otter"))
        return written, recalled, threading.current_thread().name

    try:
        written, recalled, loop_thread = asyncio.run(one_at_a_time())
        assert written.written == 1
        assert [i.text for i in recalled.items] == ["the otter swims"]
        assert threads == [loop_thread]
        assert plugin._thread is None  # the database thread was never needed
    finally:
        plugin.close()


def test_a_lone_write_that_would_wait_for_another_process_goes_to_the_thread(tmp_path, clock):
    import asyncio

    path = tmp_path / "memory.db"
    plugin = SQLiteMemory(path, MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the first otter"))  # the file and its tables
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writes

    async def write_while_locked():
        ticks = 0
        writing = asyncio.create_task(plugin.remember(_write_batch("a", "a second otter")))
        for _ in range(20):  # the loop goes on while the write waits in the thread
            await asyncio.sleep(0.005)
            ticks += 1
        assert not writing.done()
        other.execute("COMMIT")
        return ticks, await writing

    try:
        ticks, written = asyncio.run(write_while_locked())
        assert (ticks, written.written) == (20, 1)
        assert plugin._thread is not None
        texts = sorted(i.text for i in plugin.list_entries(_list_request("a")))
        assert texts == ["a second otter", "the first otter"]
    finally:
        other.close()
        plugin.close()


def test_a_lone_write_of_much_text_goes_to_the_thread(tmp_path, clock):
    import asyncio

    from toolang_memory_sqlite.memory import ALONE_CHARS

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    threads: list[str] = []
    real_write = plugin._write_group

    def spied(group, conn=None, *, wait=True):
        threads.append(threading.current_thread().name)
        return real_write(group, conn, wait=wait)

    plugin._write_group = spied

    async def write(text):
        return (await plugin.remember(_write_batch("a", text))).written

    try:
        assert asyncio.run(write("x" * ALONE_CHARS)) == 1
        assert asyncio.run(write("y" * (ALONE_CHARS + 1))) == 1
        assert threads == ["MainThread", "memory-sqlite"]
    finally:
        plugin.close()


def _list_request(agent: str):
    from toolang_core.memory import MemoryListRequest

    return MemoryListRequest(agent_id=agent, limit=10)


def test_a_first_caller_that_gives_up_in_its_round_still_hands_its_group_over():
    import asyncio

    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    thread = DatabaseThread("test")
    groups: list[list[int]] = []

    def call(items):
        groups.append(list(items))
        return [n * 2 for n in items]

    calls = GroupCalls(call, lambda: thread)

    async def scenario():
        first = asyncio.create_task(calls.add(1))
        second = asyncio.create_task(calls.add(2))
        await asyncio.sleep(0)  # both handed in; the first waits out its round
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        return await second, await calls.add(3)  # and the next group goes too

    try:
        assert asyncio.run(asyncio.wait_for(scenario(), 5)) == (4, 6)
    finally:
        thread.shutdown()
    assert groups == [[1, 2], [3]]


def test_a_lone_call_on_a_busy_loop_goes_to_the_thread(tmp_path, clock):
    import asyncio
    import time

    from toolang_memory_sqlite.group import QUIET_ROUND

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the otter swims"))
    threads: list[str] = []
    real_recall = plugin._recall

    def spied(request, conn):
        threads.append(threading.current_thread().name)
        return real_recall(request, conn)

    plugin._recall = spied

    async def recall(busy: bool):
        recalling = asyncio.ensure_future(plugin.recall(_recall_request("a", "otter")))
        if busy:  # other work of the loop in the round the recall waits out
            asyncio.get_running_loop().call_soon(time.sleep, 3 * QUIET_ROUND)
        return [i.text for i in (await recalling).items]

    try:
        assert asyncio.run(recall(busy=False)) == ["the otter swims"]
        assert asyncio.run(recall(busy=True)) == ["the otter swims"]
        assert threads == ["MainThread", "memory-sqlite"]
    finally:
        plugin.close()


@pytest.mark.parametrize("owner", [None, "ann"])
def test_an_upsert_and_a_forget_by_key_search_the_key_index_on_all_its_columns(
    tmp_path, clock, owner
):
    """The unique key index is on ``(agent_id, coalesce(owner, ''), key)``: a lookup that
    spells the owner otherwise searches it by agent alone, reading every keyed entry."""
    from toolang_core.memory import MemoryEntry, MemoryForget, MemoryWriteBatch

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)

    def save(*entries: MemoryEntry) -> None:
        plugin.remember_now(
            MemoryWriteBatch(
                agent_uri="toolang:agent/a", agent_id="a", entries=entries, owner=owner
            )
        )

    try:
        save(*(MemoryEntry(text=f"fact {n}", key=f"k{n}") for n in range(50)))
        statements: list[str] = []
        conn = plugin._db.get()
        conn.set_trace_callback(statements.append)
        save(MemoryEntry(text="fact 7 again", key="k7"))
        plugin.forget(MemoryForget(agent_id="a", keys=("k8", "k9"), owner=owner))
        conn.set_trace_callback(None)
        lookups = [s for s in statements if " key = " in s or " key IN " in s]
        assert len(lookups) == 3  # the upsert's SELECT, the forget's two DELETEs
        for statement in lookups:
            plan = " ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "memory_entries_agent_owner_key (agent_id=? AND <expr>=? AND key=?)" in plan
        texts = {i.text for i in plugin.list_entries(_listing("a", owner))}
        assert "fact 7 again" in texts and "fact 7" not in texts
        assert len(texts) == 48 and not {"fact 8", "fact 9"} & texts
    finally:
        plugin.close()


def _listing(agent: str, owner: str | None) -> object:
    from toolang_core.memory import MemoryListRequest

    return MemoryListRequest(agent_id=agent, owner=owner, limit=100)


def test_lone_calls_do_not_set_the_busy_timeout_each_time_and_the_thread_gets_it_back(
    tmp_path, clock
):
    """A lone call must not wait for another process (busy timeout 0), the database
    thread must (busy_timeout_seconds): the shared connection's timeout is set when the
    kind of caller changes, not around every lone write."""
    import asyncio

    plugin = SQLiteMemory(
        tmp_path / "memory.db", MemorySQLiteSettings(busy_timeout_seconds=7), clock=clock
    )
    statements: list[str] = []

    async def one_at_a_time(n: int) -> None:
        for k in range(n):
            await plugin.remember(_write_batch("a", f"otter {k}"))
            await plugin.recall(_recall_request("a", "otter"))

    def timeout() -> int:
        return plugin._db.main().execute("PRAGMA busy_timeout").fetchone()[0]

    try:
        with plugin._db.main_lock:
            conn = plugin._db.main()
        conn.set_trace_callback(statements.append)
        asyncio.run(one_at_a_time(5))
        assert [s for s in statements if "busy_timeout" in s] == ["PRAGMA busy_timeout = 0"]
        assert plugin._thread is None  # every call was done in the loop's thread
        conn.set_trace_callback(None)
        with plugin._db.main_lock:  # what the database thread asks for: the full timeout
            assert timeout() == 7000
            assert plugin._db.main(waits=False).execute("PRAGMA busy_timeout").fetchone() == (0,)
        texts = sorted(i.text for i in plugin.list_entries(_list_request("a")))
        assert texts == [f"otter {k}" for k in range(5)]
    finally:
        plugin.close()
