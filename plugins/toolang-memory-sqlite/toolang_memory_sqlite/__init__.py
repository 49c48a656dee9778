"""toolang-memory-sqlite: the ``sqlite`` memory plugin.

Entries in SQLite (their own file or the execution store's), recalled by full-text
search (FTS5, bm25) blended with recency, scoped by agent and optionally thread, with
keys, TTLs and pruning. Select it with ``[memory] plugin = "sqlite"``; its settings are
``[plugins.memory-sqlite]``. This module stays import-light (every ``toolang`` command
imports it): the database code loads when the runtime builds the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import ConfigError, hookimpl
from toolang_memory_sqlite.settings import NAME, PROVIDER, MemorySQLiteSettings

if TYPE_CHECKING:
    from pathlib import Path

    from toolang_core import PluginContext, RegisterFactory, RegisterSettings, ToolangConfig
    from toolang_memory_sqlite.memory import SQLiteMemory

__all__ = ["NAME", "PROVIDER", "MemorySQLiteSettings", "build", "database_path"]


def database_path(config: ToolangConfig, settings: MemorySQLiteSettings) -> Path:
    """The file the entries live in, for ``settings`` of ``config``.

    :raises ConfigError: ``database = "store"`` while the store is not the SQLite one.
    """
    if settings.database == "store":
        if config.store.backend != "sqlite":
            raise ConfigError(
                [
                    f'{config.display_name}: plugins.{NAME}.database: "store" needs the '
                    f'SQLite execution store, but [store] backend = "{config.store.backend}"; '
                    'use database = "own" (the default)'
                ]
            )
        return config.store_path
    return settings.path or config.home / "plugins" / f"{NAME}.db"


def build(context: PluginContext) -> SQLiteMemory:
    """The memory plugin for the runtime of ``context`` (opens its file on first use)."""
    from toolang_memory_sqlite.memory import SQLiteMemory

    settings = context.settings
    if not isinstance(settings, MemorySQLiteSettings):
        settings = MemorySQLiteSettings()
    if context.config.store.backend != "sqlite":
        import structlog

        # Other nodes of a shared store would each remember in a file of their own.
        structlog.get_logger(f"toolang.plugins.{NAME}").warning(
            "memory.per_node",
            store=context.config.store.backend,
            path=str(database_path(context.config, settings)),
            hint='each node keeps its own memory file; [memory] plugin = "postgres" '
            "(toolang-memory-postgres) shares one memory between the nodes of a "
            "PostgreSQL store",
        )
    return SQLiteMemory(
        database_path(context.config, settings),
        settings,
        shared_with_store=settings.database == "store",
        synchronous=context.config.store.synchronous,
    )


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(MemorySQLiteSettings)


@hookimpl
def toolang_register_memory(register: RegisterFactory) -> None:
    register(
        PROVIDER,
        build,
        description="SQLite full-text memory (FTS5 bm25 blended with recency)",
    )
