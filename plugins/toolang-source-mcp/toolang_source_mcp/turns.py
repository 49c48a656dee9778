"""One MCP tool call as one durable chat turn: stored before it answers, the same turn
again on a retry, the owner's own thread only, cancelled with its call.

The same rules as the A2A source (docs/a2a.md): the turn request is in the store,
``queued``, before anything is answered; its id is derived from the owner, the agent
and the caller's ``request_id``, so a retried call finds the turn the first one stored
instead of submitting a second; the thread ownership rule is the store's one rule
(:func:`toolang_core.check_thread`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import (
    ApprovalBook,
    NewTurnRequest,
    NotThreadOwner,
    SubmitRejected,
    TurnSignals,
    TurnStatus,
    UsageError,
    check_thread,
    new_id,
)
from toolang_source_mcp.settings import CHANNEL

if TYPE_CHECKING:
    from toolang_core import Follow, Inbox, Runtime, TurnRequest
    from toolang_source_mcp.finished import FinishedTurns
    from toolang_source_mcp.settings import MCPServeSettings

THREAD_PREFIX = "mcp:"
"""A thread named without a ``:`` is ``mcp:<name>``; a call naming no thread gets a
thread of its own, ``mcp:<turn id>``."""

Progress = Callable[[str], Awaitable[None]]


class Refused(Exception):
    """The call is refused before anything is stored (another owner's thread, an agent
    not offered, empty text): the message says which and what was expected."""


@attrs.frozen
class Answer:
    """What a call answers: ``text`` for the client's model, ``is_error`` when the turn
    did not complete, ``facts`` (turn id, thread, status, request id, approvals waited
    for) as structured content."""

    text: str
    is_error: bool
    facts: dict[str, Any]


def turn_id_for(owner: str | None, agent: str, request_id: str) -> str:
    """A stable turn id for one owner's call: the same ``request_id`` is the same turn."""
    key = f"{owner or ''}\0{agent}\0{request_id}"
    return "mcp-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def thread_for(name: str | None, turn_id: str) -> str:
    if not name:
        return THREAD_PREFIX + turn_id
    return name if ":" in name else THREAD_PREFIX + name


@attrs.define
class Asker:
    """Submits and follows the turns of one process's MCP calls.

    ``inbox`` gives the inbox to use (the serving runtime's, or one opened on the
    store). When no runtime serves the store (``toolang mcp serve`` alone), each call's
    turn is run here by a one-shot of :func:`toolang_core.await_turn`, one at a time.
    ``finished``: the serving runtime's signal of ended turns (the HTTP endpoint); a call
    whose turn this runtime runs waits on it, and looks at the store only every
    ``served_poll_seconds`` (for an approval asked, or an end the signal did not see).
    """

    runtime: Runtime
    settings: MCPServeSettings
    inbox: Callable[[], Inbox]
    finished: FinishedTurns | None = None
    _one_shot: asyncio.Lock = attrs.field(factory=asyncio.Lock, init=False)

    def agents(self) -> list[str]:
        """The agents offered (configured, else ``[agents] default``)."""
        return list(self.settings.agents) or [self.runtime.config.agents.default]

    async def ask(
        self,
        *,
        agent: str,
        text: str,
        thread: str | None,
        request_id: str | None,
        owner: str | None,
        sender: str,
        progress: Progress,
    ) -> Answer:
        """Submit (or find again) the turn for this call and follow it to its end.

        :raises Refused: for another owner's thread, text that is empty, or a field the
            inbox refuses (a NUL in the text, a control character in the thread)."""
        if not text.strip():
            raise Refused("text: expected the message for the agent, found nothing")
        key = request_id or new_id()
        turn_id = turn_id_for(owner, agent, key)
        inbox = self.inbox()
        # A call without request_id has a new key: its turn cannot be stored yet.
        fresh = request_id is None or inbox.store.get(turn_id) is None
        if fresh:
            thread_id = thread_for(thread, turn_id)
            try:
                check_thread(inbox.store, thread_id, owner)
                inbox.submit(
                    NewTurnRequest(
                        source="chat",
                        thread_id=thread_id,
                        input=text,
                        sender=sender,
                        owner=owner,
                        channel=CHANNEL,
                        agent=agent,
                        meta={"mcp_request_id": key},
                        id=turn_id,
                    )
                )
            except (NotThreadOwner, UsageError) as exc:  # UsageError: a field refused, named
                raise Refused(str(exc)) from None
            except SubmitRejected as exc:
                raise Refused(f"not accepted: {exc}") from None
        turn, approvals = await self._follow(inbox, turn_id, progress, fresh=fresh)
        return answer_of(turn, key, approvals)

    async def _follow(
        self, inbox: Inbox, turn_id: str, progress: Progress, *, fresh: bool
    ) -> tuple[TurnRequest, list[str]]:
        """The turn once ended, or parked on approvals past ``approval_wait_seconds``,
        or still going after ``wait_seconds``; and the approvals it waits for.
        ``fresh``: the turn was just submitted, nothing awaited since (it is queued).

        Cancelled (the client cancelled the call), the turn is cancelled in the store."""
        settings = self.settings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.wait_seconds
        served = inbox is getattr(self.runtime, "inbox", None)
        # Only a turn this runtime runs is signalled when it ends.
        finished = self.finished if served else None
        every = settings.served_poll_seconds if finished is not None else settings.poll_seconds
        runner = None
        if not served and inbox.store.runtime_running() is False:
            runner = asyncio.ensure_future(self._run_here(inbox, turn_id))
        parked = _Parked(progress)
        # Its end in another runtime of a shared store is signalled too.
        follow = TurnSignals.of(self.runtime).follow(turn_id) if served else None
        wake = _Wake(loop, finished, turn_id, follow)
        try:
            if fresh and finished is not None:  # queued: no need to look before a wait
                await wake.wait(wake.arm(), None, min(every, settings.wait_seconds))
            while True:
                signal = wake.arm()  # before the look: an end in between still wakes
                turn = inbox.get(turn_id)
                if turn.status.is_terminal:
                    return turn, []
                waited = await parked.check(inbox, turn)
                if waited >= settings.approval_wait_seconds:
                    return self._left(inbox, turn_id, runner, "approval"), parked.pending
                now = loop.time()
                if now >= deadline:
                    return self._left(inbox, turn_id, runner, "wait"), parked.pending
                if runner is not None and runner.done():
                    runner.result()  # the one-shot's own error, if it failed
                    runner = None
                pause = min(every, deadline - now)
                if waited >= 0:  # parked: answer when approval_wait_seconds is up
                    pause = min(pause, settings.approval_wait_seconds - waited)
                await wake.wait(signal, runner, pause)
        except asyncio.CancelledError:
            if not inbox.get(turn_id).status.is_terminal:
                inbox.cancel(turn_id, reason="canceled by its MCP client")
            raise
        finally:
            wake.close()
            if runner is not None and not runner.done():
                runner.cancel()

    async def _run_here(self, inbox: Inbox, turn_id: str) -> None:
        """Run the turn in this process (no runtime serves the store), one at a time."""
        from toolang_core import await_turn

        async with self._one_shot:
            await await_turn(self.runtime, inbox, turn_id)

    def _left(self, inbox: Inbox, turn_id: str, runner: Any, why: str) -> TurnRequest:
        """The call stops waiting: a turn a runtime serves keeps its place; one only
        this process would run is given up (as ``toolang chat`` does)."""
        from toolang_core import give_up_turn

        if runner is not None:
            reason = "its MCP call stopped waiting" + (
                " for an approval" if why == "approval" else ""
            )
            with contextlib.suppress(Exception):
                give_up_turn(self.runtime, inbox, turn_id, reason)
        return inbox.get(turn_id)


class _Wake:
    """What ends one pause of a call's wait: its turn signalled as ended, its one-shot
    runner done, or the pause's time up. After a signal whose end the store does not
    show yet, the pauses are short (1 ms doubling to 50 ms), not the slow poll's."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        finished: FinishedTurns | None,
        turn_id: str,
        follow: Follow | None = None,
    ) -> None:
        self.loop = loop
        self.finished = finished
        self.turn_id = turn_id
        self.follow = follow
        self.future: asyncio.Future[None] | None = None
        self.soon: float | None = None

    def arm(self) -> asyncio.Future[None] | None:
        if self.finished is None or self.soon is not None:
            return None
        if self.future is None:
            self.future = self.finished.waiter(self.turn_id, self.loop)
        return self.future

    async def wait(
        self, signal: asyncio.Future[None] | None, runner: asyncio.Future[None] | None, pause: float
    ) -> None:
        if self.soon is not None:
            await asyncio.sleep(min(self.soon, pause))
            self.soon = min(self.soon * 2, 0.05)
            return
        signalled = self.follow.armed() if self.follow is not None else None
        waits = [f for f in (signal, runner, signalled) if f is not None]
        if not waits:
            await asyncio.sleep(pause)
            return
        await asyncio.wait(waits, timeout=pause, return_when=asyncio.FIRST_COMPLETED)
        if any(f is not None and f.done() for f in (signal, signalled)):
            self.close()
            self.soon = 0.001

    def close(self) -> None:
        if self.future is not None and self.finished is not None:
            self.finished.forget(self.turn_id, self.future)
        self.future = None
        if self.follow is not None:
            self.follow.close()
            self.follow = None


@attrs.define
class _Parked:
    """Follows a turn's waits for approval: each pending approval reported once."""

    progress: Progress
    pending: list[str] = attrs.field(factory=list)
    since: float | None = None
    told: set[str] = attrs.field(factory=set)

    async def check(self, inbox: Inbox, turn: TurnRequest) -> float:
        """How long ``turn`` has waited for approval so far (``-1``: it does not wait)."""
        if turn.status is not TurnStatus.AWAITING_APPROVAL:
            self.since = None
            return -1.0
        book = ApprovalBook(inbox.store)
        self.pending = [a.id for a in book.list("pending") if a.turn_id == turn.id]
        for approval in self.pending:
            if approval not in self.told:
                self.told.add(approval)
                await self.progress(f"waiting for approval {approval}")
        now = time.monotonic()
        self.since = self.since or now
        return now - self.since


def answer_of(turn: TurnRequest, request_id: str, approvals: list[str]) -> Answer:
    """The call's answer for ``turn`` as it stands."""
    facts: dict[str, Any] = {
        "turn_id": turn.id,
        "thread": turn.thread_id,
        "status": turn.status.value,
        "request_id": request_id,
    }
    if turn.status in (TurnStatus.COMPLETED, TurnStatus.STEERED):
        return Answer(turn.output or "", False, facts)
    if turn.status is TurnStatus.AWAITING_APPROVAL:
        facts["approvals"] = approvals
        named = ", ".join(approvals) or "(none listed yet)"
        return Answer(
            f"waiting for approval {named}: a person decides it in toolang "
            "(toolang approvals list / the console); call again with the same request_id "
            "to wait for the answer",
            False,
            facts,
        )
    if turn.status.is_terminal:
        why = turn.error or turn.outcome or ""
        return Answer(f"{turn.status.value}: {why}".rstrip(": "), True, facts)
    return Answer(
        f"still {turn.status.value}: the turn keeps its place; call again with the same "
        "request_id to wait for the answer",
        False,
        facts,
    )
