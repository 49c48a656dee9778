"""Open the execution store a configuration names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from toolang_core.errors import ConfigError
from toolang_core.plugins.context import PluginContext

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.protocol import ExecutionStore


class StoreFactory(Protocol):
    """What ``toolang_register_stores`` registers: builds a store for a runtime."""

    def __call__(self, context: PluginContext, *, read_only: bool = False) -> ExecutionStore: ...


def open_store(
    config: ToolangConfig,
    host: PluginHost,
    *,
    read_only: bool = False,
    plugin_settings: Mapping[str, Any] | None = None,
) -> ExecutionStore:
    """Build the ``[store] backend`` store. Read-only opens never create or migrate.

    :raises ConfigError: when no installed plugin offers that backend.
    :raises StoreError: when the store cannot be opened (missing, corrupt, newer …).
    """
    stores = host.components.of_kind("store")
    registration = stores.get(config.store.backend)
    if registration is None:
        available = ", ".join(sorted(stores)) or "none"
        raise ConfigError(
            [
                f"{config.display_name}: store.backend: no installed plugin offers the store "
                f"backend {config.store.backend!r} (available: {available}); install it, e.g. "
                f"toolang-store-{config.store.backend}"
            ]
        )
    context = PluginContext(
        plugin_name=registration.plugin,
        config=config,
        settings=(plugin_settings or {}).get(registration.plugin),
    )
    factory = cast("StoreFactory", registration.factory)
    return factory(context, read_only=read_only)
