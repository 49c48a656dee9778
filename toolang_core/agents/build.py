"""Per-request agents: ``toolang_build_agent`` plugins change the agent for one turn.

The registry resolves a request's agent; each plugin implementing the hook may then
answer a changed copy (a tenant's instruction, model, fewer tools), the later plugins
seeing the earlier ones' answer (the fold rule). What it may change stays inside the
registry's limits, checked here after every plugin answered: the agent keeps its name,
its claimed ``prefixes``, its ``sandbox`` and its ``status``; changed ``tools`` narrow its
scope and never widen it; its step, delegation and context limits only go down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.agents.partition import PatternError, ToolScopeError
from toolang_core.agents.types import AgentDefinition

if TYPE_CHECKING:
    from toolang_core.plugins.facade import Hooks
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import TurnRequest

HOOK: Final = "toolang_build_agent"
_KEPT: Final = ("name", "prefixes", "sandbox", "status")
_LOWER_ONLY: Final = ("max_steps", "max_delegation_rounds", "context_tokens")


class AgentBuildError(ValueError):
    """A ``toolang_build_agent`` plugin failed, or answered outside the registry's
    limits (the message names the plugin and what it changed)."""


@attrs.frozen
class Built:
    """The agent one request runs with, and how the plugins made it."""

    agent: AgentDefinition
    narrowed: frozenset[str] | None
    """The tools the plugins narrowed the scope to (``None``: not narrowed)."""
    changed_by: tuple[str, ...]
    """The plugins that answered a changed agent, in call order."""


async def build_agent(
    hooks: Hooks,
    definition: AgentDefinition,
    request: TurnRequest,
    runtime: RuntimeView,
    *,
    scope: Callable[[AgentDefinition, Iterable[str] | None], frozenset[str]],
    defaults: Mapping[str, int | None],
) -> Built:
    """Ask every ``toolang_build_agent`` plugin; the checked result.

    ``scope(agent, allowed_tools)`` is the registry's narrowing (raising
    :class:`ToolScopeError` for a name outside the agent's scope); ``defaults`` the
    ``[agents]`` limits an agent without its own runs with.

    :raises AgentBuildError: for a plugin that raised, or an answer outside the limits.
    """
    done = await hooks.build_agent(definition, request, runtime)
    if done.refused is not None:
        raise AgentBuildError(
            f"plugin {done.refused.plugin!r} failed in {HOOK} for agent "
            f"{definition.name!r}: {done.refused.error}"
        )
    changed_by = tuple(plugin for plugin, answer in done.answers if answer != definition)
    built: AgentDefinition = done.arguments["definition"]
    if built == definition:
        return Built(definition, None, ())
    who = ", ".join(map(repr, changed_by)) or "a plugin"
    for name in _KEPT:
        if getattr(built, name) != getattr(definition, name):
            raise AgentBuildError(
                f"{HOOK} of {who} changed {name} of agent {definition.name!r} "
                f"({getattr(definition, name)!r} -> {getattr(built, name)!r}); a plugin "
                f"may not change {', '.join(_KEPT)}"
            )
    for name in _LOWER_ONLY:
        before, after = getattr(definition, name), getattr(built, name)
        _lower_only(
            name,
            defaults.get(name) if before is None else before,
            defaults.get(name) if after is None else after,
            who,
            definition.name,
        )
    narrowed = None
    if built.tools != definition.tools:
        try:
            narrowed = scope(definition, built.tools)
        except (ToolScopeError, PatternError) as exc:
            raise AgentBuildError(
                f"{HOOK} of {who} gave agent {definition.name!r} tools outside its scope "
                f"(a plugin may only narrow it): {exc}"
            ) from None
        built = attrs.evolve(built, tools=definition.tools)
    return Built(built, narrowed, changed_by)


def _lower_only(name: str, before: Any, after: Any, who: str, agent: str) -> None:
    """The limit ``after`` (as the turn will run: the default filled in) may equal
    ``before`` or go down; ``None`` is no limit."""
    if before is None or (after is not None and after <= before):
        return
    raise AgentBuildError(
        f"{HOOK} of {who} raised {name} of agent {agent!r} from {before!r} to {after!r}; "
        "a plugin may only lower it"
    )
