"""The Python API: ``invoke(...)`` runs one turn and returns its result."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import attrs

from toolang_core import (
    Approval,
    ApprovalBook,
    Inbox,
    NewTurnRequest,
    Runtime,
    TurnStatus,
    await_turn,
    find_config,
    load_config,
    new_id,
)

APPROVAL_POLL_SECONDS = 0.2


@attrs.frozen
class InvokeResult:
    """How one invocation ended."""

    turn_id: str
    status: TurnStatus
    output: str | None = None
    error: str | None = None
    outcome: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is TurnStatus.COMPLETED

    @property
    def timed_out(self) -> bool:
        """Still going when the wait ended, or ended by its own timeout."""
        return not self.status.is_terminal or self.outcome == "timeout"

    @property
    def exit_code(self) -> int:
        """0 completed, 1 failed, 2 canceled, 75 timed out (see :attr:`timed_out`)."""
        if self.status is TurnStatus.COMPLETED:
            return 0
        if self.timed_out:
            return 75
        if self.status is TurnStatus.FAILED:
            return 1
        return 2


async def ainvoke(
    text: str,
    *,
    agent: str | None = None,
    timeout: float | None = None,
    runtime: Runtime | None = None,
    config_path: Path | None = None,
    on_approval: Callable[[Approval], None] | None = None,
) -> InvokeResult:
    """Run ``text`` as one turn of source ``invoke`` and wait for its result.

    Uses ``runtime`` if given, else one built from ``config_path`` (or the usual
    ``toolang.toml`` lookup). With ``timeout`` the turn is failed once it runs that long
    and the wait ends then too. ``on_approval`` is called once for each approval
    request the turn waits for (a person decides it, e.g. ``toolang approvals approve``).
    """
    if runtime is None:
        runtime = Runtime.from_config(load_config(find_config(config_path)))
    inbox = runtime.open_inbox()
    try:
        thread = f"invoke:{new_id()}"
        turn_id = inbox.submit(
            NewTurnRequest(
                source="invoke",
                thread_id=thread,
                input=text,
                agent=agent,
                channel="api",
                timeout_seconds=timeout,
            )
        ).id
        watching = (
            asyncio.ensure_future(_watch_approvals(inbox, turn_id, on_approval))
            if on_approval is not None
            else None
        )
        try:
            turn = await await_turn(runtime, inbox, turn_id, timeout=timeout)
        finally:
            if watching is not None:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
    finally:
        inbox.store.close()
    return InvokeResult(turn.id, turn.status, turn.output, turn.error, turn.outcome)


async def _watch_approvals(
    inbox: Inbox, turn_id: str, on_approval: Callable[[Approval], None]
) -> None:
    book = ApprovalBook(inbox.store)
    shown: set[str] = set()
    while True:
        await asyncio.sleep(APPROVAL_POLL_SECONDS)
        if inbox.get(turn_id).status is not TurnStatus.AWAITING_APPROVAL:
            continue
        for approval in book.list("pending"):
            if approval.turn_id == turn_id and approval.id not in shown:
                shown.add(approval.id)
                on_approval(approval)


def invoke(text: str, **kwargs: object) -> InvokeResult:
    """Synchronous :func:`ainvoke` (do not call it from a running event loop)."""
    return asyncio.run(ainvoke(text, **kwargs))  # type: ignore[arg-type]
