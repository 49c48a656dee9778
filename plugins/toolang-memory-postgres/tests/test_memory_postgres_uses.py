"""Use counts in the PostgreSQL plugin: written behind (never a commit per recall, the
counts of several nodes adding up), a bounded boost in ranking, and pruning past
``max_entries`` that forgets the least used first."""

from __future__ import annotations

import pytest

from toolang_core.memory.kit import DAY
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver


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
            f'SELECT key, use_count FROM "{entries_schema}".memory_entries WHERE agent_id = %s',
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

    # max_entries: a write past it forgets never-used entries first, the oldest first
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
