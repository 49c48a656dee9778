"""The memory-plugin conformance suite: the contract of ``docs/hooks/memory.md``, as tests.

A memory plugin's test module subclasses :class:`MemoryConformance` and provides one
fixture, ``toolang_memory_factory``: a callable that builds a new plugin object over
one fresh backing store for the test (every call, the same store — as a second process
would see it)::

    class TestMyMemory(MemoryConformance):
        @pytest.fixture
        def toolang_memory_factory(self, tmp_path):
            return lambda: MyMemory(tmp_path / "memory.db")

Methods may be synchronous or ``async``: the suite calls them through
:class:`~toolang_core.testing.memory_calls.MemoryCaller`, which awaits what needs
awaiting on one event loop of its own.

What a subclass may set or override:

``persistent``
    ``True`` (the default): entries written through one plugin object are seen by the
    next one the factory builds. Set ``False`` for a plugin that keeps entries in the
    object itself.
``max_entry_chars``
    ``None`` (the default): the plugin stores an entry of :data:`LARGE_ENTRY_CHARS`
    characters whole — it comes back from ``list_entries`` and ``recall`` unchanged. A
    number: the plugin's documented limit; the suite stores an entry of exactly that
    size whole and expects a longer one to be refused with an error that states the
    limit (the number appears in the message, e.g. ``1000000`` or ``1,000,000``),
    storing nothing of its batch.
``ttl_seconds``
    The time to live the TTL tests give an entry (the suite then waits that long).
``tracks_uses``
    ``True``: the plugin counts uses — an item's ``use_count`` is the number of recalls
    that returned it (this one included) and ``last_used_at`` the time of the latest,
    both in recall and in ``list_entries``, kept per agent and owner. ``None`` (the
    default, for plugins written before 0.2 added the fields): a plugin that reports a
    use is held to those rules; one that reports none must report ``0`` and ``None``
    throughout (never a wrong count), and the suite warns (``DeprecationWarning``) that
    0.3 will require counting.
``failing(plugin)``
    A context manager inside which the plugin's next write fails for a real reason
    (a locked file, a closed connection…). Without it the test of ``health().last_error``
    is skipped.

Each test names the rule it checks. The texts use invented words, so a match is a
match for every kind of plugin (full-text, vector, …): tests ask whether an entry is
*among* the results, never that nothing else is.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, ClassVar

import pytest

from toolang_core.memory.types import MemoryForget, MemoryPlugin
from toolang_core.testing.memory_calls import (
    CALL_TIMEOUT,
    MemoryCaller,
    MemoryDriver,
    tick,
    wait_past,
)

LARGE_ENTRY_CHARS = 200_000
"""The size of the large entry every plugin without a stated limit must store whole."""

UNICODE_CASES = {
    # id: (stored text, query in the same script)
    "chinese": ("我的猫叫小白，它喜欢在窗台上晒太阳。", "小白"),  # noqa: RUF001
    "japanese": ("東京駅の近くにある喫茶店で珈琲を飲んだ。", "喫茶店"),
    "korean": ("서울에서 가장 맛있는 김치찌개 집은 종로에 있다.", "서울"),
    "arabic": ("القطة تحب الحليب الدافئ في الصباح الباكر", "الحليب"),
    "hebrew": ("הספרייה העירונית נפתחת בשעה תשע בבוקר", "הספרייה"),
    "emoji": ("favourite snack 🍕 with extra 🌶️ on fridays", "🍕"),
    "combining-marks-in-text": ("the cafe\u0301 near l'e\u0301glise opens early", "café"),
    "combining-marks-in-query": ("the café near l'église opens early", "cafe\u0301"),
    "mixed-direction": ("order 4521 شحنة arrived at the depot", "شحنة"),
}

HOSTILE_QUERIES = (
    '"',
    '"unbalanced',
    "NEAR(a b)",
    "NEAR/3",
    "a*",
    "*",
    "-b",
    "(",
    ")",
    "a AND",
    "OR",
    "NOT x",
    "col:value",
    "^start",
    "{a b}: c",
    "\\",
    "' OR 1=1 --",
    "",
    "   ",
    "%_%",
)


def large_text(chars: int, marker: str) -> str:
    """``chars`` characters of varied words, starting with ``marker``."""
    words = ("harbour", "lantern", "quarry", "meadow", "cobalt", "ferry", "orchard", "tundra")
    parts = [marker]
    size = len(marker)
    n = 0
    while size < chars:
        word = f"{words[n % len(words)]}{n}"
        parts.append(word)
        size += len(word) + 1
        n += 1
    return " ".join(parts)[:chars]


class MemoryConformance:
    """Subclass and provide ``toolang_memory_factory`` (see the module docstring)."""

    persistent: ClassVar[bool] = True
    max_entry_chars: ClassVar[int | None] = None
    ttl_seconds: ClassVar[float] = 0.3
    tracks_uses: ClassVar[bool | None] = None

    def failing(self, plugin: Any) -> AbstractContextManager[None]:
        """Override: make the plugin's next write fail for a real reason while inside."""
        pytest.skip(f"{type(self).__name__} does not say how to provoke a failure (failing())")

    @pytest.fixture
    def memory_caller(self) -> Iterator[MemoryCaller]:
        caller = MemoryCaller()
        yield caller
        caller.close()

    @pytest.fixture
    def memory(
        self, toolang_memory_factory: Callable[[], MemoryPlugin], memory_caller: MemoryCaller
    ) -> Iterator[MemoryDriver]:
        plugin = toolang_memory_factory()
        yield MemoryDriver(plugin, memory_caller)
        memory_caller(plugin.close)

    # round trip ------------------------------------------------------------------------

    def test_a_remembered_entry_is_recalled_by_a_word_of_its_text(self, memory):
        memory.save("agent-a", "The spare key hangs behind the zorblax painting")
        assert "The spare key hangs behind the zorblax painting" in memory.texts(
            "agent-a", "where is the zorblax"
        )

    def test_remember_reports_how_many_entries_it_wrote(self, memory):
        result = memory.save("agent-a", "first quillon", "second quillon", "third quillon")
        assert result.written == 3

    def test_list_entries_returns_what_was_remembered_newest_first(self, memory):
        for text in ("oldest vellum", "middle vellum", "newest vellum"):
            memory.save("agent-a", text)
            tick()
        assert memory.listed_texts("agent-a") == ["newest vellum", "middle vellum", "oldest vellum"]

    def test_entries_outlive_the_plugin_object_that_wrote_them(
        self, memory, toolang_memory_factory, memory_caller
    ):
        if not self.persistent:
            pytest.skip("the plugin keeps entries in the object (persistent = False)")
        memory.save("agent-a", "the gravlox recipe needs dill")
        memory_caller(memory.plugin.close)
        again = MemoryDriver(toolang_memory_factory(), memory_caller)
        try:
            assert "the gravlox recipe needs dill" in again.texts("agent-a", "gravlox")
        finally:
            memory_caller(again.plugin.close)
        memory.plugin = toolang_memory_factory()  # the fixture closes this one

    # scoping ---------------------------------------------------------------------------

    def test_recall_never_returns_another_agents_entries(self, memory):
        memory.save("agent-a", "agent a keeps the brindlewick code 1234")
        memory.save("agent-b", "agent b keeps the brindlewick code 9876")
        result = memory.recall("agent-a", "brindlewick code")
        assert [item.text for item in result.items] == ["agent a keeps the brindlewick code 1234"]
        assert {item.provenance.agent_id for item in result.items} == {"agent-a"}

    def test_list_never_returns_another_agents_entries(self, memory):
        memory.save("agent-a", "a private note")
        memory.save("agent-b", "b private note")
        assert memory.listed_texts("agent-a") == ["a private note"]

    def test_an_agent_without_entries_recalls_nothing(self, memory):
        memory.save("agent-b", "only b knows the plimsoll secret")
        assert memory.recall("agent-a", "plimsoll secret").items == ()

    def test_the_same_key_in_two_agents_names_two_entries(self, memory):
        memory.save("agent-a", "a likes tea", key="drink")
        memory.save("agent-b", "b likes coffee", key="drink")
        assert memory.listed_texts("agent-a") == ["a likes tea"]
        assert memory.listed_texts("agent-b") == ["b likes coffee"]

    def test_recall_never_returns_another_owners_entries_of_the_same_agent(self, memory):
        memory.save("agent-a", "ada keeps her bank pin quillfeather 4711", owner="ada")
        memory.save("agent-a", "bob keeps his bank pin quillfeather 0815", owner="bob")
        memory.save("agent-a", "the operator keeps the quillfeather pin 1234")
        for owner, word in (("ada", "4711"), ("bob", "0815"), (None, "1234")):
            result = memory.recall("agent-a", "quillfeather bank pin", owner=owner)
            assert [word in item.text for item in result.items] == [True], owner
            assert {item.provenance.owner for item in result.items} == {owner}

    def test_list_never_returns_another_owners_entries(self, memory):
        memory.save("agent-a", "ada's note", owner="ada")
        memory.save("agent-a", "bob's note", owner="bob")
        assert memory.listed_texts("agent-a", owner="ada") == ["ada's note"]
        assert memory.listed_texts("agent-a", owner="bob") == ["bob's note"]
        assert memory.listed_texts("agent-a") == []

    def test_the_same_key_for_two_owners_names_two_entries(self, memory):
        memory.save("agent-a", "ada likes tea", key="drink", owner="ada")
        memory.save("agent-a", "bob likes coffee", key="drink", owner="bob")
        assert memory.listed_texts("agent-a", owner="ada") == ["ada likes tea"]
        assert memory.listed_texts("agent-a", owner="bob") == ["bob likes coffee"]

    def test_forget_never_touches_another_owners_entries(self, memory):
        memory.save("agent-a", "bob keyed", key="k", owner="bob")
        memory.save("agent-a", "bob plain", owner="bob")
        memory.forget("agent-a", keys=("k",), owner="ada")
        assert memory.forget("agent-a", owner="ada") == 0
        assert memory.forget("agent-a") == 0
        assert sorted(memory.listed_texts("agent-a", owner="bob")) == ["bob keyed", "bob plain"]

    def test_thread_id_narrows_recall_to_that_thread(self, memory):
        memory.save("agent-a", "thread one mentions the quokka", thread="chat:1")
        memory.save("agent-a", "thread two mentions the quokka", thread="chat:2")
        memory.save("agent-a", "no thread mentions the quokka")
        narrowed = memory.texts("agent-a", "quokka", thread="chat:1")
        assert narrowed == ["thread one mentions the quokka"]
        assert len(memory.texts("agent-a", "quokka")) == 3

    def test_thread_id_narrows_list_to_that_thread(self, memory):
        memory.save("agent-a", "in thread one", thread="chat:1")
        memory.save("agent-a", "in thread two", thread="chat:2")
        assert memory.listed_texts("agent-a", thread="chat:2") == ["in thread two"]

    # upsert ----------------------------------------------------------------------------

    def test_a_second_write_with_the_same_key_replaces_the_first(self, memory):
        memory.save("agent-a", "the wifi password is marmalade", key="wifi")
        memory.save("agent-a", "the wifi password is persimmon", key="wifi")
        assert memory.listed_texts("agent-a") == ["the wifi password is persimmon"]
        assert "the wifi password is marmalade" not in memory.texts("agent-a", "marmalade")
        assert memory.texts("agent-a", "persimmon") == ["the wifi password is persimmon"]

    def test_an_upserted_entry_keeps_its_key_and_takes_the_new_kind(self, memory):
        memory.save("agent-a", "old", key="k", kind="note")
        memory.save("agent-a", "new", key="k", kind="fact")
        (item,) = memory.listed("agent-a")
        assert (item.key, item.kind, item.text) == ("k", "fact", "new")

    def test_entries_without_a_key_are_never_merged(self, memory):
        memory.save("agent-a", "same words")
        memory.save("agent-a", "same words")
        assert memory.listed_texts("agent-a") == ["same words", "same words"]

    # forget ----------------------------------------------------------------------------

    def test_forget_by_key_deletes_only_that_entry(self, memory):
        memory.save("agent-a", "keep me", key="keep")
        memory.save("agent-a", "drop me", key="drop")
        memory.save("agent-a", "no key")
        assert memory.forget("agent-a", keys=("drop",)) == 1
        assert sorted(memory.listed_texts("agent-a")) == ["keep me", "no key"]

    def test_a_forgotten_entry_is_no_longer_recalled(self, memory):
        memory.save("agent-a", "the vault combination is wobbegong", key="vault")
        memory.forget("agent-a", keys=("vault",))
        assert memory.recall("agent-a", "wobbegong").items == ()

    def test_forget_by_an_unknown_key_forgets_nothing(self, memory):
        memory.save("agent-a", "stays", key="k")
        assert memory.forget("agent-a", keys=("missing",)) == 0
        assert memory.listed_texts("agent-a") == ["stays"]

    def test_forget_by_thread(self, memory):
        memory.save("agent-a", "thread one", thread="chat:1")
        memory.save("agent-a", "thread two", thread="chat:2")
        assert memory.forget("agent-a", thread_id="chat:1") == 1
        assert memory.listed_texts("agent-a") == ["thread two"]

    def test_forget_by_kind(self, memory):
        memory.save("agent-a", "a fact", kind="fact")
        memory.save("agent-a", "a note", kind="note")
        assert memory.forget("agent-a", kind="fact") == 1
        assert memory.listed_texts("agent-a") == ["a note"]

    def test_forget_before_a_time_deletes_only_older_entries(self, memory):
        memory.save("agent-a", "older")
        tick()
        memory.save("agent-a", "newer")
        newer = next(i for i in memory.listed("agent-a") if i.text == "newer")
        assert memory.forget("agent-a", before=newer.provenance.created_at) == 1
        assert memory.listed_texts("agent-a") == ["newer"]

    def test_filters_combine(self, memory):
        memory.save("agent-a", "fact in one", kind="fact", thread="chat:1")
        memory.save("agent-a", "note in one", kind="note", thread="chat:1")
        memory.save("agent-a", "fact in two", kind="fact", thread="chat:2")
        assert memory.forget("agent-a", kind="fact", thread_id="chat:1") == 1
        assert sorted(memory.listed_texts("agent-a")) == ["fact in two", "note in one"]

    def test_an_empty_filter_forgets_everything_of_the_agent_and_nothing_of_another(self, memory):
        memory.save("agent-a", "a one", "a two", thread="chat:1")
        memory.save("agent-a", "a keyed", key="k")
        memory.save("agent-b", "b one", thread="chat:1")
        memory.save("agent-b", "b keyed", key="k")
        assert memory.forget("agent-a") == 3
        assert memory.listed_texts("agent-a") == []
        assert sorted(memory.listed_texts("agent-b")) == ["b keyed", "b one"]

    def test_forget_by_key_or_filter_never_touches_another_agent(self, memory):
        memory.save("agent-b", "b keyed", key="k")
        memory.save("agent-b", "b fact", kind="fact", thread="chat:1")
        memory.forget("agent-a", keys=("k",))
        memory.forget("agent-a", kind="fact")
        memory.forget("agent-a", thread_id="chat:1")
        memory.forget("agent-a", before=time.time() + 3600)
        assert sorted(memory.listed_texts("agent-b")) == ["b fact", "b keyed"]

    # limits ----------------------------------------------------------------------------

    def test_recall_returns_at_most_max_items(self, memory):
        memory.save("agent-a", *(f"gazump number {n}" for n in range(10)))
        assert len(memory.recall("agent-a", "gazump", max_items=3).items) == 3

    def test_recall_returns_at_most_max_chars(self, memory):
        memory.save("agent-a", *(f"fandangle {n} " + "x" * 490 for n in range(10)))
        items = memory.recall("agent-a", "fandangle", max_chars=1200).items
        assert sum(len(item.text) for item in items) <= 1200
        assert len(items) >= 2

    def test_list_returns_at_most_limit(self, memory):
        memory.save("agent-a", *(f"entry {n}" for n in range(10)))
        assert len(memory.listed("agent-a", limit=4)) == 4

    # ranking ---------------------------------------------------------------------------

    def test_a_clearly_better_match_ranks_first(self, memory):
        best = "The staging server deploy key is kept in the blue vault"
        memory.save("agent-a", best)
        tick()  # the weaker matches are newer: recency must not beat relevance
        memory.save(
            "agent-a",
            "The printer on the third floor is out of toner again",
            "Lunch with the server team moved to Thursday",
            "Renew the domain before the end of the month",
            "The vault in the basement is being repainted",
        )
        items = memory.recall("agent-a", "staging server deploy key").items
        assert items[0].text == best

    def test_scores_are_best_first(self, memory):
        memory.save(
            "agent-a",
            "wombat wombat burrow",
            "a wombat sleeps",
            "the wombat burrow is deep and the wombat is asleep",
        )
        scores = [item.score for item in memory.recall("agent-a", "wombat burrow").items]
        assert scores == sorted(scores, reverse=True)

    def test_items_ids_are_distinct(self, memory):
        memory.save("agent-a", "lorikeet one", "lorikeet two", "lorikeet three")
        ids = [item.id for item in memory.recall("agent-a", "lorikeet").items]
        assert len(ids) == 3
        assert len(set(ids)) == 3
        assert all(isinstance(i, str) and i for i in ids)

    # text ------------------------------------------------------------------------------

    @pytest.mark.parametrize("case", sorted(UNICODE_CASES))
    def test_unicode_round_trips_and_is_found_by_a_query_in_its_script(self, memory, case):
        text, query = UNICODE_CASES[case]
        memory.save("agent-a", text)
        memory.save("agent-a", "an unrelated entry about the weather")
        assert memory.listed_texts("agent-a")[-1] == text  # stored exactly, not normalised
        assert text in memory.texts("agent-a", query)

    def test_unicode_agent_and_thread_ids_scope_like_any_other(self, memory):
        agent, thread = "агент-😀", "chat:שלום"
        memory.save(agent, "the ibex grazes", thread=thread)
        assert memory.texts(agent, "ibex", thread=thread) == ["the ibex grazes"]
        assert memory.recall("агент", "ibex").items == ()

    @pytest.mark.parametrize("query", HOSTILE_QUERIES)
    def test_search_syntax_in_the_query_is_text_never_an_error(self, memory, query):
        memory.save("agent-a", 'a note with "quotes", (parentheses) and a * star - dash')
        result = memory.recall("agent-a", query)
        assert isinstance(result.items, tuple)

    @pytest.mark.parametrize(
        "query", ['"zorblax', "zorblax*", "-zorblax", "(zorblax)", "NEAR(zorblax", "zorblax:"]
    )
    def test_a_word_wrapped_in_search_syntax_is_still_found(self, memory, query):
        memory.save("agent-a", "the zorblax is in the shed")
        assert "the zorblax is in the shed" in memory.texts("agent-a", query)

    def test_search_syntax_in_stored_text_round_trips(self, memory):
        text = 'col:value NEAR(a b) "quoted" -minus * (paren) \\ AND OR NOT'
        memory.save("agent-a", text)
        assert memory.listed_texts("agent-a") == [text]

    def test_a_large_entry_round_trips_whole(self, memory):
        size = self.max_entry_chars or LARGE_ENTRY_CHARS
        text = large_text(size, "quintessentialmarker")
        assert len(text) == size
        assert memory.save("agent-a", text).written == 1
        assert memory.listed_texts("agent-a") == [text]
        recalled = memory.texts("agent-a", "quintessentialmarker", max_chars=size)
        assert recalled == [text]

    def test_an_entry_over_the_stated_limit_is_refused_and_nothing_of_its_batch_stored(
        self, memory
    ):
        if self.max_entry_chars is None:
            pytest.skip("the plugin states no entry size limit (max_entry_chars = None)")
        limit = self.max_entry_chars
        with pytest.raises(Exception, match=f"{limit}|{limit:,}"):
            memory.save("agent-a", "small one", "y" * (limit + 1))
        assert memory.listed_texts("agent-a") == []

    def test_meta_round_trips(self, memory):
        meta = {"source": "doc-7", "tags": ["a", "ü"], "n": 3}
        memory.save("agent-a", "with meta", meta=meta)
        (item,) = memory.listed("agent-a")
        assert dict(item.meta) == meta

    # time to live ----------------------------------------------------------------------

    def test_an_expired_entry_is_not_recalled(self, memory):
        memory.save("agent-a", "the flumph expires", ttl=self.ttl_seconds)
        wait_past(time.time() + self.ttl_seconds)
        assert "the flumph expires" not in memory.texts("agent-a", "flumph")

    def test_an_expired_entry_is_not_listed(self, memory):
        memory.save("agent-a", "expiring", ttl=self.ttl_seconds)
        memory.save("agent-a", "lasting")
        wait_past(time.time() + self.ttl_seconds)
        assert memory.listed_texts("agent-a") == ["lasting"]

    def test_an_entry_within_its_ttl_is_recalled(self, memory):
        memory.save("agent-a", "the grommet lasts an hour", ttl=3600)
        assert memory.texts("agent-a", "grommet") == ["the grommet lasts an hour"]

    # concurrency -----------------------------------------------------------------------

    def test_concurrent_writers_lose_nothing(self, memory):
        writers, each = 8, 25
        start = threading.Barrier(writers)
        errors: list[BaseException] = []

        def write(n: int) -> None:
            try:
                start.wait()
                for i in range(each):
                    memory.save("agent-a", f"writer {n} entry {i} gallimaufry", thread=f"w:{n}")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CALL_TIMEOUT)
        assert errors == []
        expected = {
            f"writer {n} entry {i} gallimaufry" for n in range(writers) for i in range(each)
        }
        assert set(memory.listed_texts("agent-a")) == expected
        assert len(memory.listed("agent-a", thread="w:3")) == each

    def test_concurrent_upserts_of_one_key_leave_one_entry(self, memory):
        writers = 6
        start = threading.Barrier(writers)
        errors: list[BaseException] = []

        def write(n: int) -> None:
            try:
                start.wait()
                for i in range(10):
                    memory.save("agent-a", f"version {n}.{i}", key="contended")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CALL_TIMEOUT)
        assert errors == []
        assert len(memory.listed("agent-a")) == 1

    def test_recall_while_others_write_never_fails(self, memory):
        memory.save("agent-a", "the kestrel nests early")
        stop = threading.Event()
        errors: list[BaseException] = []

        def write() -> None:
            n = 0
            while not stop.is_set():
                try:
                    memory.save("agent-a", f"kestrel sighting {n}")
                except BaseException as exc:
                    errors.append(exc)
                    return
                n += 1

        writer = threading.Thread(target=write)
        writer.start()
        try:
            for _ in range(30):
                assert memory.texts("agent-a", "kestrel", max_items=50)
        finally:
            stop.set()
            writer.join(CALL_TIMEOUT)
        assert errors == []

    # health ----------------------------------------------------------------------------

    def test_health_is_ok_and_counts_entries(self, memory):
        memory.save("agent-a", "one", "two")
        memory.save("agent-b", "three")
        health = memory.health()
        assert (health.status, health.entries) == ("ok", 3)
        assert health.provider

    def test_health_reports_the_last_error_after_a_failure(self, memory):
        memory.save("agent-a", "written before the failure")
        with self.failing(memory.plugin), pytest.raises(Exception):  # noqa: B017, PT011
            memory.save("agent-a", "written while failing")
        health = memory.health()
        assert health.status != "down"
        assert health.last_error
        assert health.last_error_at is not None
        assert health.last_error_at <= time.time()
        assert memory.listed_texts("agent-a") == ["written before the failure"]

    # use counts -------------------------------------------------------------------------

    def test_each_recall_that_returns_an_entry_counts_one_use(self, memory):
        memory.save("agent-a", "the gryphel nests on the north tower", key="used")
        memory.save("agent-a", "an unrelated note about plimsolls", key="unused")
        before = time.time()
        counts = [memory.recall("agent-a", "gryphel").items[0].use_count for _ in range(3)]
        listed = {i.key: i for i in memory.listed("agent-a")}
        if self.tracks_uses is None and counts == [0, 0, 0]:  # a plugin from before 0.2
            warnings.warn(
                f"{type(self).__name__}: the plugin reports no use counts; count them "
                "(MemoryItem.use_count, last_used_at) and set tracks_uses = True — "
                "the memory conformance suite requires them from 0.3",
                DeprecationWarning,
                stacklevel=1,
            )
            assert (listed["used"].use_count, listed["used"].last_used_at) == (0, None)
            return
        assert counts == [1, 2, 3]
        used, unused = listed["used"], listed["unused"]
        assert used.use_count == 3
        assert used.last_used_at is not None
        assert before - 1 <= used.last_used_at <= time.time() + 1
        assert (unused.use_count, unused.last_used_at) == (0, None)

    def test_use_counts_are_kept_per_agent_and_owner(self, memory):
        memory.save("agent-a", "the gryphel nests on the north tower", key="k")
        memory.save("agent-b", "the gryphel nests on the north tower", key="k")
        memory.save("agent-a", "the gryphel nests on the north tower", key="k", owner="ann")
        memory.recall("agent-a", "gryphel")
        memory.recall("agent-a", "gryphel")
        reported = memory.listed("agent-a")[0].use_count
        expected = 0 if self.tracks_uses is None and reported == 0 else 2
        assert [i.use_count for i in memory.listed("agent-a")] == [expected]
        assert [i.use_count for i in memory.listed("agent-b")] == [0]
        assert [i.use_count for i in memory.listed("agent-a", owner="ann")] == [0]

    # provider and provenance -----------------------------------------------------------

    def test_recall_names_the_provider_and_fills_provenance(self, memory):
        before = time.time()
        memory.save(
            "agent-a",
            "the heron fishes at dawn",
            key="heron",
            kind="fact",
            thread="chat:7",
            turn="turn-42",
            origin="tool",
        )
        result = memory.recall("agent-a", "heron")
        (item,) = result.items
        assert result.provider
        p = item.provenance
        assert (p.agent_id, p.thread_id, p.turn_id, p.origin) == (
            "agent-a",
            "chat:7",
            "turn-42",
            "tool",
        )
        assert before - 1 <= p.created_at <= p.updated_at <= time.time() + 1
        assert (item.key, item.kind) == ("heron", "fact")

    def test_an_upsert_moves_updated_at_and_keeps_created_at(self, memory):
        memory.save("agent-a", "first", key="k")
        (first,) = memory.listed("agent-a")
        tick()
        memory.save("agent-a", "second", key="k")
        (second,) = memory.listed("agent-a")
        assert second.provenance.created_at == first.provenance.created_at
        assert second.provenance.updated_at > first.provenance.updated_at

    def test_listed_items_carry_their_provenance(self, memory):
        memory.save("agent-a", "listed", thread="chat:1", turn="t-1", origin="knowledge")
        (item,) = memory.listed("agent-a")
        assert (item.provenance.agent_id, item.provenance.thread_id) == ("agent-a", "chat:1")
        assert (item.provenance.turn_id, item.provenance.origin) == ("t-1", "knowledge")

    def test_write_and_forget_results_name_the_provider(self, memory):
        assert memory.save("agent-a", "x", key="k").provider
        assert memory.call(memory.plugin.forget, MemoryForget("agent-a", keys=("k",))).provider
