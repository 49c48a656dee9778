"""Collect what plugins register: settings, stores, models, tools, memory, sources, agents.

Each plugin's registration hooks are called one plugin at a time with ``register``
callables bound to that plugin, so every contribution knows its origin and one
plugin's mistake never costs another plugin anything. A plugin whose registration
hook raises (or registers something invalid) is failed as a whole and none of its
contributions are kept. A tool name several plugins register goes to none of them
unless the configuration says whose it is (:mod:`toolang_core.plugins.tool_names`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.plugins.live_map import LiveMap
from toolang_core.plugins.loader import normalize
from toolang_core.plugins.records import PluginStatus
from toolang_core.plugins.registrars import Factory

# The registration records moved to toolang_core.plugins.registrations (so the runtime
# view names them without importing the host); re-exported here for the older path.
from toolang_core.plugins.registrations import (
    AgentSourceRegistration as AgentSourceRegistration,  # noqa: PLC0414
    Registration as Registration,  # noqa: PLC0414
    ToolRegistration as ToolRegistration,  # noqa: PLC0414
)
from toolang_core.plugins.tool_names import decide_tool_names
from toolang_core.store.types import GroupPolicy
from toolang_core.tools.types import Tool

if TYPE_CHECKING:
    import click

    from toolang_core.plugins.host_port import CollectingHost

COMPONENT_KINDS: Final = {
    "toolang_register_stores": "store",
    "toolang_register_plugin_databases": "plugin database",
    "toolang_register_models": "model",
    "toolang_register_embedding_models": "embedding model",
    "toolang_register_memory": "memory",
    "toolang_register_turn_sources": "turn source",
    "toolang_register_redactors": "redactor",
}
_COMPONENT_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


class RegistrationError(ValueError):
    """A plugin registered something invalid or already taken."""


@attrs.define
class Components:
    """Everything the active plugins registered, keyed by name."""

    settings: dict[str, type[Any]] = attrs.field(factory=dict)
    components: dict[str, dict[str, Registration]] = attrs.field(
        factory=lambda: {kind: {} for kind in COMPONENT_KINDS.values()}
    )
    tools: LiveMap[str, ToolRegistration] = attrs.field(factory=LiveMap)
    """Every tool a model may be offered: the registered ones and, while the runtime
    serves, those plugins offer (``toolang_offer_tools``). Replaced whole on each
    change; keep ``tools.current`` to read one version several times."""
    agent_sources: list[AgentSourceRegistration] = attrs.field(factory=list)
    withheld_tools: LiveMap[str, str] = attrs.field(factory=LiveMap)
    """Tool names registered by several plugins (or given by ``[tools.providers]`` to
    one that does not register them), withheld from all, and tools withdrawn while the
    runtime serves: name → why."""
    tool_claims: dict[str, list[ToolRegistration]] = attrs.field(factory=dict)
    """Every tool registration by name, in the order the plugins were asked (what
    :attr:`tools` was decided from)."""

    def of_kind(self, kind: str) -> dict[str, Registration]:
        return self.components[kind]

    def provided_by(self, plugin: str) -> dict[str, list[str]]:
        """What one plugin contributed, for ``toolang plugins``."""
        out: dict[str, list[str]] = {}
        for kind, regs in self.components.items():
            names = sorted(name for name, reg in regs.items() if reg.plugin == plugin)
            if names:
                out[kind + "s"] = names
        tools = sorted(name for name, reg in self.tools.items() if reg.plugin == plugin)
        if tools:
            out["tools"] = tools
        sources = [reg.source.name for reg in self.agent_sources if reg.plugin == plugin]
        if sources:
            out["agent sources"] = sources
        if plugin in self.settings:
            out["settings"] = [f"[plugins.{plugin}]"]
        return out


class _PluginContributions:
    """What one plugin registered during collection, committed only if it all succeeded."""

    def __init__(self, plugin: str, merged: Components) -> None:
        self.plugin = plugin
        self.merged = merged
        self.settings: type[Any] | None = None
        self.components: list[Registration] = []
        self.tools: list[ToolRegistration] = []
        self.agent_sources: list[AgentSourceRegistration] = []

    def register_settings(self, settings_class: type[Any]) -> None:
        if not attrs.has(settings_class):
            raise RegistrationError(f"settings must be an attrs class, got {settings_class!r}")
        if self.settings is not None:
            raise RegistrationError("settings were already registered by this plugin")
        self.settings = settings_class

    def component_registrar(self, kind: str) -> Any:
        def register(name: str, factory: Factory, *, description: str = "") -> None:
            self.add_component(kind, name, factory, description)

        def register_source(
            name: str,
            factory: Factory,
            *,
            description: str = "",
            admission: GroupPolicy | None = None,
        ) -> None:
            if admission is not None and not isinstance(admission, GroupPolicy):
                raise RegistrationError(
                    f"turn source {name!r}: admission must be a toolang_core.GroupPolicy, "
                    f"got {admission!r}"
                )
            self.add_component(kind, name, factory, description, admission)

        return register_source if kind == "turn source" else register

    def add_component(
        self,
        kind: str,
        name: str,
        factory: Factory,
        description: str,
        admission: GroupPolicy | None = None,
    ) -> None:
        """Validate and keep one named component (committed with the plugin's others)."""
        if not isinstance(name, str) or not _COMPONENT_NAME.match(name):
            raise RegistrationError(f"{kind} name {name!r} must match {_COMPONENT_NAME.pattern}")
        if not callable(factory):
            raise RegistrationError(f"{kind} {name!r}: factory must be callable")
        taken = self.merged.components[kind].get(name) or next(
            (r for r in self.components if r.kind == kind and r.name == name), None
        )
        if taken is not None:
            raise RegistrationError(
                f"{kind} {name!r} is already registered by plugin {taken.plugin!r}"
            )
        self.components.append(
            Registration(kind, name, factory, self.plugin, description, admission)
        )

    def register_tool(self, tool: Tool | Callable[..., Any]) -> None:
        tool = check_tool(tool)
        if any(r.tool.name == tool.name for r in self.tools):
            raise RegistrationError(f"tool {tool.name!r} is registered twice by this plugin")
        # Another plugin's tool of the same name is settled once every plugin was asked.
        self.tools.append(ToolRegistration(tool, self.plugin))

    def add_agent_sources(self, returned: object) -> None:
        if returned is None:
            return
        sources: Iterable[object]
        if isinstance(returned, Iterable) and not hasattr(returned, "load"):
            sources = returned
        else:
            sources = (returned,)
        for source in sources:
            for attr in ("label", "name", "load"):
                if not hasattr(source, attr):
                    raise RegistrationError(f"agent source {source!r} has no {attr!r}")
            self.agent_sources.append(AgentSourceRegistration(source, self.plugin))  # type: ignore[arg-type]

    def commit(self) -> None:
        if self.settings is not None:
            self.merged.settings[self.plugin] = self.settings
        for reg in self.components:
            self.merged.components[reg.kind][reg.name] = reg
        for tool in self.tools:
            self.merged.tool_claims.setdefault(tool.tool.name, []).append(tool)
        self.merged.agent_sources.extend(self.agent_sources)


def check_tool(tool: Tool | Callable[..., Any]) -> Tool:
    """``tool`` as a :class:`Tool` (a plain function is described by
    ``Tool.from_function``). :raises RegistrationError: for anything else, or a name
    that is not a tool name."""
    if not isinstance(tool, Tool):
        if not callable(tool):
            raise RegistrationError(
                f"expected a toolang_core.tools.Tool or a function, got {tool!r}"
            )
        tool = Tool.from_function(tool)
    if not _TOOL_NAME.match(tool.name):
        raise RegistrationError(f"tool name {tool.name!r} must match {_TOOL_NAME.pattern}")
    return tool


def collect_components(host: CollectingHost) -> Components:
    """Call every registration hook of every active plugin, one plugin at a time.

    Plugins are asked built-ins first, then in name order; when two register the same
    component name, the one asked first keeps it and the other fails. A tool name
    several plugins register is settled by ``[tools.providers]``, or withheld from all
    of them with an error naming each distribution; the plugins keep their other
    contributions.
    """
    merged = Components()
    # Built-in plugins first, then by name: on a name conflict the earlier one keeps it.
    order = sorted(
        host.active_names, key=lambda n: (host.record(n).status is not PluginStatus.BUILTIN, n)
    )
    for plugin in order:
        contributions = _PluginContributions(plugin, merged)
        failed = _register_all(host, plugin, contributions)
        if failed is None:
            contributions.commit()
        else:
            host.fail(plugin, "collect", failed[1], hook=failed[0])
    names = decide_tool_names(merged.tool_claims, host.tool_providers, host.record)
    merged.tools.publish(names.tools)
    merged.withheld_tools.publish(names.withheld)
    offering = host.hooks.implementations("toolang_offer_tools")
    for problem in names.problems:
        if problem.level != "error" and _may_offer(problem.tool, host, offering):
            continue  # a plugin offering tools may offer this one once the runtime serves
        if problem.level == "error":
            host.report_error(problem.message, plugins=problem.plugins, event="plugin.tool_clash")
        else:
            host.warn(None, problem.message, event="plugin.tool_provider_unused")
    return merged


def _may_offer(tool: str | None, host: CollectingHost, offering: Iterable[str]) -> bool:
    chosen = host.tool_providers.get(tool or "")
    if chosen is None:
        return False
    key = normalize(chosen)
    for plugin in offering:
        found = host.record(plugin)
        if key in {normalize(found.name), normalize(found.distribution or found.name)}:
            return True
    return False


def _register_all(
    host: CollectingHost, plugin: str, contributions: _PluginContributions
) -> tuple[str, BaseException | str] | None:
    """Call each registration hook of ``plugin``; the hook it failed in and why, or
    ``None`` when every registration stood."""
    for hook, register in _registration_calls(contributions):
        returned, failure = host.hooks.registration(hook, plugin, **register)
        if failure is not None:
            return hook, failure.exception or failure.error
        if hook == "toolang_agent_sources":
            try:
                for value in returned:
                    contributions.add_agent_sources(value)
            except Exception as exc:
                return hook, exc
    return None


def _registration_calls(
    c: _PluginContributions,
) -> Iterable[tuple[str, dict[str, Any]]]:
    yield "toolang_register_settings", {"register": c.register_settings}
    for hook, kind in COMPONENT_KINDS.items():
        yield hook, {"register": c.component_registrar(kind)}
    yield "toolang_register_tools", {"register": c.register_tool}
    yield "toolang_agent_sources", {}


def add_plugin_commands(
    host: CollectingHost,
    cli: click.Group,
    *,
    only: Collection[str] | None = None,
    skip: Collection[str] = (),
) -> tuple[dict[str, str], bool]:
    """Call ``toolang_register_commands`` per plugin (those in ``only`` when given, none
    in ``skip``); refuse commands that clash. Returns which plugin added each command,
    and whether every plugin called added its commands without failing."""
    hook = "toolang_register_commands"
    owners: dict[str, str] = {}
    clean = True
    for plugin in host.hooks.implementations(hook):
        if plugin in skip or (only is not None and plugin not in only):
            continue
        before = dict(cli.commands)
        try:
            _, failure = host.hooks.registration(hook, plugin, cli=cli)
            if failure is not None:
                raise failure.exception or RegistrationError(failure.error)
            for name, command in list(cli.commands.items()):
                if name in before and before[name] is not command:
                    cli.commands[name] = before[name]
                    raise RegistrationError(f"command {name!r} is already taken")
        except Exception as exc:
            clean = False
            added = set(cli.commands) - set(before)
            for name in added:
                del cli.commands[name]
            host.fail(plugin, "collect", exc, hook="toolang_register_commands")
        else:
            owners.update((name, plugin) for name in set(cli.commands) - set(before))
    return owners, clean
