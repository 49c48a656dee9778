"""Semantic recall (pgvector) in the PostgreSQL memory plugin, on a real server with
the extension: a paraphrase sharing no word is recalled with it on and not with it off,
scoping, forgetting and TTLs hold for similarity too, and bad settings say what to fix."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

import toolang_memory_postgres as plugin
import toolang_store_postgres
from toolang_core.testing.embeddings import ConceptEmbedder
from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_core.testing.models import text
from toolang_core.testing.runtimes import plugin_runtime, serve_turns
from toolang_memory_postgres import NAME, MemoryPostgresSettings
from toolang_memory_postgres.memory import PostgresMemory
from toolang_memory_postgres.schema import MIGRATIONS
from toolang_memory_postgres.semantic import SemanticError
from toolang_store_postgres.plugin_tables import PostgresPluginDatabases

SEMANTIC = {"semantic": True, "embedding_model": "concepts"}
PARKED = "The automobile is parked in bay seven"
QUESTION = "where did I leave my car?"  # no word of PARKED, stopwords aside


@pytest.fixture
def toolang_pg_dsn(toolang_pgvector_dsn: str) -> str:
    """Every test here on the server with pgvector (see conftest.py)."""
    return toolang_pgvector_dsn


@pytest.fixture
def driver(memory_factory):
    """``driver(**kw)``: a plugin object (a node) driven as the runtime does."""
    caller = MemoryCaller()
    yield lambda **kw: MemoryDriver(memory_factory(**kw), caller)
    caller.close()


def test_a_paraphrase_is_recalled_by_meaning_within_its_scope_only(
    driver, pg, entries_schema, clock
):
    embedder = ConceptEmbedder()
    memory = driver(embedder=embedder, clock=clock, **SEMANTIC)
    memory.save("agent-a", PARKED, key="parked", owner="ann")
    memory.save("agent-a", "the gryphel nests on the north tower", owner="ann")
    assert embedder.embedded == [PARKED, "the gryphel nests on the north tower"]

    recalled = memory.recall("agent-a", QUESTION, owner="ann")
    assert [i.text for i in recalled.items] == [PARKED]  # the unrelated entry stays out
    assert recalled.diagnostics["similar"] == 1
    assert 0 < recalled.items[0].score <= 1
    # Off (the default): the same entries, found by their words only.
    assert driver().texts("agent-a", QUESTION, owner="ann") == []
    assert driver().texts("agent-a", "automobile", owner="ann") == [PARKED]
    # Words and meaning together: the entry matching both ranks first.
    memory.save("agent-a", "my car is blue", owner="ann")
    assert memory.texts("agent-a", "automobile", owner="ann")[0] == PARKED

    # Scoping: another owner, the operator, another agent, another thread see nothing.
    memory.save("agent-a", "the vehicle of bob is parked outside", owner="bob")
    assert memory.texts("agent-a", QUESTION, owner="bob") == [
        "the vehicle of bob is parked outside"
    ]
    assert memory.texts("agent-a", QUESTION) == []
    assert memory.texts("agent-b", QUESTION, owner="ann") == []
    assert memory.recall("agent-a", QUESTION, owner="ann", thread="elsewhere").items == ()

    # TTL and forgetting hold for similarity too.
    memory.save("agent-c", "my physician is on holiday", ttl=60)
    assert memory.texts("agent-c", "the doctor") == ["my physician is on holiday"]
    clock.now += 61
    assert memory.texts("agent-c", "the doctor") == []
    memory.forget("agent-a", keys=["parked"], owner="ann")
    assert PARKED not in memory.texts("agent-a", QUESTION, owner="ann")

    # The embeddings are stored in a vector column of the model's size, written with
    # their entries (an entry written with semantic recall off has none; the expired
    # entry was pruned by that write).
    driver().save("agent-d", "my feline sleeps in the cellar")
    column = pg.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
        "%s::regclass AND attname = 'embedding'",
        [f'"{entries_schema}".memory_entries'],
    ).fetchone()
    assert column == ("vector(256)",)
    counts = pg.execute(
        f'SELECT embedding IS NOT NULL, count(*) FROM "{entries_schema}".memory_entries '
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert counts == [(False, 1), (True, 3)]
    assert memory.texts("agent-d", "the kitten in the basement?") == []  # no embedding yet
    # The next write of its scope embeds it too (up to backfill_batch, newest first).
    memory.save("agent-d", "the gryphel nests on the north tower")
    assert memory.texts("agent-d", "the kitten in the basement?") == [
        "my feline sleeps in the cellar"
    ]

    # A model of another size is refused, naming both sizes; nothing is written.
    other = driver(embedder=ConceptEmbedder(dimensions=64), **SEMANTIC)
    with pytest.raises(SemanticError, match=r"have 256 dimensions.*gives 64"):
        other.save("agent-a", "never stored", owner="ann")
    assert "256 dimensions" in (other.health().last_error or "")


def test_a_failing_embedding_model_stores_nothing_and_recall_falls_back_to_words(driver):
    class Broken(ConceptEmbedder):
        fail = False

        def embed(self, texts):
            if self.fail:
                raise RuntimeError("the embedding service is down")
            return super().embed(texts)

    broken = Broken()
    memory = driver(embedder=broken, **SEMANTIC)
    memory.save("agent-a", "the gryphel nests on the north tower")
    broken.fail = True
    with pytest.raises(SemanticError, match=r"embedding model .concepts.*service is down"):
        memory.save("agent-a", "never stored gryphel")
    recalled = memory.recall("agent-a", "gryphel")
    assert [i.text for i in recalled.items] == ["the gryphel nests on the north tower"]
    assert "service is down" in recalled.diagnostics["semantic_error"]
    assert memory.health().status == "degraded"


def test_without_pgvector_the_error_names_the_database_and_what_to_install(toolang_pg_dsn):
    """A role that may not create the extension, in a database that has none."""
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS novector")
        admin.execute("DROP ROLE IF EXISTS plain")
        admin.execute("CREATE ROLE plain LOGIN")
        admin.execute("CREATE DATABASE novector OWNER plain")
    databases = PostgresPluginDatabases(
        make_conninfo(toolang_pg_dsn, user="plain", dbname="novector"), store_schema="s"
    )
    memory = PostgresMemory(
        lambda: databases.open(NAME, MIGRATIONS),
        MemoryPostgresSettings(**SEMANTIC),
        embedder=ConceptEmbedder(),
    )
    try:
        with pytest.raises(SemanticError) as refused:
            memory.remember_now(_batch("agent-a", "anything"))
    finally:
        memory.close()
        with psycopg.connect(toolang_pg_dsn, autocommit=True) as admin:
            admin.execute("DROP DATABASE novector")
            admin.execute("DROP ROLE plain")
    message = str(refused.value)
    for part in ("semantic = true", "database 'novector'", "CREATE EXTENSION vector", "pgvector"):
        assert part in message


def test_settings_and_the_runtime(toolang_runtime, toolang_scripted_model, toolang_pg_config):
    with pytest.raises(ValueError, match="embedding_model: semantic = true needs"):
        MemoryPostgresSettings(semantic=True)
    with pytest.raises(ValueError, match="semantic_weight: expected a number from 0 to 1"):
        MemoryPostgresSettings(semantic_weight=1.5)
    memory_on = '[memory]\nplugin = "postgres"\n'
    pg = {"store-postgres": toolang_store_postgres}

    # An embedding model no plugin offers: the memory is down, saying which key to fix.
    ghost = plugin_runtime(
        toolang_runtime,
        plugin.NAME,
        plugin,
        settings='semantic = true\nembedding_model = "ghost/x"',
        plugins=pg,
        config=toolang_pg_config + memory_on,
    )
    health = asyncio.run(ghost.memory.health())
    said = (health.detail or "") + (health.last_error or "")
    assert health.status == "down"
    assert "[plugins.memory-postgres] embedding_model" in said
    assert "no embedding model provider 'ghost'" in said

    # The model from a plugin (the runtime's embedding_models service): a turn on
    # another thread recalls what an earlier one said, by meaning.
    embedder = ConceptEmbedder()
    model = toolang_scripted_model([text("noted"), text("bay seven")])
    runtime = plugin_runtime(
        toolang_runtime,
        plugin.NAME,
        plugin,
        settings='semantic = true\nembedding_model = "concepts"',
        model=model,
        plugins={**pg, "concepts": embedder.plugin()},
        config=toolang_pg_config + memory_on,
    )
    serve_turns(runtime, "my automobile is parked in bay seven", thread="cli:one")
    serve_turns(runtime, QUESTION, thread="cli:two")
    prompt = "\n".join(m.content for m in model.calls[-1].messages)
    assert "automobile is parked in bay seven" in prompt


def _batch(agent: str, *texts: str):
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    return MemoryWriteBatch(
        agent_uri=f"toolang:agent/{agent}",
        agent_id=agent,
        entries=tuple(MemoryEntry(text=t) for t in texts),
    )
