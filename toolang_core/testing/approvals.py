"""Asking a person from an ApprovalGate, as a test's gate does."""

from __future__ import annotations

from toolang_core.tools.approvals import ApprovalBook
from toolang_core.tools.types import Pending, ToolCall, ToolCallContext


def ask_a_person(
    call: ToolCall,
    ctx: ToolCallContext,
    *,
    prompt: str = "",
    requester: str | None = None,
    timeout_seconds: float | None = None,
) -> Pending:
    """What an ApprovalGate answers to have a person decide ``call``: a durable approval
    request recorded in the serving runtime's store (the same one again after a
    restart), as :class:`~toolang_core.tools.types.Pending` with its ``prompt``.

    :raises RuntimeError: when the context's runtime is not serving (no store)."""
    store = ctx.runtime.store
    if store is None:
        raise RuntimeError("ask_a_person: the runtime is not serving: no store to ask in")
    approval = ApprovalBook(store).create(
        turn_id=ctx.turn_id,
        call_id=ctx.call_id,
        tool=call.name,
        params=call.params,
        thread_id=ctx.thread_id,
        agent=ctx.agent,
        requester=requester,
        prompt=prompt,
        timeout_seconds=timeout_seconds,
    )
    return Pending(approval.id, approval.prompt)
