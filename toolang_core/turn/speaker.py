"""The agent answering in a loop, with its model and its tools (:class:`Speaker`).

A leaf, so that what picks a speaker (a running turn's ``complete``) does not import the
agent loop, which re-exports it from its older place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.models.types import ToolSpec
    from toolang_core.turn.model_retry import Candidate


@attrs.frozen
class Speaker:
    """The agent answering in a loop, with its model and its tools."""

    agent: AgentDefinition
    model: Any
    model_name: str
    specs: tuple[ToolSpec, ...]
    allowed: frozenset[str]
    fallbacks: tuple[Candidate, ...] = ()
    """The models a failed call goes to next, in order (:mod:`~toolang_core.turn.model_retry`)."""

    @property
    def model_id(self) -> str | None:
        return self.model_name.partition("/")[2] or None
