"""A recall's work is bounded by ``ranked_matches`` whatever the memory's size
(:func:`toolang_memory_postgres.statements.candidates`): in a scope of more entries than
that, each word's matches are counted first (up to the bound), and the rarest words are
ranked by while their matches fit; words counted over the bound are remembered a while
(:class:`toolang_memory_postgres.counts.ScopeCounts`). Before, every match of every
word was read and sorted by age at each recall (34 ms at 50,000 entries an agent)."""

from __future__ import annotations

import pytest

from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver

BUDGET = 10
COMMON = 3 * BUDGET


class Statements:
    """The plugin's database with the word-counting statements recorded (the real one
    runs every statement)."""

    def __init__(self, plugin) -> None:
        self.counts: list[str] = []
        connection = plugin._connection
        opened = connection.database()
        outer = self

        class Spy:
            def __getattr__(self, name):
                return getattr(opened, name)

            def execute(self, sql, params=()):
                if sql.startswith("SELECT (SELECT count(*)"):
                    outer.counts.append(sql)
                return opened.execute(sql, params)

        connection._db = Spy()

    def words_counted(self) -> list[int]:
        """How many words each counting statement counted."""
        return [sql.count("LIMIT ?") for sql in self.counts]


@pytest.fixture
def memory(memory_factory):
    caller = MemoryCaller()
    plugin = memory_factory(ranked_matches=BUDGET)
    driver = MemoryDriver(plugin, caller)
    driver.save("a", "the quokka came to the meeting")  # the oldest
    driver.save("a", *(f"meeting notes, week {n}" for n in range(COMMON)))
    driver.save("b", *(f"another agent's quokka {n}" for n in range(COMMON)))
    yield plugin, driver
    caller.close()


def test_the_rarest_words_are_ranked_by_when_every_word_would_not_fit(memory):
    _, driver = memory
    recalled = driver.recall("a", "quokka meeting")
    assert recalled.diagnostics["mode"] == "rare-words"
    assert recalled.diagnostics["dropped_terms"] == 1  # meeting: in 31 of 31 entries
    # found though it is older than the newest BUDGET matches of the two words; another
    # agent's quokkas neither count nor come back
    assert [i.text for i in recalled.items] == ["the quokka came to the meeting"]


def test_when_every_word_is_common_the_newest_matches_are_ranked(memory):
    _, driver = memory
    recalled = driver.recall("a", "meeting notes", max_items=3)
    assert recalled.diagnostics["mode"] == "common-words"
    assert recalled.diagnostics["dropped_terms"] == 0
    newest = {f"meeting notes, week {n}" for n in range(COMMON - BUDGET, COMMON)}
    assert len(recalled.items) == 3
    assert {i.text for i in recalled.items} <= newest


def test_words_that_fit_are_all_ranked_by(memory):
    _, driver = memory
    driver.save("a", "a wombat met the quokka")
    recalled = driver.recall("a", "quokka wombat")
    assert recalled.diagnostics["mode"] == "all-words"
    assert [i.text for i in recalled.items][:1] == ["a wombat met the quokka"]


def test_a_small_scope_is_not_counted(memory_factory):
    caller = MemoryCaller()
    plugin = memory_factory(ranked_matches=BUDGET)
    driver = MemoryDriver(plugin, caller)
    try:
        driver.save("a", *(f"meeting notes, week {n}" for n in range(BUDGET)))
        spied = Statements(plugin)
        assert driver.recall("a", "meeting quokka").diagnostics["mode"] == "all-words"
        assert spied.counts == []
    finally:
        caller.close()


def test_a_word_counted_over_the_budget_is_not_counted_again_until_entries_go(memory):
    plugin, driver = memory
    spied = Statements(plugin)
    driver.recall("a", "quokka meeting")
    driver.recall("a", "quokka meeting")
    assert spied.words_counted() == [2, 1]  # meeting: over the budget, remembered
    driver.save("a", "one more meeting", thread="chat:x")  # added: still over it
    driver.recall("a", "meeting quokka")
    assert spied.words_counted() == [2, 1, 1]
    assert driver.forget("a", thread_id="chat:x") == 1  # deleted: counted again
    driver.recall("a", "meeting quokka")
    assert spied.words_counted() == [2, 1, 1, 2]


def test_one_common_word_is_counted_and_its_newest_matches_ranked(memory):
    _, driver = memory
    recalled = driver.recall("a", "notes", max_items=3)
    assert recalled.diagnostics["mode"] == "common-words"
    newest = {f"meeting notes, week {n}" for n in range(COMMON - BUDGET, COMMON)}
    assert {i.text for i in recalled.items} <= newest
