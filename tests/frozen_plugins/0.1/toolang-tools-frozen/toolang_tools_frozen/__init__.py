"""toolang-tools-frozen: a toolang tools plugin.

Its tools are named ``frozen_*``, and it brings the agent that owns them: the agent
``frozen`` claims the prefix ``frozen_`` (an ``embedded`` agent source), so a turn
can use the tools as soon as the plugin is installed — talk to it with
``toolang chat --agent frozen …``. Add a tool: register it under a ``frozen_`` name.
An AGENT.md named ``frozen`` in your ``[agents] dir`` replaces this agent.
"""

from __future__ import annotations

from typing import Literal

from toolang_core import (
    AgentDefinition,
    AgentLoad,
    PluginContext,
    RegisterTool,
    Tool,
    hookimpl,
)

AGENT = "frozen"
PREFIX = "frozen_"


def frozen_hello(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    register(
        Tool(
            name="frozen_hello",
            description="Greet someone by name.",
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            function=frozen_hello,
        )
    )


class FrozenAgents:
    """The agent that owns this plugin's tools (every tool named ``frozen_*``)."""

    label: Literal["embedded"] = "embedded"
    name = "tools-frozen"

    def load(self, context: PluginContext) -> AgentLoad:
        agent = AgentDefinition(
            name=AGENT,
            description="Uses the frozen_* tools.",
            instruction="You use the frozen_* tools to answer. Say what a tool returned.",
            prefixes=(PREFIX,),
            keywords=("frozen",),
            source="embedded",
            origin="toolang_tools_frozen",
        )
        return AgentLoad(definitions=(agent,))


@hookimpl
def toolang_agent_sources() -> FrozenAgents:
    return FrozenAgents()
