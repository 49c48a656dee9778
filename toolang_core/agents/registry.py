"""The agent registry: definitions from every source, merged by fixed rules.

Rules (each tested):

- Sources are read in priority order builtin (0), embedded (1), user (2), remote (3);
  sources of one label in plugin-name order.
- Every definition is checked (name, status, tool patterns, limits); a bad one is
  reported with its origin and left out, never taking the others with it.
- A builtin name is reserved: a definition from any other source using it is rejected
  with a diagnostic naming its file or URL.
- A user definition replaces an embedded default of the same name (reported as info).
- A remote definition never shadows a local one: it is rejected, and kept in
  :attr:`AgentRegistry.shadowed` so ``toolang agents list``, ``toolang doctor`` and the
  log at start-up say that work for that name stays local.
- Two definitions of one name from the same label: the first is kept, the second is
  reported.
- A source that raises is reported; the other sources still count.
- If no local source defines ``[agents] default``, the registry adds a general agent of
  that name made from ``[agents] instruction``, which may use every tool (single-agent
  mode). It is settled before the remote sources, so no remote agent takes its name.
- :meth:`AgentRegistry.active` and :meth:`AgentRegistry.all` are ordered by source
  priority, then name: builtin roles first, remote agents last.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs
import structlog

from toolang_core.agents.partition import EVERY_TOOL
from toolang_core.agents.types import (
    SOURCE_PRIORITY,
    AgentDefinition,
    AgentDiagnostic,
    AgentHealth,
    AgentLoad,
    SourceLabel,
)
from toolang_core.agents.validate import DefinitionError, checked, problem
from toolang_core.errors import describe_exception

if TYPE_CHECKING:
    from toolang_core.agents.port import AgentsRuntime
    from toolang_core.config.model import ToolangConfig

log = structlog.get_logger("toolang.agents")


@attrs.frozen
class SourceReport:
    """What one source contributed: the names kept, how many were refused, and why."""

    name: str
    label: SourceLabel
    plugin: str
    kept: tuple[str, ...] = ()
    rejected: int = 0
    diagnostics: tuple[AgentDiagnostic, ...] = ()
    failed: str | None = None
    """The error the source raised while loading (nothing of it was kept)."""


@attrs.frozen
class Shadowed:
    """A remote agent refused because a local agent (or a built-in role) has its name:
    every request for the name reaches ``by``, the local one."""

    remote: AgentDefinition
    by: AgentDefinition
    diagnostic: AgentDiagnostic
    """The error the refusal was reported with (among its source's diagnostics)."""
    health: AgentHealth | None = None
    """What its source found when it read the card (``None``: not told)."""

    @property
    def message(self) -> str:
        return (
            f"remote agent {self.remote.name!r} ({self.remote.origin}) is shadowed by the "
            f"{self.by.source} agent of the same name ({self.by.origin}): work for "
            f"{self.remote.name!r} is answered locally, never by the remote agent; serve it "
            "under another name"
        )


@attrs.frozen
class SourceInput:
    """One source's load, ready to merge (:meth:`AgentRegistry.merge` is pure)."""

    name: str
    label: SourceLabel
    plugin: str
    load: AgentLoad | None = None
    failed: str | None = None


def _key(definition: AgentDefinition) -> tuple[int, str]:
    return (definition.priority, definition.name)


@attrs.frozen
class AgentRegistry:
    """Every agent definition a runtime knows, by name, and how each source did."""

    definitions: Mapping[str, AgentDefinition]
    reports: tuple[SourceReport, ...] = ()
    health: Mapping[str, AgentHealth] = attrs.field(factory=dict)
    fallback: str | None = None
    """The name of the agent made from ``[agents]`` when no source defined it."""
    problems: tuple[AgentDiagnostic, ...] = ()
    """Problems of the registry as a whole (e.g. an undefined ``[agents] default``)."""
    shadowed: tuple[Shadowed, ...] = ()
    """Remote agents refused because a local one has their name, in merge order."""

    def get(self, name: str) -> AgentDefinition | None:
        return self.definitions.get(name)

    def all(self) -> list[AgentDefinition]:
        """Every definition, active or disabled, by source priority then name."""
        return sorted(self.definitions.values(), key=_key)

    def active(self) -> list[AgentDefinition]:
        """The active definitions, by source priority then name."""
        return [d for d in self.all() if d.status == "active"]

    @property
    def diagnostics(self) -> tuple[AgentDiagnostic, ...]:
        return (*(d for report in self.reports for d in report.diagnostics), *self.problems)

    @property
    def errors(self) -> tuple[AgentDiagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.level == "error")

    @classmethod
    def load(cls, runtime: AgentsRuntime) -> AgentRegistry:
        """Read every agent source of ``runtime`` now and merge them."""
        inputs = []
        for registration in runtime.components.agent_sources:
            source = registration.source
            name, label = str(source.name), source.label
            try:
                loaded = source.load(runtime.plugin_context(registration.plugin))
                if not isinstance(loaded, AgentLoad):
                    raise TypeError(f"load() returned {type(loaded).__name__}, not AgentLoad")
            except Exception as exc:
                inputs.append(
                    SourceInput(name, label, registration.plugin, failed=describe_exception(exc))
                )
                continue
            inputs.append(SourceInput(name, label, registration.plugin, load=loaded))
        registry = cls.merge(inputs, config=runtime.config)
        hidden = {s.diagnostic for s in registry.shadowed}  # logged below, by name
        for diagnostic in registry.diagnostics:
            if diagnostic.level != "info" and diagnostic not in hidden:
                log.warning("agents.diagnostic", level=diagnostic.level, problem=str(diagnostic))
        for shadowed in registry.shadowed:
            log.warning(
                "agents.remote_shadowed",
                agent=shadowed.remote.name,
                url=shadowed.remote.origin,
                by=shadowed.by.source,
                problem=shadowed.message,
            )
        return registry

    @classmethod
    def merge(
        cls, inputs: Iterable[SourceInput], *, config: ToolangConfig | None = None
    ) -> AgentRegistry:
        """Merge the sources' loads by the rules of this module (no I/O)."""
        ordered = sorted(inputs, key=lambda s: (SOURCE_PRIORITY.get(s.label, 9), s.plugin, s.name))
        merged: dict[str, AgentDefinition] = {}
        health: dict[str, AgentHealth] = {}
        shadowed: list[Shadowed] = []
        local = [s for s in ordered if s.label != "remote"]
        remote = [s for s in ordered if s.label == "remote"]
        reports = [_merge_source(s, merged, health, shadowed) for s in local]
        # The [agents] default is a local agent: settled before any remote source.
        fallback, missing = (
            _fallback(config, merged, any_local=bool(local)) if config is not None else ("", None)
        )
        reports += [_merge_source(s, merged, health, shadowed) for s in remote]
        problems = (missing,) if missing is not None else ()
        return cls(merged, tuple(reports), health, fallback or None, problems, tuple(shadowed))


def _merge_source(
    source: SourceInput,
    merged: dict[str, AgentDefinition],
    health: dict[str, AgentHealth],
    shadowed: list[Shadowed],
) -> SourceReport:
    """Add ``source``'s acceptable definitions to ``merged`` (a remote one refused for a
    local name to ``shadowed``); say what happened."""
    if source.failed is not None or source.load is None:
        failure = AgentDiagnostic(
            "error",
            f"agent source {source.name!r} of plugin {source.plugin!r} failed: {source.failed}",
        )
        return SourceReport(
            source.name, source.label, source.plugin, (), 0, (failure,), source.failed
        )
    diagnostics = list(source.load.diagnostics)
    kept: list[str] = []
    rejected = 0
    for loaded in source.load.definitions:
        definition = attrs.evolve(loaded, source=source.label)
        try:
            definition = checked(definition)
        except DefinitionError as exc:
            diagnostics.append(problem(definition, exc))
            rejected += 1
            continue
        existing = merged.get(definition.name)
        conflict = _conflict(existing, definition)
        if conflict is not None:
            if (
                existing is not None
                and definition.source == "remote"
                and existing.source != "remote"
            ):
                found = source.load.health.get(definition.name)
                shadowed.append(Shadowed(definition, existing, conflict, found))
            diagnostics.append(conflict)
            if conflict.level == "error":
                rejected += 1
                continue
        merged[definition.name] = definition
        kept.append(definition.name)
        if definition.name in source.load.health:
            health[definition.name] = source.load.health[definition.name]
    return SourceReport(
        source.name, source.label, source.plugin, tuple(kept), rejected, tuple(diagnostics)
    )


def _fallback(
    config: ToolangConfig, merged: dict[str, AgentDefinition], *, any_local: bool
) -> tuple[str, AgentDiagnostic | None]:
    """Add the agent made from ``[agents]`` when no local source defined the default;
    return its name ("" when a source did).

    With agent sources installed, a default name other than the stock one that no
    source defines is most likely a typo:
    silently making it a general agent would hand a misspelled name every tool. That
    needs ``[agents] create_default = true``; otherwise the default stays undefined and
    the returned diagnostic says so (with the closest known names).
    """
    name = config.agents.default
    if name in merged:
        return "", None
    # The stock name (no [agents] default written, or "assistant" on purpose) keeps
    # single-agent set-ups working; any other name is one somebody typed.
    typed = name != attrs.fields(type(config.agents)).default.default
    if any_local and typed and not config.agents.create_default:
        known = sorted(merged)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return "", AgentDiagnostic(
            "error",
            f"{name!r} is defined by no agent source ({hint}known: "
            f"{', '.join(known) or 'none'}); fix the name, or set [agents] "
            "create_default = true to make it a general agent that may use every tool",
            origin=f"{config.display_name} [agents] default",
        )
    merged[name] = AgentDefinition(
        name=name,
        description="the default agent, from [agents] (no agent source defines it)",
        instruction=config.agents.instruction,
        tools=(EVERY_TOOL,),
        source="builtin",
        origin=f"{config.display_name} [agents] default",
    )
    return name, None


def _conflict(existing: AgentDefinition | None, new: AgentDefinition) -> AgentDiagnostic | None:
    if existing is None:
        return None
    where = new.origin or f"{new.source} source"
    if existing.source == "builtin":
        return AgentDiagnostic(
            "error",
            f"agent name {new.name!r} is reserved by a built-in agent; rename this definition",
            origin=where,
        )
    if new.source == "remote":
        return AgentDiagnostic(
            "error",
            f"remote agent {new.name!r} would shadow the {existing.source} agent of the same "
            f"name ({existing.origin}); it is ignored",
            origin=where,
        )
    if new.source == existing.source:
        return AgentDiagnostic(
            "error",
            f"agent {new.name!r} is defined twice; the first ({existing.origin}) is kept",
            origin=where,
        )
    return AgentDiagnostic(
        "info",
        f"{new.source} agent {new.name!r} replaces the {existing.source} default "
        f"({existing.origin})",
        origin=where,
    )
