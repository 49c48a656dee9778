"""The SQLite memory plugin's calls from the runtime: the recalls and writes of concurrent
turns grouped, done at once in the event loop's thread, or in the plugin's database
thread when they would wait."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.at_once import AT_ONCE_DELETES
from toolang_memory_sqlite.group import LEFT
from toolang_memory_sqlite.memory import SQLiteMemory, SQLiteMemoryError


def open_main(plugin: SQLiteMemory) -> None:
    """Open (create and migrate) the connection the runtime's calls share, as the first
    call does in the database thread: calls are done at once only once it is open."""
    with plugin._db.main_lock:
        plugin._db.main()


def spy_groups(plugin: SQLiteMemory) -> list[tuple[str, list[object]]]:
    """Each group of calls done, as it is done: ``("at once", calls)`` for those done in
    the loop's thread, ``("thread", calls)`` for those the database thread did."""
    done: list[tuple[str, list[object]]] = []
    at_once, in_thread = plugin._calls._at_once, plugin._calls._call
    assert at_once is not None

    def spied_at_once(calls):
        outcomes = at_once(calls)
        kept = [c for c, o in zip(calls, outcomes, strict=True) if o is not LEFT]
        if kept:
            done.append(("at once", kept))
        return outcomes

    def spied_thread(calls):
        done.append(("thread", list(calls)))
        return in_thread(calls)

    plugin._calls._at_once, plugin._calls._call = spied_at_once, spied_thread
    return done


# writes of concurrent turns ---------------------------------------------------------


def test_concurrent_writes_are_committed_together_and_a_bad_batch_spoils_only_itself(
    tmp_path, clock
):
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    groups = spy_groups(plugin)
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
        assert sum(len(g) for _, g in groups) == 12 and len(groups) < 12  # every batch once
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
    from toolang_core.memory import MemoryLimits, MemoryRecallRequest

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    driver = MemoryDriver(plugin, MemoryCaller())
    driver.save("a", *(f"the {animal} swims" for animal in ("otter", "seal", "heron")))
    groups = spy_groups(plugin)
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
        assert sum(len(g) for _, g in groups) == len(queries) and len(groups) < len(queries)
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
    from toolang_core.memory import (
        MemoryEntry,
        MemoryLimits,
        MemoryRecallRequest,
        MemoryWriteBatch,
    )
    from toolang_memory_sqlite.group import GROUP_MOST

    n = GROUP_MOST // 2  # recalls and as many writes: one group's worth
    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    MemoryDriver(plugin, MemoryCaller()).save("a", "the otter swims")
    groups = spy_groups(plugin)
    recall = MemoryRecallRequest(
        agent_uri="toolang:agent/a", agent_id="a", query_text="otter", limits=MemoryLimits()
    )
    write = MemoryWriteBatch(
        agent_uri="toolang:agent/a", agent_id="a", entries=(MemoryEntry(text="a seal dives"),)
    )

    async def both() -> list[object]:
        return await asyncio.gather(
            *(plugin.recall(recall) for _ in range(n)),
            *(plugin.remember(write) for _ in range(n)),
            return_exceptions=True,
        )

    try:
        outcomes = asyncio.run(both())
        assert [o.items[0].text for o in outcomes[:n]] == ["the otter swims"] * n
        assert [o.written for o in outcomes[n:]] == [1] * n
        kinds = [type(c).__name__ for c in groups[0][1]]
        assert kinds == ["MemoryRecallRequest"] * n + ["tuple"] * n  # one group

        def locked(writes, conn=None, wait=True):  # the transaction cannot start: writes fail
            raise SQLiteMemoryError("memory-sqlite: remember failed: database is locked")

        plugin._write_group = locked
        outcomes = asyncio.run(both())  # done at once
        assert [o.items[0].text for o in outcomes[:n]] == ["the otter swims"] * n
        assert all(isinstance(o, SQLiteMemoryError) for o in outcomes[n:])
        plugin._calls._at_once = lambda calls: [LEFT] * len(calls)
        del groups[:]
        outcomes = asyncio.run(both())  # the same group in the database thread
        assert [how for how, _ in groups] == ["thread"]
        assert [o.items[0].text for o in outcomes[:n]] == ["the otter swims"] * n
        assert all(isinstance(o, SQLiteMemoryError) for o in outcomes[n:])
    finally:
        plugin.close()


# calls done at once in the event loop's thread, and those left to the database thread -


def _recall_request(agent: str, query: str):
    from toolang_core.memory import MemoryLimits, MemoryRecallRequest

    return MemoryRecallRequest(
        agent_uri=f"toolang:agent/{agent}", agent_id=agent, query_text=query, limits=MemoryLimits()
    )


def _write_batch(agent: str, *texts: str):
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    entries = tuple(MemoryEntry(text=text) for text in texts)
    return MemoryWriteBatch(agent_uri=f"toolang:agent/{agent}", agent_id=agent, entries=entries)


def test_a_lone_recall_and_write_are_done_in_the_loops_thread_on_the_shared_connection(
    tmp_path, clock
):
    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    threads: list[str] = []
    real_recall = plugin._recall

    def spied(request, conn, *, at_once=False):
        threads.append(threading.current_thread().name)
        assert conn is plugin._db.main()
        return real_recall(request, conn, at_once=at_once)

    plugin._recall = spied
    groups = spy_groups(plugin)

    async def one_at_a_time():
        written = await plugin.remember(_write_batch("a", "the otter swims"))
        recalled = await plugin.recall(_recall_request("a", "otter"))
        again = await plugin.remember(_write_batch("a", "the seal dives"))
        return written, recalled, again, threading.current_thread().name

    try:
        written, recalled, again, loop_thread = asyncio.run(one_at_a_time())
        assert (written.written, again.written) == (1, 1)
        assert [i.text for i in recalled.items] == ["the otter swims"]
        assert threads == [loop_thread]
        # the first call opens the file in the database thread (opening may wait for
        # another process's write); the others are done at once
        assert [how for how, _ in groups] == ["thread", "at once", "at once"]
    finally:
        plugin.close()


def test_a_lone_write_that_would_wait_for_another_process_goes_to_the_thread(tmp_path, clock):
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


def test_writes_of_much_text_go_to_the_thread(tmp_path, clock):
    from toolang_memory_sqlite.at_once import AT_ONCE_CHARS

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    threads: list[str] = []
    real_write = plugin._write_group

    def spied(group, conn=None, *, wait=True):
        threads.append(threading.current_thread().name)
        return real_write(group, conn, wait=wait)

    plugin._write_group = spied

    async def write(*texts):
        written = await asyncio.gather(*(plugin.remember(_write_batch("a", t)) for t in texts))
        return [w.written for w in written]

    half = AT_ONCE_CHARS // 2
    open_main(plugin)
    try:
        assert asyncio.run(write("x" * AT_ONCE_CHARS)) == [1]
        assert asyncio.run(write("y" * (AT_ONCE_CHARS + 1))) == [1]
        assert asyncio.run(write("z" * half, "w" * (half + 1))) == [1, 1]  # one group
        assert threads == ["MainThread", "memory-sqlite", "memory-sqlite"]
    finally:
        plugin.close()


@pytest.mark.parametrize(
    ("settings", "synchronous", "held"),
    [
        ({"max_entries": 3}, "normal", 3 + AT_ONCE_DELETES + 1),
        ({}, "full", 0),
        ({}, "FULL", 0),
        ({}, "extra", 0),
    ],
)
def test_writes_that_may_take_long_go_to_the_thread_and_recalls_stay(
    tmp_path, clock, settings, synchronous, held
):
    """A cap lowered far below the entries held deletes many of them at the next write
    (more than AT_ONCE_DELETES beside the one written: tried at once, found out, rolled
    back and handed over); with
    ``synchronous = "full"`` each commit waits for the disk: not in the loop's thread."""
    if held:
        before = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
        before.remember_now(_write_batch("a", *(f"note {n}" for n in range(held))))
        before.close()
    plugin = SQLiteMemory(
        tmp_path / "memory.db",
        MemorySQLiteSettings(**settings),
        synchronous=synchronous,
        clock=clock,
    )
    groups = spy_groups(plugin)
    open_main(plugin)

    async def both():
        return await asyncio.gather(
            plugin.remember(_write_batch("a", "the otter swims")),
            plugin.recall(_recall_request("a", "heron")),
        )

    try:
        written, recalled = asyncio.run(both())
        assert (written.written, recalled.items) == (1, ())
        kinds = [(how, [type(c).__name__ for c in calls]) for how, calls in groups]
        assert kinds == [("at once", ["MemoryRecallRequest"]), ("thread", ["tuple"])]
        listed = MemoryDriver(plugin, MemoryCaller()).listed("a")
        assert len(listed) == settings.get("max_entries", 1)
    finally:
        plugin.close()


def test_a_write_at_its_cap_is_done_at_once(tmp_path, clock):
    """A write that takes a scope a few entries past ``max_entries`` deletes them in the
    loop's thread: no hand-over to the database thread for each write at the cap."""
    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(max_entries=3), clock=clock)
    plugin.remember_now(_write_batch("a", "one", "two", "three"))
    groups = spy_groups(plugin)
    open_main(plugin)

    async def write() -> object:
        return await plugin.remember(_write_batch("a", "four", "five"))

    try:
        assert asyncio.run(write()).written == 2
        assert [how for how, _ in groups] == ["at once"]
        texts = MemoryDriver(plugin, MemoryCaller()).listed_texts("a")
        assert sorted(texts) == ["five", "four", "three"]
    finally:
        plugin.close()


def test_concurrent_writes_at_a_full_scopes_cap_are_done_at_once_together(tmp_path, clock):
    """The deletions a group's writes make at a cap are bounded beside the entries they
    write: twenty turns' writes to one full scope are one group done at once."""
    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(max_entries=3), clock=clock)
    plugin.remember_now(_write_batch("a", "one", "two", "three"))
    groups = spy_groups(plugin)
    open_main(plugin)

    async def writes() -> list[object]:
        return await asyncio.gather(
            *(plugin.remember(_write_batch("a", f"note {n}", f"more {n}")) for n in range(20))
        )

    try:
        assert [w.written for w in asyncio.run(writes())] == [2] * 20
        assert [how for how, _ in groups] == ["at once"]
        assert len(MemoryDriver(plugin, MemoryCaller()).listed("a")) == 3
    finally:
        plugin.close()


def test_a_cap_that_would_look_long_for_what_to_delete_goes_to_the_thread(tmp_path, clock):
    """Recalled entries older than every never-recalled one are passed over by each
    write at the cap: past AT_ONCE_STEPS of SQLite's work the write done at once gives
    up (rolled back) and the database thread does it."""
    from toolang_memory_sqlite.uses import AT_ONCE_STEPS

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", *(f"used {n}" for n in range(20_000))))
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        conn.execute(
            "INSERT INTO memory_uses (id, use_count, last_used_at) "
            "SELECT id, 1, 5.0 FROM memory_entries"
        )
    clock.now += 10
    plugin.remember_now(_write_batch("a", "never recalled"))
    plugin.close()
    capped = SQLiteMemory(
        tmp_path / "memory.db", MemorySQLiteSettings(max_entries=20_001), clock=clock
    )
    groups = spy_groups(capped)
    open_main(capped)

    async def write() -> object:
        return await capped.remember(_write_batch("a", "the newest"))

    try:
        assert asyncio.run(write()).written == 1
        assert [how for how, _ in groups] == ["thread"] and AT_ONCE_STEPS < 1000
        texts = MemoryDriver(capped, MemoryCaller()).listed_texts("a", limit=2)
        assert texts == ["the newest", "never recalled"]
        with sqlite3.connect(tmp_path / "memory.db") as conn:  # the longest unused went
            assert conn.execute(
                "SELECT count(*) FROM memory_entries WHERE text = 'used 0'"
            ).fetchone() == (0,)
        assert capped.health().last_error is None  # giving up is no failure
    finally:
        capped.close()


def test_a_recall_left_to_the_thread_counts_its_uses_once_and_is_no_failure(
    tmp_path, clock, monkeypatch
):
    """A recall done at once that finds the file locked (here: reading its items) goes to
    the database thread: the uses of its items are counted there, once, and health
    does not report the lock it met."""
    from toolang_memory_sqlite import memory as module

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the otter swims"))
    open_main(plugin)
    groups = spy_groups(plugin)
    real_items = module.ranked_items

    def locked_once_in_the_loop(conn, ranked, pending):
        if threading.current_thread() is threading.main_thread():
            exc = sqlite3.OperationalError("database is locked")
            exc.sqlite_errorcode = sqlite3.SQLITE_BUSY
            raise exc
        return real_items(conn, ranked, pending)

    monkeypatch.setattr(module, "ranked_items", locked_once_in_the_loop)

    async def recall():
        return await plugin.recall(_recall_request("a", "otter"))

    try:
        recalled = asyncio.run(recall())
        assert [(i.text, i.use_count) for i in recalled.items] == [("the otter swims", 1)]
        assert [how for how, _ in groups] == ["thread"]
        (entry,) = plugin.list_entries(_list_request("a"))
        assert entry.use_count == 1  # counted once, not by the recall that was left
        assert plugin.health().last_error is None
    finally:
        plugin.close()


def test_calls_are_left_to_the_thread_while_it_holds_the_connection(tmp_path, clock):
    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the otter swims"))
    open_main(plugin)
    groups = spy_groups(plugin)

    async def while_held():
        plugin._db.main_lock.acquire()  # as the thread does, serving another event loop
        asyncio.get_running_loop().call_later(0.05, plugin._db.main_lock.release)
        return await asyncio.gather(
            plugin.recall(_recall_request("a", "otter")),
            plugin.remember(_write_batch("a", "the seal dives")),
        )

    try:
        recalled, written = asyncio.run(while_held())
        assert ([i.text for i in recalled.items], written.written) == (["the otter swims"], 1)
        kinds = [(how, [type(c).__name__ for c in calls]) for how, calls in groups]
        assert kinds == [("thread", ["MemoryRecallRequest", "tuple"])]
    finally:
        plugin.close()


def _list_request(agent: str):
    from toolang_core.memory import MemoryListRequest

    return MemoryListRequest(agent_id=agent, limit=10)


def test_a_group_on_a_busy_loop_is_done_at_once_in_the_loops_thread(tmp_path, clock):
    """Concurrent calls on a loop with other work are done in the loop's thread too:
    handed to the database thread, their Python would wait for the loop's (the
    interpreter's lock), and the two threads' hand-overs of it cost more than the SQL
    done beside the loop (:mod:`toolang_memory_sqlite.group`)."""
    import time

    plugin = SQLiteMemory(tmp_path / "memory.db", MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the otter swims"))
    open_main(plugin)
    groups = spy_groups(plugin)

    async def busy_round():
        asyncio.get_running_loop().call_soon(time.sleep, 0.01)  # other work of the loop
        return await asyncio.gather(
            *(plugin.recall(_recall_request("a", "otter")) for _ in range(3)),
            *(plugin.remember(_write_batch("a", f"seal {n}")) for n in range(2)),
        )

    try:
        outcomes = asyncio.run(busy_round())
        assert [[i.text for i in o.items] for o in outcomes[:3]] == [["the otter swims"]] * 3
        assert [o.written for o in outcomes[3:]] == [1, 1]
        assert [(how, len(calls)) for how, calls in groups] == [("at once", 5)]
        assert plugin._thread is None  # the database thread was never needed
    finally:
        plugin.close()


def test_writes_that_would_wait_go_to_the_thread_and_the_recalls_beside_them_do_not(
    tmp_path, clock
):
    path = tmp_path / "memory.db"
    plugin = SQLiteMemory(path, MemorySQLiteSettings(), clock=clock)
    plugin.remember_now(_write_batch("a", "the otter swims"))
    open_main(plugin)
    groups = spy_groups(plugin)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writes

    async def scenario():
        recalls = [
            asyncio.ensure_future(plugin.recall(_recall_request("a", "otter"))) for _ in range(2)
        ]
        writes = [
            asyncio.ensure_future(plugin.remember(_write_batch("a", f"seal {n}"))) for n in (1, 2)
        ]
        recalled = await asyncio.gather(*recalls)  # answered while the writes wait
        await asyncio.sleep(0.05)
        assert not any(w.done() for w in writes)
        other.execute("COMMIT")
        return recalled, await asyncio.gather(*writes)

    try:
        recalled, written = asyncio.run(scenario())
        assert [[i.text for i in r.items] for r in recalled] == [["the otter swims"]] * 2
        assert [w.written for w in written] == [1, 1]
        kinds = [(how, [type(c).__name__ for c in calls]) for how, calls in groups]
        assert kinds == [
            ("at once", ["MemoryRecallRequest"] * 2),
            ("thread", ["tuple"] * 2),  # the writes, in one transaction
        ]
        texts = sorted(i.text for i in plugin.list_entries(_list_request("a")))
        assert texts == ["seal 1", "seal 2", "the otter swims"]
    finally:
        other.close()
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
        # (a statement firing a trigger is traced again for each run of the trigger)
        lookups = list(dict.fromkeys(s for s in statements if " key = " in s or " key IN " in s))
        assert len(lookups) == 3  # the upsert's SELECT, the forget's two DELETEs
        for statement in lookups:
            plan = " ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "memory_entries_agent_owner_key (agent_id=? AND <expr>=? AND key=?)" in plan
        texts = {i.text for i in plugin.list_entries(_listing("a", owner))}
        assert "fact 7 again" in texts and "fact 7" not in texts
        assert len(texts) == 48 and not {"fact 8", "fact 9"} & texts
    finally:
        plugin.close()
