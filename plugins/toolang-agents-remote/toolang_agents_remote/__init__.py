"""toolang-agents-remote: agents discovered from A2A endpoints' agent cards.

The A2A SDK is imported only when the registry loads the source, never at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from toolang_core import (
    AgentLoad,
    PluginContext,
    RegisterFactory,
    RegisterSettings,
    Secret,
    hookimpl,
)

if TYPE_CHECKING:
    from toolang_core import AgentDefinition, AgentHealth, Runtime

NAME = "agents-remote"


@attrs.frozen
class RemoteSettings:
    """``[plugins.agents-remote]``: the A2A endpoints to discover agents at.

    ``endpoints`` are base URLs (``http://host:port``); each one's card is read from
    ``/.well-known/agent-card.json`` within ``timeout_seconds``. ``tokens`` maps an
    endpoint to the bearer token sent when calling it (``${ENV}`` expanded). A call to a
    remote agent gives up after ``call_timeout_seconds``; its task is polled at most
    every ``poll_seconds``.
    """

    endpoints: list[str] = attrs.field(factory=list)
    timeout_seconds: float = 5.0
    tokens: Mapping[str, Secret] = attrs.field(factory=dict)
    call_timeout_seconds: float = 300.0
    poll_seconds: float = 0.05

    def __attrs_post_init__(self) -> None:
        from toolang_agents_remote.cards import url_problem

        problems = [
            f"endpoints[{i}]: {why}"
            for i, url in enumerate(self.endpoints)
            if (why := url_problem(url)) is not None
        ]
        problems += [
            f"tokens.{url}: not one of endpoints"
            for url in self.tokens
            if url not in self.endpoints
        ]
        if self.call_timeout_seconds <= 0 or self.poll_seconds <= 0:
            problems.append("call_timeout_seconds and poll_seconds: expected numbers > 0")
        if self.timeout_seconds <= 0:
            problems.append(f"timeout_seconds: expected a number > 0, found {self.timeout_seconds}")
        if problems:
            raise ValueError("; ".join(problems))


class RemoteAgents:
    """The ``remote`` source (priority 3): one agent per reachable (or known) endpoint."""

    label: Literal["remote"] = "remote"
    name = "a2a"

    def load(self, context: PluginContext) -> AgentLoad:
        settings = context.settings if context.settings is not None else RemoteSettings()
        if not settings.endpoints:
            return AgentLoad()
        from toolang_agents_remote.cards import CardCache, discover

        cache = CardCache(context.home / NAME / "cards")
        load = discover(settings.endpoints, timeout=settings.timeout_seconds, cache=cache)
        from toolang_agents_remote.calls import with_call_outcomes

        return with_call_outcomes(load, context.home, context.service("plugin_databases"))


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(RemoteSettings)


@hookimpl
def toolang_register_models(register: RegisterFactory) -> None:
    def provider(context: PluginContext) -> Any:
        from toolang_agents_remote.calls import RemoteAgentProvider

        settings = context.settings if context.settings is not None else RemoteSettings()
        # The call log lives on the store's backend: a turn resumed on another node
        # finds the remote task its first node sent (the runtime's plugin databases).
        return RemoteAgentProvider(settings, context.home, context.service("plugin_databases"))

    register("a2a", provider, description="remote A2A agents, called through a2a-sdk")


@hookimpl
def toolang_agent_sources() -> RemoteAgents:
    return RemoteAgents()


@hookimpl
def toolang_ping_agents(
    agents: Sequence[AgentDefinition], runtime: Runtime
) -> dict[str, AgentHealth] | None:
    """The agent pool's scheduled heartbeat: read the card of each of our remote
    agents again (the endpoints configured here; another plugin's agents are not ours)."""
    settings = runtime.settings.get(NAME) or RemoteSettings()
    ours = [d for d in agents if d.origin in settings.endpoints]
    if not ours:
        return None
    from toolang_agents_remote.cards import ping

    return ping(ours, timeout=settings.timeout_seconds)
