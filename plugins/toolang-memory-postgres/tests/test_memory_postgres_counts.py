"""A recall's count of its scope's live entries (bm25's measure of how rare a word is)
is kept a while (:mod:`toolang_memory_postgres.counts`): counted once, kept in step with
this node's writes, counted again after deletions, keyed writes and
``COUNT_SECONDS`` (which is when other nodes' writes are seen)."""

from __future__ import annotations

import pytest

from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_postgres.counts import COUNT_SECONDS


class Counted:
    """The plugin's database with its ``count(*)`` statements counted (the real one
    runs every statement)."""

    def __init__(self, plugin) -> None:
        self.statements = 0
        connection = plugin._connection
        opened = connection.database()
        outer = self

        class Spy:
            def __getattr__(self, name):
                return getattr(opened, name)

            def execute(self, sql, params=()):
                if sql.startswith("SELECT count(*)"):
                    outer.statements += 1
                return opened.execute(sql, params)

        connection._db = Spy()


@pytest.fixture
def node(memory_factory, clock):
    caller = MemoryCaller()
    made = []

    def make():
        plugin = memory_factory(clock)
        made.append(plugin)
        return plugin, MemoryDriver(plugin, caller)

    yield make
    caller.close()


def kept(plugin) -> dict:
    return {scope: count for scope, (count, _) in plugin._connection.counts._kept.items()}


def test_a_scope_is_counted_once_and_kept_in_step_with_this_nodes_writes(node):
    plugin, memory = node()
    memory.save("a", "otters hold hands", "otters sleep afloat", thread="chat:1")
    counted = Counted(plugin)
    assert memory.recall("a", "otters").items
    assert memory.recall("a", "otters afloat").items
    assert counted.statements == 1
    assert kept(plugin) == {("a", None, None): 2}
    memory.save("a", "otters eat urchins", "urchins are spiny", thread="chat:2")
    assert kept(plugin) == {("a", None, None): 4}
    memory.recall("a", "otters", thread="chat:2")  # another scope: counted
    assert counted.statements == 2
    assert kept(plugin)[("a", None, "chat:2")] == 2
    memory.save("a", "otters again", thread="chat:2")
    memory.save("a", "someone else's", owner="ada")  # another owner's: not counted here
    assert kept(plugin) == {("a", None, None): 5, ("a", None, "chat:2"): 3}


def test_deletions_and_keyed_writes_have_the_scope_counted_again(node):
    plugin, memory = node()
    memory.save("a", "otters hold hands", "otters sleep afloat")
    counted = Counted(plugin)
    memory.recall("a", "otters")
    memory.save("a", "otters by key", key="k")  # an upsert: inserted or replaced
    assert kept(plugin) == {}
    memory.recall("a", "otters")
    assert kept(plugin) == {("a", None, None): 3}
    assert memory.forget("a", keys=("k",)) == 1
    assert kept(plugin) == {}
    memory.recall("a", "otters")
    assert counted.statements == 3
    assert kept(plugin) == {("a", None, None): 2}


def test_other_nodes_writes_are_counted_once_the_count_is_old(node, clock):
    plugin, memory = node()
    _, other = node()
    memory.save("a", "otters hold hands")
    memory.recall("a", "otters")
    other.save("a", "otters sleep afloat", "otters eat urchins")
    memory.recall("a", "otters")
    assert kept(plugin) == {("a", None, None): 1}  # (ranked with at least its matches)
    clock.now += COUNT_SECONDS
    memory.recall("a", "otters")
    assert kept(plugin) == {("a", None, None): 3}
