"""toolang-memory-postgres: the ``postgres`` memory plugin.

Entries in PostgreSQL — the plugin's own schema on the PostgreSQL store's server, so
every node of a runtime shares one memory — recalled by full-text search
(``tsvector``, ``ts_rank_cd``) blended with recency, scoped by agent, owner and
optionally thread, with keys, TTLs and pruning. Select it with ``[memory] plugin =
"postgres"`` beside ``[store] backend = "postgres"``; its settings are
``[plugins.memory-postgres]``. With ``semantic = true`` entries are also recalled by
meaning (pgvector, the embedding model ``embedding_model`` names: :mod:`.semantic`).
This module stays import-light (every ``toolang`` command imports it): the database
code loads when the runtime builds the plugin.

A separate distribution rather than a backend of memory-sqlite: memory-sqlite stays
free of psycopg (a single-node install pays for no driver), and each plugin's SQL,
ranking and failure handling stay in one room each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import ConfigError, hookimpl
from toolang_memory_postgres.settings import NAME, PROVIDER, MemoryPostgresSettings

if TYPE_CHECKING:
    from toolang_core import (
        PluginContext,
        PluginDatabase,
        PluginDatabases,
        RegisterFactory,
        RegisterSettings,
    )
    from toolang_core.models import EmbeddingModel
    from toolang_memory_postgres.memory import PostgresMemory

__all__ = ["NAME", "PROVIDER", "MemoryPostgresSettings", "build"]


def build(context: PluginContext) -> PostgresMemory:
    """The memory plugin for the runtime of ``context``: its entries in the plugin
    database the store's backend offers (opened on first use).

    :raises ConfigError: the store is not PostgreSQL (its entries would live in an
        SQLite file of one node: use memory-sqlite there).
    """
    from toolang_memory_postgres.memory import PostgresMemory
    from toolang_memory_postgres.schema import MIGRATIONS

    config = context.config
    if config.store.backend != "postgres":
        raise ConfigError(
            [
                f'{config.display_name}: memory.plugin: "{PROVIDER}" keeps entries beside a '
                f'PostgreSQL store, but [store] backend = "{config.store.backend}"; set '
                '[store] backend = "postgres" (toolang-store-postgres) or use [memory] '
                'plugin = "sqlite"'
            ]
        )
    settings = context.settings
    if not isinstance(settings, MemoryPostgresSettings):
        settings = MemoryPostgresSettings()
    databases: PluginDatabases = context.service("plugin_databases")

    def open_database() -> PluginDatabase:
        return databases.open(NAME, MIGRATIONS)

    return PostgresMemory(open_database, settings, embedder=_embedder(context, settings))


def _embedder(context: PluginContext, settings: MemoryPostgresSettings) -> EmbeddingModel | None:
    """The embedding model ``embedding_model`` names, when ``semantic`` is on.

    :raises ConfigError: naming the key, the model and the providers installed.
    """
    from toolang_core.models import EmbeddingError, EmbeddingModels

    if not settings.semantic or settings.embedding_model is None:
        return None
    models: EmbeddingModels = context.service("embedding_models")
    key = f"[plugins.{NAME}] embedding_model"
    try:
        return models.get(settings.embedding_model, wanted_by=key)
    except EmbeddingError as exc:
        raise ConfigError([f"{context.config.display_name}: {key}: {exc}"]) from None


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(MemoryPostgresSettings)


@hookimpl
def toolang_register_memory(register: RegisterFactory) -> None:
    register(
        PROVIDER,
        build,
        description="PostgreSQL full-text memory (tsvector ts_rank_cd blended with recency), "
        "shared by every node",
    )
