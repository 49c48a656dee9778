"""Store hooks: execution-store backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_stores(register: RegisterFactory) -> None:
    """Offer execution-store backends.

    Call ``register(name, factory)`` once per backend. ``[store] backend = "<name>"``
    selects one; its ``factory(context)`` is then called once per runtime and returns
    an object implementing the execution-store contract. Return nothing.
    """


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_plugin_databases(register: RegisterFactory) -> None:
    """Offer plugins' databases on a store backend.

    Call ``register(backend, factory)`` where ``backend`` is the name the store was
    registered under (``toolang_register_stores``). When ``[store] backend`` names it,
    the runtime calls ``factory(context)`` once (``context`` is this plugin's
    :class:`~toolang_core.PluginContext`) and opens every plugin's
    :class:`~toolang_core.PluginMigrations` tables through the
    :class:`~toolang_core.PluginDatabases` it returns. A backend that offers none keeps
    plugins' tables in SQLite files. Return nothing.
    """
