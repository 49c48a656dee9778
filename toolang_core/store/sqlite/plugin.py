"""The built-in plugin that offers the SQLite store as backend ``sqlite``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.markers import hookimpl

if TYPE_CHECKING:
    from toolang_core.plugins.context import PluginContext
    from toolang_core.plugins.registrars import RegisterFactory
    from toolang_core.store.sqlite.store import SQLiteStore


def open_sqlite_store(context: PluginContext, *, read_only: bool = False) -> SQLiteStore:
    # Imported here: every toolang command registers this plugin, few open the store.
    from toolang_core.store.sqlite.store import SQLiteStore

    store = context.config.store
    return SQLiteStore(
        context.config.store_path, read_only=read_only, synchronous=store.synchronous
    )


@hookimpl(trylast=True)
def toolang_register_stores(register: RegisterFactory) -> None:
    register("sqlite", open_sqlite_store, description="one SQLite file (the embedded default)")
