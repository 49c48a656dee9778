"""Plugin authors' mistakes that would otherwise be silent.

Each finder returns messages for a person; the host reports them as warnings (errors
in strict mode) or fails the plugin:

- a hook toolang does not define, or a ``@hookimpl`` function not named ``toolang_*``;

- an entry point declared in a group that is almost ``toolang`` (``toolang_plugins``,
  ``toolang-plugins``, ``Toolang``): toolang never sees the distribution;
- a ``toolang_*`` function that is not marked ``@hookimpl``: pluggy never calls it;
- a registration hook written ``async def``: it runs once at start-up, where nothing
  awaits it;
- a thread-group or memory ``save_turns`` name that is a near miss of a registered turn
  source's name: its settings apply to no source's requests.
"""

from __future__ import annotations

import difflib
import inspect
import re
import types
from collections.abc import Collection, Iterable
from importlib.metadata import EntryPoint
from inspect import getattr_static
from typing import TYPE_CHECKING, Any

from toolang_core.hookspecs.rules import HOOK_RULES, REGISTRATION
from toolang_core.markers import HOOK_PREFIX, PROJECT_NAME

if TYPE_CHECKING:
    import pluggy

    from toolang_core.config.model import ToolangConfig

_IMPL_ATTR = PROJECT_NAME + "_impl"


def misdeclared_groups(entry_points: Iterable[EntryPoint], group: str = PROJECT_NAME) -> list[str]:
    """A message for each distribution that declares entry points only in groups that
    look like a misspelling of ``group`` (and none in ``group`` itself)."""
    entry_points = list(entry_points)
    similar = {ep.group for ep in entry_points if ep.group != group}
    similar = {g for g in similar if looks_like(g, group)}  # asked once per group, not per entry
    if not similar:
        return []
    found: dict[str, list[EntryPoint]] = {}
    declaring: set[str] = set()
    for ep in entry_points:
        if ep.group == group:
            declaring.add(_distribution(ep))
        elif ep.group in similar:
            found.setdefault(_distribution(ep), []).append(ep)
    messages = []
    for name, eps in sorted(found.items()):
        if name in declaring:
            continue
        groups = sorted({ep.group for ep in eps})
        listed = ", ".join(f"{ep.name} = {ep.value}" for ep in eps)
        messages.append(
            f"distribution {name} declares entry points in group "
            f"{', '.join(map(repr, groups))} ({listed}) but none in {group!r}: toolang never "
            f"loads it — declare them under [project.entry-points.{group}] in its "
            "pyproject.toml"
        )
    return messages


def _distribution(ep: EntryPoint) -> str:
    dist = ep.dist
    if dist is None:
        return "<unknown>"
    metadata = dist.metadata
    return f"{metadata['Name']} {metadata['Version']}"


def looks_like(candidate: str, group: str) -> bool:
    """Whether entry-point group ``candidate`` reads like a misspelling of ``group``."""
    squashed = re.sub(r"[^a-z0-9]", "", candidate.lower())
    if squashed.startswith(group):
        return True
    return difflib.SequenceMatcher(None, squashed, group).ratio() >= 0.8


def unmarked_hooks(plugin: object, known: Collection[str]) -> list[str]:
    """A message for each function of ``plugin`` named like a toolang hook (``known``,
    or a near miss of one) that is not marked ``@hookimpl``. A module's functions count
    only when defined in that module (an imported helper is not the plugin's)."""
    messages = []
    names = vars(plugin) if isinstance(plugin, types.ModuleType) else _attributes(plugin)
    for attr in sorted(names):
        if not attr.startswith(HOOK_PREFIX):
            continue
        value = _unwrapped(plugin, attr)
        if not callable(value) or hasattr(value, _IMPL_ATTR):
            continue
        if isinstance(plugin, types.ModuleType) and getattr(value, "__module__", None) != (
            plugin.__name__
        ):
            continue
        if attr in known:
            messages.append(
                f"function {attr} is not marked @hookimpl, so toolang never calls it "
                "(decorate it with toolang_core.hookimpl)"
            )
            continue
        hint = difflib.get_close_matches(attr, list(known), n=1, cutoff=0.8)
        if hint:
            messages.append(
                f"function {attr} is not marked @hookimpl and is no toolang hook (did you "
                f"mean {hint[0]!r}, marked with toolang_core.hookimpl?)"
            )
    return messages


def _attributes(plugin: object) -> list[str]:
    return [name for name in dir(plugin) if not name.startswith("__")]


def _unwrapped(plugin: object, attr: str) -> Any:
    try:
        value = getattr_static(plugin, attr)
    except AttributeError:
        return None
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    return value


def async_registration_hooks(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """The first registration hook ``plugin`` implements as ``async def``, or ``None``."""
    for caller in pm.get_hookcallers(plugin) or ():
        if HOOK_RULES.get(caller.name) is not REGISTRATION:
            continue
        for impl in caller.get_hookimpls():
            function = inspect.unwrap(impl.function)
            if impl.plugin is plugin and (
                inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
            ):
                return caller.name
    return None


def misnamed_sources(config: ToolangConfig, sources: Collection[str]) -> list[str]:
    """A message for each ``[scheduler.groups.<name>]`` and ``[memory] save_turns`` name
    that names no registered turn source (nor the task runs' group) but is a near miss
    of one: a typo whose settings would apply to nothing. A name far from every source
    is left alone — requests submitted with ``--source <name>`` use it."""
    known = sorted({*sources, "task"})
    where = config.display_name
    named = [(f"scheduler.groups.{name}", name) for name in config.scheduler.groups]
    named += [("memory.save_turns", name) for name in config.memory.save_turns]
    messages = []
    for key, name in named:
        if name in known:
            continue
        hint = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if hint:
            messages.append(
                f"{where}: {key}: {name!r} names no registered turn source (did you mean "
                f"{hint[0]!r}? sources: {', '.join(known)})"
            )
    return messages


def misnamed_hookimpl(plugin: object) -> str | None:
    """The first function of ``plugin`` marked ``@hookimpl`` whose name is not a toolang
    hook's (``toolang_*``): pluggy would take it for a hook of another project."""
    for attr in dir(plugin):
        if attr.startswith(HOOK_PREFIX) or attr.startswith("__"):
            continue
        value = _unwrapped(plugin, attr)
        if callable(value) and hasattr(value, _IMPL_ATTR):
            return attr
    return None


def hook_names(pm: pluggy.PluginManager) -> list[str]:
    """The names of the hooks ``pm`` has specifications for."""
    return [name for name, caller in vars(pm.hook).items() if caller.has_spec()]


def unknown_hook(pm: pluggy.PluginManager, plugin: object) -> tuple[str, str] | None:
    """The first hook ``plugin`` implements that toolang does not define (pluggy's
    ``check_pending``, for one plugin), and a message with a "did you mean"."""
    known = hook_names(pm)
    for caller in pm.get_hookcallers(plugin) or ():
        if caller.has_spec():
            continue
        if all(impl.optionalhook for impl in caller.get_hookimpls() if impl.plugin is plugin):
            continue
        hint = difflib.get_close_matches(caller.name, known, n=1)
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
        return caller.name, f"unknown hook {caller.name!r}{suggestion}"
    return None
