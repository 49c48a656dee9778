"""The plugin in a runtime: chosen by ``[memory] plugin = "postgres"`` on a PostgreSQL
store, one memory for every node; and its own rules (language, relevance, locks)."""

from __future__ import annotations

import asyncio
import shutil

import pytest

import toolang_memory_postgres as plugin
import toolang_store_postgres
from toolang_core import AFTER_KIND, Runtime
from toolang_core.memory import MemoryEntry, MemoryRecallRequest, MemoryWriteBatch
from toolang_core.testing.models import text
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_core.testing.runtimes import plugin_runtime, serve_turns

MEMORY_ON = '[memory]\nplugin = "postgres"\n'
PG = {"store-postgres": toolang_store_postgres}


def batch(agent: str, *texts: str, **fields) -> MemoryWriteBatch:
    return MemoryWriteBatch(
        agent_uri=f"toolang:agent/{agent}",
        agent_id=agent,
        entries=tuple(MemoryEntry(text=t) for t in texts),
        **fields,
    )


def recall(memory, agent: str, query: str) -> list[str]:
    request = MemoryRecallRequest(
        agent_uri=f"toolang:agent/{agent}", agent_id=agent, query_text=query
    )
    return [item.text for item in memory.recall_now(request).items]


@pytest.fixture
def node_b(tmp_path, toolang_pg_config):
    """A second runtime with its own home (another machine) on the same store."""
    home = ToolangHome(tmp_path / "node-b")
    home.path.mkdir()
    env = {"HOME": str(home.path)}

    def runtime(config, *, plugins):
        home.write_config(config)
        return Runtime.with_plugins(home.load(env), plugins.items(), env=env)

    def make(model, key_from):
        # Every node of one store seals approvals with one key: node A's, copied over.
        (home.path / ".toolang").mkdir(exist_ok=True)
        shutil.copy(key_from / "approval.key", home.path / ".toolang" / "approval.key")
        config = toolang_pg_config + MEMORY_ON
        return plugin_runtime(runtime, plugin.NAME, plugin, model=model, plugins=PG, config=config)

    return make


def memory_write(runtime, turn_id: str) -> dict:
    """The turn's ``memory_write`` stage, as its after-turn record has it."""
    store = runtime.open_store()
    try:
        stages = store.get_record(AFTER_KIND, turn_id).data["stages"]
    finally:
        store.close()
    (write,) = [s for s in stages if s["stage"] == "memory_write"]
    return write


def test_a_turn_remembered_on_one_node_is_recalled_on_another_in_its_next_turn(  # noqa: PLR0917
    toolang_runtime, toolang_scripted_model, toolang_pg_config, node_b, pg, entries_schema
):  # fmt: skip
    model_a = toolang_scripted_model([text("noted"), text("noted too")])
    a = plugin_runtime(
        toolang_runtime,
        plugin.NAME,
        plugin,
        settings="lock_timeout_seconds = 0.2",
        model=model_a,
        plugins=PG,
        config=toolang_pg_config + MEMORY_ON,
    )
    (turn_id,) = serve_turns(a, "my locker code is quetzal-4471")
    assert not (a.config.home / "plugins" / "memory-sqlite.db").exists()
    assert memory_write(a, turn_id)["ok"] is True  # committed before the turn's record says so
    # A write that cannot commit (another session holds the table against writes) is
    # reported by the turn, which still completes; nothing of it is stored.
    with pg.transaction():
        pg.execute(f'LOCK TABLE "{entries_schema}".memory_entries IN EXCLUSIVE MODE')
        (failed_id,) = serve_turns(a, "this exchange is never stored: kakapo")
    write = memory_write(a, failed_id)
    assert write["ok"] is False
    assert "memory-postgres: remember on" in write["detail"]["error"]
    # The run ended: health is the next run's plugin object's, on the same one entry.
    health = asyncio.run(a.memory.health())
    assert (health.status, health.provider, health.entries) == ("ok", "postgres", 1)

    model_b = toolang_scripted_model([text("quetzal-4471")])
    b = node_b(model_b, a.config.home)
    serve_turns(b, "what is my quetzal locker code?")
    (call,) = model_b.calls
    prompt = "\n".join(m.content for m in call.messages)
    assert "my locker code is quetzal-4471" in prompt  # recalled from node A's write


def test_on_an_sqlite_store_the_plugin_does_not_start_and_says_why(toolang_runtime):
    runtime = toolang_runtime(MEMORY_ON, plugins={plugin.NAME: plugin})
    service = runtime.memory
    assert service is not None
    health = asyncio.run(service.health())
    assert health.status == "down"
    assert '[store] backend = "sqlite"' in (health.detail or "") + (health.last_error or "")


def test_language_relevance_and_scoping(memory_factory, pg, entries_schema):
    english = memory_factory()
    english.remember_now(batch("a", "the gardeners were planting tulips"))
    english.remember_now(batch("a", "planting notes of the owner", owner="u1"))
    # Stemming: 'planted' finds 'planting'; the owner's entry stays the owner's.
    assert recall(english, "a", "who planted them") == ["the gardeners were planting tulips"]
    simple = memory_factory(language="simple", relevance="ts_rank_cd")
    simple.remember_now(batch("a", "the gardener was planting roses"))
    assert recall(simple, "a", "planting roses") == ["the gardener was planting roses"]
    assert recall(simple, "a", "planted roses") == ["the gardener was planting roses"]  # 'roses'
    languages = pg.execute(
        f'SELECT language::text, count(*) FROM "{entries_schema}".memory_entries '
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert languages == [("english", 2), ("simple", 1)]
    # A rare word outranks a common one (bm25's IDF), whatever the order of writing.
    rare = memory_factory()
    rare.remember_now(batch("r", *[f"the weekly meeting number {n}" for n in range(8)]))
    rare.remember_now(batch("r", "the zymurgy club meets on friday"))
    rare.remember_now(batch("r", "another weekly meeting"))
    assert recall(rare, "r", "zymurgy meeting")[0] == "the zymurgy club meets on friday"


def test_a_nul_is_written_out_in_text_key_kind_and_query(memory_factory):
    """PostgreSQL's ``text`` cannot hold a NUL: an entry holding one was refused with
    its whole batch (a knowledge-saver batch with a tool's binary output was lost), and
    a key, a kind or a query holding one raised. Each is kept written out as ``\\x00``,
    as every store keeps text."""
    memory = memory_factory()
    entries = (
        MemoryEntry(text="zip header PK\x00\x00 seen", key="k\x00", kind="note\x00"),
        MemoryEntry(text="plain entry about zip files"),
    )
    result = memory.remember_now(
        MemoryWriteBatch(agent_uri="toolang:agent/a", agent_id="a", entries=entries)
    )
    assert result.written == 2
    request = MemoryRecallRequest(
        agent_uri="toolang:agent/a", agent_id="a", query_text="zip header\x00"
    )
    items = memory.recall_now(request).items
    assert items[0].text == "zip header PK\\x00\\x00 seen"
    assert (items[0].key, items[0].kind) == ("k\\x00", "note\\x00")


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match="language: expected the name of a PostgreSQL text"):
        plugin.MemoryPostgresSettings(language="english; DROP TABLE x")
    with pytest.raises(ValueError, match="recency_weight: expected a number from 0 to 1"):
        plugin.MemoryPostgresSettings(recency_weight=2)
