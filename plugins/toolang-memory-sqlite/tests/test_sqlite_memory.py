"""What the SQLite memory plugin does beyond the shared contract: its location, settings,
ranking, clipping, pruning, size and error reports."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import attrs
import pytest
import structlog.testing

import toolang_memory_sqlite
from toolang_core import ConfigError, PluginContext, ToolangConfig
from toolang_core.memory import MemoryRecallRequest
from toolang_core.memory.kit import DAY
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.database import MemoryClosed, WriteBusy
from toolang_memory_sqlite.memory import SQLiteMemory, SQLiteMemoryError


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


def test_on_a_shared_store_the_plugin_warns_that_each_node_keeps_its_own_file(tmp_path):
    config = ToolangConfig(base_dir=tmp_path, home=tmp_path / "home")
    config = attrs.evolve(config, store=attrs.evolve(config.store, backend="postgres"))
    with structlog.testing.capture_logs() as logs:
        plugin = toolang_memory_sqlite.build(PluginContext("memory-sqlite", config))
    plugin.close()
    (warning,) = [e for e in logs if e["event"] == "memory.per_node"]
    assert (warning["log_level"], warning["store"]) == ("warning", "postgres")
    assert '[memory] plugin = "postgres"' in warning["hint"]


def checkpoint_threads(path) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"toolang-checkpoint:{path.name}"]


def test_the_first_write_starts_the_log_checkpointer_and_close_stops_it(tmp_path):
    """A write's commit never copies the log back (SQLite's auto-checkpoint, every 1,000
    pages: milliseconds in the thread recalls wait for); the plugin's thread does."""
    plugin = SQLiteMemory(tmp_path / "memory.db")
    try:
        assert checkpoint_threads(plugin.path) == []  # opening alone starts nothing
        MemoryDriver(plugin, MemoryCaller()).save("agent-a", "hello")
        assert len(checkpoint_threads(plugin.path)) == 1
        with plugin._db.main_lock:  # the runtime's connection keeps the safety net only
            pages = plugin._db.main().execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        assert pages > 1_000
    finally:
        plugin.close()
    assert checkpoint_threads(plugin.path) == []


def test_a_write_that_is_not_to_wait_does_not_wait_for_the_logs_last_copy(tmp_path):
    """The event loop's own writes (``wait=False``) give way at once, as they do to
    another write: the checkpointer holds the writers' lock for its last copy."""
    plugin = SQLiteMemory(tmp_path / "memory.db")
    MemoryDriver(plugin, MemoryCaller()).save("agent-a", "hello")  # the thread runs
    db = plugin._db
    held, release = threading.Event(), threading.Event()

    def copying() -> None:
        with db._log.lock:
            held.set()
            release.wait(30)

    other = threading.Thread(target=copying)
    other.start()
    try:
        held.wait(30)
        with (
            db.main_lock,
            pytest.raises(WriteBusy, match="being copied back"),
            db.write(db.main(waits=False), wait=False),
        ):
            pass
    finally:
        release.set()
        other.join()
    with db.main_lock, db.write(db.main(waits=False), wait=False) as conn:  # free again
        conn.execute("SELECT 1")
    plugin.close()


def test_a_memory_dropped_without_close_stops_its_checkpointer(tmp_path):
    import gc

    plugin = SQLiteMemory(tmp_path / "memory.db")
    MemoryDriver(plugin, MemoryCaller()).save("agent-a", "hello")
    path = plugin.path
    assert len(checkpoint_threads(path)) == 1
    database_thread = plugin._thread
    assert database_thread is not None  # the first call opened the file there
    # The caller may be answered before the thread lets go of the job that answered it
    # (and, through it, of the plugin): a job after it, waited for, is the last one.
    database_thread.submit(lambda: None).result(10)
    del plugin
    gc.collect()
    assert checkpoint_threads(path) == []
    database_thread._thread.join(10)  # the dropped plugin's thread ends too
    assert not database_thread._thread.is_alive()


def test_a_checkpointer_that_could_not_start_is_tried_again_later(tmp_path, monkeypatch):
    from toolang_memory_sqlite import database

    plugin = SQLiteMemory(tmp_path / "memory.db")
    starts = []

    def refused() -> bool:
        starts.append(1)
        return False

    monkeypatch.setattr(plugin._db._log, "start", refused)
    driver = MemoryDriver(plugin, MemoryCaller())
    try:
        driver.save("agent-a", "one")
        driver.save("agent-a", "two")
        assert len(starts) == 1  # not on every write
        monkeypatch.setattr(database, "RETRY_START_SECONDS", 0.0)
        plugin._db._start_at = 0.0
        driver.save("agent-a", "three")
        assert len(starts) == 2
    finally:
        plugin.close()


def test_in_the_store_file_the_runtimes_checkpointer_keeps_the_log(tmp_path):
    plugin = SQLiteMemory(tmp_path / "toolang.db", shared_with_store=True)
    try:
        MemoryDriver(plugin, MemoryCaller()).save("agent-a", "hello")
        assert checkpoint_threads(plugin.path) == []
    finally:
        plugin.close()


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
    with pytest.raises(SQLiteMemoryError, match="not a readable database") as refused:
        memory.save("a", "x")
    # the plugin's file, not the execution store: [store] path is not where it is set
    assert "[store] path" not in str(refused.value)
    assert "'memory-sqlite' plugin's database" in str(refused.value)
    assert path.read_bytes() == b"not a database at all" * 200


def test_its_file_is_hidden_from_tools_programs_once_built_before_it_is_opened(tmp_path):
    """The file holds every owner's exchanges, and a setting may put it outside the
    runtime's home: named for the sandbox to hide when the plugin is built (it is
    opened only on the first recall or write)."""
    from toolang_core.sandbox.hidden_files import hidden_by_plugins
    from toolang_memory_sqlite.memory import SQLiteMemory

    path = tmp_path / "elsewhere" / "memory.db"
    memory = SQLiteMemory(path)
    try:
        assert not path.exists()  # not opened yet
        hidden = set(hidden_by_plugins())
        for name in (path, f"{path}-wal", f"{path}-shm"):
            assert Path(name) in hidden
    finally:
        memory.close()


def test_text_another_program_stored_undecodable_fails_the_recall_naming_the_file(memory, tmp_path):
    """Text that is not UTF-8 (written by another program) cannot be read back as a
    ``str``: the recall fails with the plugin's error naming the operation and the file
    (Python's sqlite3 raises that one itself, without SQLite's error code), on the
    event loop's thread and in the plugin's own call alike; the entry stays as it is."""
    memory.save("a", "deploy notes")
    other = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    try:
        other.execute("UPDATE memory_entries SET text = CAST(x'ff206465706c6f79' AS TEXT)")
    finally:
        other.close()
    pattern = r"recall on .*memory\.db failed: .*decode"
    with pytest.raises(SQLiteMemoryError, match=pattern):
        memory.recall("a", "deploy")  # async: done at once, on the caller's loop
    with pytest.raises(SQLiteMemoryError, match=pattern):
        memory.plugin.recall_now(memory_request("a", "deploy"))
    other = sqlite3.connect(tmp_path / "memory.db")
    try:
        (stored,) = other.execute("SELECT CAST(text AS BLOB) FROM memory_entries").fetchall()
    finally:
        other.close()
    assert stored == (b"\xff deploy",)


def memory_request(agent: str, query: str) -> MemoryRecallRequest:
    return MemoryRecallRequest(agent_uri=f"toolang:agent/{agent}", agent_id=agent, query_text=query)


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


# masking -------------------------------------------------------------------------------


def test_entries_written_on_the_database_thread_are_masked_by_the_callers_policy(
    toolang_runtime,
):
    """Concurrent writes are grouped onto the database thread: each is masked there by
    the redaction policy in effect where it was asked for (the serving runtime's), not
    by the core's rules alone."""
    import asyncio

    from toolang_core.memory import MemoryEntry, MemoryWriteBatch
    from toolang_core.redaction import use_detectors

    plugin = runtime_memory(toolang_runtime)

    async def write_together() -> None:
        undo = use_detectors({"acme": lambda t: t.replace("EMP-4711", "[employee]")})
        try:
            await asyncio.gather(
                *(
                    plugin.remember(
                        MemoryWriteBatch(
                            agent_uri="toolang:agent/a",
                            agent_id="a",
                            entries=(MemoryEntry(text=f"note {n}: EMP-4711 called"),),
                        )
                    )
                    for n in range(20)
                )
            )
        finally:
            undo()

    try:
        asyncio.run(write_together())
    finally:
        plugin.close()
    with sqlite3.connect(plugin.path) as conn:
        texts = [row[0] for row in conn.execute("SELECT text FROM memory_entries")]
    assert len(texts) == 20
    assert all("[employee]" in t and "EMP-4711" not in t for t in texts)
