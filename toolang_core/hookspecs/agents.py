"""Agent registry hooks: sources of agent definitions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentSource


@hookspec
def toolang_agent_sources() -> AgentSource | Iterable[AgentSource] | None:
    """Return the agent-definition sources this plugin provides.

    Return one :class:`~toolang_core.agents.AgentSource`, an iterable of them, or
    ``None``. Each source is labelled ``builtin``, ``embedded``, ``user`` or
    ``remote``; the registry merges their definitions by that precedence. Do no I/O
    here: the registry calls ``source.load(context)`` when it needs the definitions.
    """
