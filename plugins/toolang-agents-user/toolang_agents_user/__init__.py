"""toolang-agents-user: agents from AGENT.md files under ``[agents] dir``."""

from __future__ import annotations

from typing import Literal

from toolang_core import AgentLoad, PluginContext, hookimpl

NAME = "agents-user"


class UserAgents:
    """The ``user`` source (priority 2): ``<agents dir>/<name>/AGENT.md``, read on load."""

    label: Literal["user"] = "user"
    name = "agents-dir"

    def load(self, context: PluginContext) -> AgentLoad:
        from toolang_agents_user.directory import load_directory

        config = context.config
        return load_directory(config.agents_dir, configured=config.agents.dir is not None)


@hookimpl
def toolang_agent_sources() -> UserAgents:
    return UserAgents()
