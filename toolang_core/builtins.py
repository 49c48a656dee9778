"""Plugins shipped inside toolang_core, registered by every host (status ``builtin``)."""

from __future__ import annotations

from importlib import import_module
from typing import Final

BUILTIN_PLUGINS: Final = (
    ("store-sqlite", "toolang_core.store.sqlite.plugin"),
    ("memory-tools", "toolang_core.memory.tools"),
    ("route-keywords", "toolang_core.agents.keyword_router"),
    ("delegation", "toolang_core.turn.delegation_plugin"),
    ("agent-pool", "toolang_core.teams.pool_plugin"),
)


def builtin_plugins() -> list[tuple[str, object]]:
    """``(name, module)`` of every built-in plugin, imported now."""
    return [(name, import_module(module)) for name, module in BUILTIN_PLUGINS]
