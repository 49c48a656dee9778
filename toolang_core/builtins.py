"""Plugins shipped inside toolang_core, registered by every host (status ``builtin``)."""

from __future__ import annotations

from importlib import import_module
from typing import Final

BUILTIN_PLUGINS: Final = (
    ("store-sqlite", "toolang_core.store.sqlite.plugin"),
    ("memory-tools", "toolang_core.memory.tools"),
    ("route-keywords", "toolang_core.agents.keyword_router"),
    ("delegation", "toolang_core.turn.delegation_plugin"),
    ("questions", "toolang_core.questions.tool"),
    ("evaluators", "toolang_core.evals.plugin"),
)


SEPARATE_PLUGINS: Final = {"teams": "toolang-teams", "agent-pool": "toolang-agent-pool"}
"""Plugins that were built in and now ship as distributions of their own, by entry-point
name: a configuration naming one that is not installed is told which to install."""


def install_hint(name: str) -> str:
    """``" (it comes with toolang-teams: pip install toolang-teams)"`` for a plugin of
    :data:`SEPARATE_PLUGINS` (by entry-point or distribution name), else ``""``."""
    key = name.strip().lower().replace("_", "-")
    for plugin, distribution in SEPARATE_PLUGINS.items():
        if key in (plugin, distribution):
            return f" (it comes with {distribution}: pip install {distribution})"
    return ""


def builtin_plugins() -> list[tuple[str, object]]:
    """``(name, module)`` of every built-in plugin, imported now."""
    return [(name, import_module(module)) for name, module in BUILTIN_PLUGINS]
