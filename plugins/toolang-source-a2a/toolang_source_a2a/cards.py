"""The agent cards this runtime serves, built from its agent registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

import toolang_core

if TYPE_CHECKING:
    from toolang_core import AgentDefinition, Runtime
    from toolang_source_a2a.settings import A2ASettings

API_KEY_HEADER = "X-API-Key"


def served_agents(runtime: Runtime, settings: A2ASettings) -> list[str]:
    """The names of the agents served (configured, else ``[agents] default``)."""
    return list(settings.agents) or [runtime.config.agents.default]


def agent_path(name: str) -> str:
    return f"/a2a/{name}"


def card_for(definition: AgentDefinition, base_url: str, settings: A2ASettings) -> AgentCard:
    """One agent's card: where to call it, what it does, how to authenticate."""
    about = definition.description or f"toolang agent {definition.name}"
    skills = [
        AgentSkill(
            id=definition.name,
            name=definition.name,
            description=about,
            tags=list(definition.keywords) or [definition.name],
        )
    ]
    skills += [
        AgentSkill(id=c, name=c, description=f"{definition.name}: {c}", tags=[c])
        for c in definition.capabilities
        if c != definition.name
    ]
    card = AgentCard(
        name=definition.name,
        description=about,
        version=toolang_core.__version__,
        supported_interfaces=[
            AgentInterface(
                url=base_url.rstrip("/") + agent_path(definition.name),
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )
    if settings.tokens:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
        )
        card.security_schemes["apiKey"].CopyFrom(
            SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name=API_KEY_HEADER)
            )
        )
        card.security_requirements.extend(
            [
                SecurityRequirement(schemes={"bearer": StringList()}),
                SecurityRequirement(schemes={"apiKey": StringList()}),
            ]
        )
    return card


def cards(runtime: Runtime, settings: A2ASettings, base_url: str) -> dict[str, AgentCard]:
    """Every served agent's card by name; an unknown or disabled agent raises.

    :raises toolang_core.ToolangError: (the registry's AgentError) naming the agent.
    """
    catalog = runtime.agents
    return {
        name: card_for(catalog.agent(name), base_url, settings)
        for name in served_agents(runtime, settings)
    }
