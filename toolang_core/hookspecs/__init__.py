"""The hook specifications: the contract between toolang and its plugins.

One module per family. :data:`FAMILIES` lists them in the order the documentation
presents them; :func:`spec_modules` returns the modules for ``add_hookspecs``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

import attrs

from toolang_core.hookspecs import (
    agents,
    commands,
    evaluators,
    events,
    guards,
    lifecycle,
    memory,
    models,
    observability,
    routes,
    sources,
    stores,
    taskruns,
    tool_hooks,
    tools,
)


@attrs.frozen
class Family:
    """A family of hooks: its key (also its docs page ``docs/hooks/<key>.md``)."""

    key: str
    title: str
    module: ModuleType

    @property
    def hook_names(self) -> tuple[str, ...]:
        return tuple(
            name
            for name in vars(self.module)
            if name.startswith("toolang_") and hasattr(getattr(self.module, name), "toolang_spec")
        )


FAMILIES: Final[tuple[Family, ...]] = (
    Family("lifecycle", "Lifecycle", lifecycle),
    Family("commands", "CLI commands", commands),
    Family("stores", "Execution stores", stores),
    Family("models", "Models", models),
    Family("tools", "Tools", tools),
    Family("memory", "Memory", memory),
    Family("tool-hooks", "Tool-call hook chain", tool_hooks),
    Family("guards", "Model guardrails", guards),
    Family("agents", "Agent registries", agents),
    Family("sources", "Turn sources", sources),
    Family("taskruns", "Task runs", taskruns),
    Family("events", "Events", events),
    Family("observability", "Observability", observability),
    Family("routes", "HTTP routes", routes),
    Family("evaluators", "Evaluators", evaluators),
)

TOOL_CHAIN: Final[tuple[str, ...]] = (
    "toolang_filter_tool_call",
    "toolang_approve_tool_call",
    "execute",
    "toolang_filter_tool_result",
    "toolang_observe_tool_result",
    "toolang_save_knowledge",
    "toolang_publish_event",
)
"""The fixed order of the tool-call chain; ``execute`` marks where the tool runs."""

TOOL_CHAIN_STAGES: Final[dict[str, str]] = {
    "toolang_filter_tool_call": "SecurityFilter",
    "toolang_approve_tool_call": "ApprovalGate",
    "execute": "execute",
    "toolang_filter_tool_result": "SecurityFilter",
    "toolang_observe_tool_result": "LearningObserver",
    "toolang_save_knowledge": "KnowledgeSaver",
    "toolang_publish_event": "EventPublisher",
}


def spec_modules() -> tuple[ModuleType, ...]:
    return tuple(family.module for family in FAMILIES)
