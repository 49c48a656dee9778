"""The runtime's memory service: the configured ``[memory] plugin``, built from its
registration with the services a memory plugin is offered.

The runtime's ``memory`` property (documented there) builds it once, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from toolang_core.errors import ConfigError

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.memory.service import MemoryService
    from toolang_core.models.embeddings import EmbeddingModels
    from toolang_core.plugins.context import PluginContext
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.plugin_tables import PluginDatabases


class MemoryOwner(Protocol):
    """What :func:`build_memory` reads of its runtime."""

    config: ToolangConfig
    host: PluginHost

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext: ...

    @property
    def plugin_databases(self) -> PluginDatabases: ...

    @property
    def embedding_models(self) -> EmbeddingModels: ...


def build_memory(runtime: MemoryOwner) -> MemoryService | None:
    """The configured memory plugin behind its service; ``None`` when memory is off.

    :raises ConfigError: naming the plugin and the installed memory plugins.
    """
    from toolang_core.memory.service import MemoryService

    name = runtime.config.memory.plugin
    if name is None:
        return None
    registered = runtime.host.components.of_kind("memory")
    registration = registered.get(name)
    if registration is None:
        raise ConfigError(
            [
                f"{runtime.config.display_name}: memory.plugin: no installed plugin offers the "
                f"memory plugin {name!r} (available: {', '.join(sorted(registered)) or 'none'}"
                f"); install it, e.g. toolang-memory-{name}"
            ]
        )

    def build() -> Any:
        # Services: the store backend's plugin databases, where a memory plugin may keep
        # its entries (toolang-memory-postgres); the offer opens nothing until asked.
        context = runtime.plugin_context(
            registration.plugin,
            plugin_databases=runtime.plugin_databases,
            embedding_models=runtime.embedding_models,  # semantic recall, when configured
        )
        return registration.factory(context)

    return MemoryService.build(name, runtime.config.memory, build)
