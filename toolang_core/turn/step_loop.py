"""What every step of the agent loop reads of the loop that runs it (the model step,
:mod:`toolang_core.turn.model_step`, and the tool step, :mod:`toolang_core.turn.tool_step`,
each add their own); :class:`~toolang_core.turn.loop.AgentLoop` is one. Named here, not
the loop, which imports the step modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnContext
    from toolang_core.turn.running import RunningTurn
    from toolang_core.turn.speaker import Speaker


class StepLoop(Protocol):
    """The turn, its handle, its speaker and where its steps' keys start."""

    @property
    def ctx(self) -> TurnContext: ...

    @property
    def handle(self) -> RunningTurn: ...

    @property
    def speaker(self) -> Speaker: ...

    @property
    def key_prefix(self) -> str: ...

    @property
    def spawn_depth(self) -> int: ...
