"""The running turn as a tool call sees it (:class:`TurnHandle`).

``ToolCallContext.turn`` is typed as this protocol, not as the agent executor's
:class:`~toolang_core.turn.running.RunningTurn` which implements it: the tool-call
values stay below the agent turn, even for the type checker.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import TurnRequest
    from toolang_core.tools.types import ToolCallContext

ResponseMode = Literal["all_messages", "final_only"]
"""What an asked agent's answer holds: every assistant message, or the final one."""


class TurnHandle(Protocol):
    """One agent turn in progress, as its control tools see it."""

    max_rounds: int
    """The delegation rounds this turn may take."""
    rounds: int
    """The delegation rounds it took so far."""

    @property
    def request(self) -> TurnRequest:
        """The turn request being executed."""

    @property
    def runtime(self) -> RuntimeView:
        """The runtime running the turn."""

    @property
    def owner(self) -> str:
        """Whose work this is: the request's owner, else its sender."""

    def take_round(self) -> bool:
        """Count one delegation round; ``False`` once the turn's limit is used up."""
        ...

    async def ask(self, call: ToolCallContext, agent: str, request: str, mode: ResponseMode) -> str:
        """Run ``agent`` on ``request`` inside this turn and return its answer.

        :raises DelegationError: when the agent cannot be used or does not answer.
        """
        ...

    def waiting(self) -> AbstractContextManager[None]:
        """While the body waits for other turns, this turn's slot is lent to them."""
        ...

    async def complete(self, call: ToolCallContext, instruction: str, text: str) -> str:
        """One answer of the calling agent's own model to ``text`` under
        ``instruction`` (no tools, no history, no memory).

        :raises DelegationError: when the agent or its model cannot be used or fails.
        """
        ...

    def parked(self) -> AbstractAsyncContextManager[None]:
        """While the body waits for a person (``ask_person``): the turn shows
        ``awaiting_approval``, its slot is free for other work, its time limit stands
        still; on leaving, the slot is taken back in order."""
        ...

    def stopped_for_good(self) -> str | None:
        """After the body's wait was cancelled: why the turn will not come back to it
        (canceled, timed out), or ``None`` when it is only handed back (shutdown, lost
        lease) and resumes to find what it waited for."""
        ...
