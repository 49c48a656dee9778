"""Who gets a tool name that more than one plugin registers.

Plugins are asked for their tools one at a time, in name order; if the first to
register a name kept it, a plugin whose name sorts earlier could take over another
plugin's tool, and the rightful agent would call the squatter's function. So a name is
never decided by order: a name one plugin registers is that plugin's; a name several
register is withheld from all of them — an error naming every distribution — unless
``[tools.providers]`` says whose it is. An entry there also pins an uncontested name:
another plugin registering it does not get it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from toolang_core.plugins.loader import normalize

if TYPE_CHECKING:
    from toolang_core.plugins.records import PluginRecord
    from toolang_core.plugins.registrations import ToolRegistration

PROVIDERS_KEY = "[tools.providers]"


@attrs.frozen
class ToolNameProblem:
    """A tool name withheld (``level`` ``error``), or a providers entry that matches
    nothing (``warning``); ``plugins`` are the plugins it concerns."""

    level: str
    message: str
    plugins: tuple[str, ...] = ()
    tool: str | None = None


@attrs.frozen
class ToolNames:
    """The decision: the registration each tool name goes to, the names withheld (with
    why, for the call that asks for one), and the problems to report."""

    tools: dict[str, ToolRegistration]
    withheld: dict[str, str]
    problems: tuple[ToolNameProblem, ...]


def decide_tool_names(
    claims: Mapping[str, Sequence[ToolRegistration]],
    providers: Mapping[str, str],
    record: Callable[[str], PluginRecord],
) -> ToolNames:
    """Settle every tool name of ``claims`` (name → registrations, in the order the
    plugins were asked) by ``providers`` (``[tools.providers]``: name → plugin)."""
    tools: dict[str, ToolRegistration] = {}
    withheld: dict[str, str] = {}
    problems: list[ToolNameProblem] = []
    for name, registrations in claims.items():
        chosen = providers.get(name)
        if chosen is None and len(registrations) == 1:
            tools[name] = registrations[0]
            continue
        plugins = tuple(r.plugin for r in registrations)
        if chosen is not None:
            winner = _matching(chosen, registrations, record)
            if winner is not None:
                tools[name] = winner
                continue
            message = (
                f"tool {name!r}: {PROVIDERS_KEY} gives it to {chosen!r}, which does not "
                f"register it; registered by {_who(registrations, record)} — withheld"
            )
        else:
            message = (
                f"tool {name!r} is registered by {_who(registrations, record)}: withheld from "
                f"all of them, none gets it by load order. Say whose it is in toolang.toml: "
                f'{PROVIDERS_KEY} {name} = "{_dist_or_name(record(plugins[-1]))}"'
            )
        withheld[name] = message
        problems.append(ToolNameProblem("error", message, plugins, name))
    for name, chosen in providers.items():
        if name not in claims:
            problems.append(
                ToolNameProblem(
                    "warning",
                    f"{PROVIDERS_KEY} {name} = {chosen!r}: no active plugin registers a tool "
                    f"named {name!r}",
                    tool=name,
                )
            )
    return ToolNames(tools, withheld, tuple(problems))


def refused_offer(
    name: str,
    claims: Sequence[ToolRegistration],
    providers: Mapping[str, str],
    record: Callable[[str], PluginRecord],
) -> str | None:
    """Why the last of ``claims`` — a tool offered while the runtime serves — cannot
    have ``name``, or ``None`` when it gets it.

    The same rules as :func:`decide_tool_names`, settled for the newcomer alone: it
    gets the name when nobody else claims it and ``[tools.providers]`` does not give
    it to another plugin, or when ``[tools.providers]`` gives it to the newcomer. A
    clash refuses the newcomer instead of withholding the name from everyone, so a
    running turn never loses a tool because another plugin offered one like it."""
    decided = decide_tool_names({name: claims}, _only(providers, name), record)
    if decided.tools.get(name) is claims[-1]:
        return None
    newcomer = _describe(record(claims[-1].plugin))
    others = [c for c in claims[:-1] if c.plugin != claims[-1].plugin]
    chosen = providers.get(name)
    if chosen is not None:
        return (
            f"tool {name!r} offered by {newcomer} is refused: {PROVIDERS_KEY} gives it to "
            f"{chosen!r}" + (f"; registered by {_who(others, record)}" if others else "")
        )
    return (
        f"tool {name!r} offered by {newcomer} is refused: {_who(others, record)} already "
        f"has it; the standing tool stays. Say whose it is in toolang.toml: "
        f'{PROVIDERS_KEY} {name} = "<plugin or distribution>"'
    )


def _only(providers: Mapping[str, str], name: str) -> Mapping[str, str]:
    return {name: providers[name]} if name in providers else {}


def _matching(
    chosen: str, registrations: Sequence[ToolRegistration], record: Callable[[str], PluginRecord]
) -> ToolRegistration | None:
    key = normalize(chosen)
    for registration in registrations:
        found = record(registration.plugin)
        names = {normalize(found.name)}
        if found.distribution:
            names.add(normalize(found.distribution))
        if key in names:
            return registration
    return None


def _who(registrations: Sequence[ToolRegistration], record: Callable[[str], PluginRecord]) -> str:
    described = [_describe(record(r.plugin)) for r in registrations]
    if len(described) == 1:
        return described[0]
    return ", ".join(described[:-1]) + " and " + described[-1]


def _describe(found: PluginRecord) -> str:
    if found.distribution:
        version = f" {found.version}" if found.version else ""
        return f"plugin {found.name!r} (distribution {found.distribution}{version})"
    if found.status == "builtin":
        return f"plugin {found.name!r} (built into toolang-core)"
    return f"plugin {found.name!r}"


def _dist_or_name(found: PluginRecord) -> str:
    return found.distribution or found.name
