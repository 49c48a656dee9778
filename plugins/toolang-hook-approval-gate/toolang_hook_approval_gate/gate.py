"""The gate: one tool call in, ``Granted`` / ``Denied`` / ``Pending`` / ``None`` out.

For a call the policy says to ask about, in this order:

1. a grant on the thread (``toolang approvals approve ID --always``) → granted;
2. the request already made for this very call (a turn resumed after a restart)
   → pending on it again (the core returns its decision at once if one was made);
3. a decision made earlier in the same turn for the same tool and parameters
   → the same decision, without asking again;
4. otherwise a new durable request → pending: the turn parks in ``awaiting_approval``.

Parameters are stored with secrets masked (``toolang_core.redact``): the request, its
hash and everything the CLI shows are free of them. Two calls that differ only in a
masked secret therefore count as the same call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolang_core import (
    ApprovalBook,
    Denied,
    Granted,
    Pending,
    canonical_params,
    params_hash,
)
from toolang_hook_approval_gate.policy import NAME, Verdict, settings_of

if TYPE_CHECKING:
    from toolang_core import ExecutionStore, ToolCall, ToolCallContext

ASKED = f"{NAME}.asked"
"""Record kind: ``<turn id>:<params hash>`` → the call that first asked (its request)."""
PROMPT_CHARS = 300


def mask(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with secrets masked (``toolang_core.redact``)."""
    from toolang_core import redact

    masked: dict[str, Any] = redact(dict(params))
    return masked


def prompt_for(
    agent: str, tool: str, params: dict[str, Any], verdict: Verdict | None = None
) -> str:
    shown = canonical_params(params)
    if len(shown) > PROMPT_CHARS:
        shown = shown[: PROMPT_CHARS - 1] + "…"
    why = f" ({verdict.describe()})" if verdict is not None and verdict.asked_by else ""
    return f"{agent} wants to run {tool} {shown}{why}"


def decide(
    call: ToolCall, ctx: ToolCallContext, verdict: Verdict
) -> Granted | Denied | Pending | None:
    """The gate's decision for ``call``, given the policy's ``verdict`` on its tool
    (``None``: the policy leaves it to others)."""
    runtime = ctx.runtime
    if verdict.action == "abstain":
        return None
    if verdict.action == "auto_approve":
        return Granted(f"auto-approved by {verdict.describe()}")
    store = runtime.store if runtime is not None else None
    if runtime is None or store is None:
        return Denied(
            f"{call.name} needs approval ({verdict.describe()}) but no execution store is "
            "open to ask in; it was not run"
        )
    book = ApprovalBook(store, clock=runtime.clock)
    # A grant with --always covers the tool, not what a filter rule singled out.
    if verdict.asked_by is None and book.granted(ctx.thread_id, call.name):
        return Granted(f"{call.name} is granted on thread {ctx.thread_id} (approved --always)")
    existing = book.for_call(ctx.turn_id, ctx.call_id)
    if existing is not None:
        if existing.status == "expired":  # (changed in the store, or not this place's)
            return ApprovalBook.decision(existing)
        return Pending(existing.id, existing.prompt)
    params = mask(call.params)
    digest = params_hash(call.name, params)
    remembered = _remembered(book, store, ctx.turn_id, call, digest)
    if remembered is not None:
        return remembered
    return _ask(book, store, call, ctx, params=params, digest=digest, verdict=verdict)


def _remembered(
    book: ApprovalBook, store: ExecutionStore, turn_id: str, call: ToolCall, digest: str
) -> Granted | Denied | Pending | None:
    """The decision on the same tool and parameters earlier in this turn, if any.

    The ``ASKED`` record only points at the earlier request; that request must be for
    this turn and show this very call itself (what its seals cover:
    :meth:`ApprovalBook.shows`), or it is not taken: a record pointed at another
    call's approval grants nothing."""
    record = store.get_record(ASKED, f"{turn_id}:{digest}")
    if record is None:
        return None
    earlier = book.for_call(turn_id, str(record.data.get("call_id", "")))
    if earlier is None or earlier.adopted or earlier.turn_id != turn_id:
        return None
    if not book.shows(earlier, call.name, call.params):
        return None
    if earlier.status == "approved":
        by = earlier.decided_by or "an operator"
        return Granted(f"the same call was approved earlier in this turn by {by} ({earlier.id})")
    if earlier.status == "denied":
        return ApprovalBook.decision(earlier)
    if earlier.status == "pending":  # its turn was interrupted while it waited
        return Pending(earlier.id, earlier.prompt)
    return None  # expired: nobody decided, so ask again


def _ask(
    book: ApprovalBook,
    store: ExecutionStore,
    call: ToolCall,
    ctx: ToolCallContext,
    *,
    params: dict[str, Any],
    digest: str,
    verdict: Verdict,
) -> Pending:
    turn = store.get(ctx.turn_id)
    approval = book.create(
        turn_id=ctx.turn_id,
        call_id=ctx.call_id,
        tool=call.name,
        params=params,
        thread_id=ctx.thread_id,
        agent=ctx.agent,
        requester=(turn.owner or turn.sender) if turn is not None else None,
        prompt=prompt_for(ctx.agent, call.name, params, verdict),
        timeout_seconds=settings_of(ctx.runtime).timeout_seconds,
        given=call.params,  # sealed: a call whose masked form matches is not yet this one
    )
    store.put_record(
        ASKED,
        f"{ctx.turn_id}:{digest}",
        {"call_id": ctx.call_id, "approval_id": approval.id, "rule": verdict.describe()},
        now=book.clock(),
    )
    return Pending(approval.id, approval.prompt)
