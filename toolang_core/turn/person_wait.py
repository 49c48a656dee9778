"""Waiting for a person inside an agent turn: an approval (a gate's, or one asked for a
tool call in doubt after a crash) and the turn parked meanwhile.

While it waits the turn shows ``awaiting_approval``, its slot is free for other work,
and the agent's own time limit stands still. A turn that stops waiting for good
(canceled, timed out) expires its request at once; one only handed back (shutdown, a
lost lease) finds it again when it resumes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING

import structlog

from toolang_core.errors import describe_exception
from toolang_core.execution.seam import LEASE_LOST, SHUTDOWN, TurnContext
from toolang_core.store.types import TurnStatus
from toolang_core.tools import time_limit as tool_time_limit
from toolang_core.tools.approvals import Approval, ApprovalBook
from toolang_core.tools.types import Denied, Granted, Pending, ToolCall

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime

log = structlog.get_logger("toolang.turn")


class PersonWaits:
    """The part of :class:`~toolang_core.turn.agent.AgentExecutor` that waits for a
    person; it uses the executor's ``runtime`` and its turns' ``_deadlines``."""

    runtime: CoreRuntime
    _deadlines: dict[str, asyncio.Timeout]

    async def await_approval(
        self, ctx: TurnContext, pending: Pending, call: ToolCall
    ) -> Granted | Denied:
        book = ApprovalBook(ctx.store, clock=ctx.clock)
        approval = book.get(pending.approval_id)
        if approval.turn_id != ctx.turn.id or not book.shows(approval, call.name, call.params):
            # a gate named another call's request (or the call was changed in the store
            # since it was asked about): its decision decides nothing here
            log.warning(
                "approval.not_this_call",
                turn=ctx.turn.id,
                approval=approval.id,
                tool=call.name,
                approval_turn=approval.turn_id,
                approval_tool=approval.tool,
            )
            return Denied(
                f"approval {approval.id} is for another call ({approval.tool} in turn "
                f"{approval.turn_id}, with the parameters it was asked for; a secret masked "
                f"at rest is not those); {call.name} was not run"
            )
        log.info("turn.awaiting_approval", turn=ctx.turn.id, approval=approval.id, tool=call.name)
        try:
            async with self.parked_on_person(ctx):
                final = await book.wait(approval)
        except asyncio.CancelledError:
            self._expire_unless_coming_back(book, approval, ctx)
            raise
        return book.decision(final)

    @asynccontextmanager
    async def parked_on_person(self, ctx: TurnContext) -> AsyncIterator[None]:
        """While the body waits for a person (an approval, an ``ask_person`` answer):
        the turn shows ``awaiting_approval``, its slot is free for other work and taken
        again (in order) once the person acted — a shutdown hands it back at once — and
        the agent's own time limit stands still (a person's time is not the agent's)."""
        ctx.set_status(TurnStatus.AWAITING_APPROVAL)
        loop = asyncio.get_running_loop()
        deadline = self._deadlines.get(ctx.turn.id)
        due = deadline.when() if deadline is not None else None
        remaining = None if due is None else due - loop.time()
        if deadline is not None:
            deadline.reschedule(None)
        slot = ctx.slot
        parked = slot.parked(ctx.turn.id) if slot is not None else nullcontext()
        try:
            async with parked:
                with tool_time_limit.paused():
                    yield
        finally:
            if deadline is not None and remaining is not None:
                deadline.reschedule(loop.time() + remaining)
            current = ctx.store.get(ctx.turn.id)
            waiting = current is not None and current.status is TurnStatus.AWAITING_APPROVAL
            # handed back while waiting, it stays so: its attempt is not counted
            # (the store's ``parked_handbacks``) and it comes back to the same wait
            if waiting and not self._handed_back(ctx):
                ctx.set_status(TurnStatus.RUNNING)

    @staticmethod
    def _handed_back(ctx: TurnContext) -> bool:
        """The wait ends because the turn is handed back (a shutdown, a lost lease)."""
        slot = ctx.slot
        return slot is not None and slot.cancel_reason(ctx.turn.id) in (SHUTDOWN, LEASE_LOST)

    @staticmethod
    def stopped_for_good(ctx: TurnContext) -> str | None:
        """Why a turn that stopped waiting for a person will not come back to the wait
        ("its turn was canceled", "its turn timed out"); ``None`` when it is only handed
        back (shutdown, a lost lease): it resumes and finds its request again."""
        slot = ctx.slot
        why = slot.cancel_reason(ctx.turn.id) if slot is not None else None
        if why in (SHUTDOWN, LEASE_LOST):
            return None
        return "its turn was canceled" if why is not None else "its turn timed out"

    def _expire_unless_coming_back(
        self, book: ApprovalBook, approval: Approval, ctx: TurnContext
    ) -> None:
        """The turn stopped waiting: unless it is only handed back, nobody waits for the
        decision any more, so the request expires now rather than when someone tries to
        decide."""
        reason = self.stopped_for_good(ctx)
        if reason is None:
            return
        try:
            book.expire(approval, reason=reason)
        except Exception as exc:  # the sweep after the next heartbeat tries again
            log.warning(
                "approval.expire_failed", approval=approval.id, error=describe_exception(exc)
            )

    async def ask_person(
        self, ctx: TurnContext, call: ToolCall, prompt: str, *, agent: str, intent_attempt: int
    ) -> Granted | Denied:
        """Ask a person whether ``call``, in doubt after a crash, may run again (``[tools]
        in_doubt = "ask_person"``): an approval request of its own
        (``<call id>:in-doubt:<attempt>``, so a gate's request for the same call is not
        taken for it), awaited like a gate's — the turn shows ``awaiting_approval``, a
        restart finds it again. ``intent_attempt`` is the attempt that left the call in
        doubt: a rerun that is itself interrupted is asked about again, never run on
        the strength of the first answer."""
        turn = ctx.turn
        book = ApprovalBook(ctx.store, clock=ctx.clock)
        approval = book.create(
            turn_id=turn.id,
            call_id=f"{call.call_id}:in-doubt:{intent_attempt}",
            tool=call.name,
            params=self.runtime.redaction.value(dict(call.params)),
            given=call.params,
            thread_id=turn.thread_id,
            agent=agent,
            requester=turn.owner or turn.sender,
            prompt=prompt,
            timeout_seconds=None,
        )
        if approval.status == "expired":  # (one of another place, or changed: no decision)
            return book.decision(approval)
        return await self.await_approval(ctx, Pending(approval.id, prompt), call)
