"""toolang-agents-embedded: default agents bundled as AGENT.md package data.

Each ``defaults/<name>/AGENT.md`` is one agent of the ``embedded`` source (priority 1):
a user AGENT.md of the same name replaces it.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Literal

from toolang_core import (
    AgentDefinition,
    AgentDiagnostic,
    AgentLoad,
    PluginContext,
    hookimpl,
    parse_agent_md,
)

NAME = "agents-embedded"


class EmbeddedDefaults:
    """The ``embedded`` source: every ``defaults/*/AGENT.md`` in this package."""

    label: Literal["embedded"] = "embedded"
    name = "defaults"

    def load(self, context: PluginContext) -> AgentLoad:
        definitions: list[AgentDefinition] = []
        diagnostics: list[AgentDiagnostic] = []
        root = files(__name__) / "defaults"
        for directory in sorted(root.iterdir(), key=lambda d: d.name):
            agent_md = directory / "AGENT.md"
            if not agent_md.is_file():
                continue
            loaded = parse_agent_md(
                agent_md.read_text(encoding="utf-8"),
                origin=f"{__name__}:defaults/{directory.name}/AGENT.md",
                source="embedded",
                expected_name=directory.name,
            )
            definitions.extend(loaded.definitions)
            diagnostics.extend(loaded.diagnostics)
        return AgentLoad(definitions=definitions, diagnostics=diagnostics)


@hookimpl
def toolang_agent_sources() -> EmbeddedDefaults:
    return EmbeddedDefaults()
