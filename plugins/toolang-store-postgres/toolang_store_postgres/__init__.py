"""toolang-store-postgres: the execution store in PostgreSQL, shared by many runtimes on
many machines (``[store] backend = "postgres"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import RegisterFactory, RegisterSettings, hookimpl
from toolang_store_postgres.settings import NAME, PostgresSettings

if TYPE_CHECKING:
    from toolang_core import PluginContext
    from toolang_store_postgres.store import PostgresStore

__all__ = ["NAME", "PostgresSettings", "open_postgres_store"]


def open_postgres_store(context: PluginContext, *, read_only: bool = False) -> PostgresStore:
    """The store factory: ``[plugins.store-postgres]`` names the server and schema.

    :raises ConfigError: naming each unusable key (``dsn`` unset, a bad ``schema`` …).
    :raises StoreError: when the server cannot be reached or the schema is refused.
    """
    # Imported here: every toolang command loads this plugin, few open the store.
    from toolang_store_postgres.settings import check
    from toolang_store_postgres.store import PostgresStore

    settings = context.settings if context.settings is not None else PostgresSettings()
    return PostgresStore(
        check(settings, context.config),
        schema_name=settings.schema,
        read_only=read_only,
        pool_size=settings.pool_size,
        connect_timeout=settings.connect_timeout,
    )


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(PostgresSettings)


@hookimpl
def toolang_register_plugin_databases(register: RegisterFactory) -> None:
    # Imported on use: plugin_tables imports psycopg.
    def build(context: PluginContext) -> object:
        from toolang_store_postgres.plugin_tables import open_plugin_databases

        return open_plugin_databases(context)

    register(
        "postgres",
        build,
        description="plugins' tables in a schema each, on the store's PostgreSQL server",
    )


@hookimpl
def toolang_register_stores(register: RegisterFactory) -> None:
    register(
        "postgres",
        open_postgres_store,
        description="PostgreSQL, shared by runtimes on many machines (toolang-store-postgres)",
    )
