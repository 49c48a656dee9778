"""The agent registry: definitions from every source, merged by fixed rules.

Rules (each tested): sources are read in priority order builtin (0), embedded (1),
user (2), remote (3). A builtin name is reserved: another source using it is rejected
with a diagnostic naming its origin. A user definition replaces an embedded default of
the same name. A remote definition never shadows a local one. A source that fails is
reported and the others still count. ``active()`` is sorted by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import structlog

from toolang_core.agents.types import SOURCE_PRIORITY, AgentDefinition
from toolang_core.plugins.host import describe_exception

if TYPE_CHECKING:
    from toolang_core.runtime.runtime import Runtime

log = structlog.get_logger("toolang.agents")


@attrs.frozen
class AgentRegistry:
    definitions: dict[str, AgentDefinition]
    diagnostics: tuple[str, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        return self.definitions.get(name)

    def active(self) -> list[AgentDefinition]:
        return sorted(
            (d for d in self.definitions.values() if d.status == "active"), key=lambda d: d.name
        )

    @classmethod
    def load(cls, runtime: Runtime) -> AgentRegistry:
        """Read every agent source of ``runtime`` and merge them."""
        sources = sorted(
            runtime.host.components.agent_sources,
            key=lambda r: (SOURCE_PRIORITY.get(r.source.label, 9), r.plugin),
        )
        merged: dict[str, AgentDefinition] = {}
        diagnostics: list[str] = []
        for registration in sources:
            source = registration.source
            try:
                loaded = source.load(runtime.plugin_context(registration.plugin))
            except Exception as exc:
                diagnostics.append(
                    f"agent source {source.name!r} of plugin "
                    f"{registration.plugin!r} failed: {describe_exception(exc)}"
                )
                continue
            diagnostics.extend(loaded.diagnostics)
            for loaded_definition in loaded.definitions:
                definition = attrs.evolve(loaded_definition, source=source.label)
                problem = _conflict(merged.get(definition.name), definition)
                if problem:
                    diagnostics.append(problem)
                    continue
                merged[definition.name] = definition
        for line in diagnostics:
            log.warning("agents.diagnostic", problem=line)
        return cls(merged, tuple(diagnostics))


def _conflict(existing: AgentDefinition | None, new: AgentDefinition) -> str | None:
    if existing is None:
        return None
    where = new.origin or new.source
    if existing.source == "builtin":
        return (
            f"{where}: agent name {new.name!r} is reserved by a built-in agent; "
            "rename this definition"
        )
    if new.source == "remote":
        return (
            f"{where}: remote agent {new.name!r} would shadow the {existing.source} agent "
            "of the same name; it is ignored"
        )
    if new.source == existing.source:
        return f"{where}: agent {new.name!r} is defined twice ({existing.origin}); first kept"
    return None  # a later local source (user over embedded) replaces the earlier one
