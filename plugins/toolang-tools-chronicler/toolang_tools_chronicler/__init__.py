"""toolang-tools-chronicler: the chronicler role's observation and reflection tools.

``observe_record`` / ``observe_list`` keep and read observations about the conversation
or the user; ``reflect_create`` has the agent's own model summarise recent
observations into a reflection, and ``reflect_list`` reads reflections back. All of
it lives in the calling agent's memory (the configured memory plugin), scoped like
``memory_agent_*``: by the call's agent, never by a parameter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from toolang_core import hookimpl

if TYPE_CHECKING:
    from toolang_core import RegisterSettings, RegisterTool

NAME = "tools-chronicler"


@attrs.frozen
class ChroniclerSettings:
    """``[plugins.tools-chronicler]``: how many observations one reflection reads at
    most, and the instruction the agent's model gets to write it."""

    max_observations: int = 50
    instruction: str = (
        "You write reflections for an agent's long-term memory. Summarise the "
        "observations below into one short reflection (at most five sentences): the "
        "lasting patterns, preferences and facts, not a list of events. Write only the "
        "reflection."
    )

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.max_observations <= 500:
            raise ValueError(f"max_observations: expected 1 to 500, found {self.max_observations}")


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(ChroniclerSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_chronicler.tools import TOOLS

    for tool in TOOLS:
        register(tool)
