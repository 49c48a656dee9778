"""toolang-agents-builtin: the eight built-in roles, as the registry's ``builtin`` source."""

from __future__ import annotations

from typing import Literal

from toolang_core import AgentLoad, PluginContext, hookimpl

NAME = "agents-builtin"


class BuiltinRoles:
    """The ``builtin`` source: the roles of :mod:`toolang_agents_builtin.roles`."""

    label: Literal["builtin"] = "builtin"
    name = "roles"

    def load(self, context: PluginContext) -> AgentLoad:
        from toolang_agents_builtin.roles import ROLES

        return AgentLoad(definitions=ROLES)


@hookimpl
def toolang_agent_sources() -> BuiltinRoles:
    return BuiltinRoles()
