"""Durable approval requests: a tool call waiting for a person's decision.

An ApprovalGate plugin creates a request and answers ``Pending``; the tool chain then
waits for the decision while its turn shows ``awaiting_approval``. A person decides
from any process (``toolang approvals approve ID``) — never a process a tool started:
:meth:`ApprovalBook.decide` refuses a decision from a process marked by the runtime
(:func:`~toolang_core.tools.process.started_by_tool`), so an agent cannot approve its
own calls through the commands it may run. Requests are records of the execution
store, keyed by turn and call id: a turn resumed after a crash finds the request — and
its decision, if one was made meanwhile — instead of asking again. A request whose
turn ends (canceled, timed out, failed) becomes ``expired`` at once.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
import cattrs

from toolang_core.errors import ToolangError
from toolang_core.ids import new_id
from toolang_core.store.errors import RecordConflict
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.types import Denied, Granted

KIND = "toolang.approval"
BY_ID_KIND = "toolang.approval.id"
GRANT_KIND = "toolang.approval.grant"
PENDING_KIND = "toolang.approval.pending"
"""Pending requests only (key → turn): what the sweep for ended turns reads, never the
whole history. An entry outliving its request's decision is removed by the sweep."""
Status = Literal["pending", "approved", "denied", "expired"]
_converter = cattrs.Converter()


class ApprovalError(ToolangError):
    """An approval request is unknown or already decided."""

    exit_code = 6


class DecisionFromTool(ApprovalError):
    """A decision was attempted from a process a tool started: only people decide."""


def refuse_tool_processes(action: str) -> None:
    """:raises DecisionFromTool: when this process was started by a tool (or descends
    from one)."""
    from toolang_core.tools.process import TOOL_CALL_ENV, started_by_tool

    marker = started_by_tool()
    if marker is not None:
        raise DecisionFromTool(
            f"refused to {action}: this process was started by tool call {marker} "
            f"({TOOL_CALL_ENV} is set here or in a parent process); only a person decides "
            "approvals — run `toolang approvals` from your own terminal. Nothing was changed"
        )


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)
"""Built once: ``json.dumps`` with these options builds an encoder on every call (most
of its cost for a tool call's few parameters; loop detection encodes every call)."""


def canonical_params(params: Mapping[str, Any]) -> str:
    return _CANONICAL.encode(params)


def params_hash(tool: str, params: Mapping[str, Any]) -> str:
    return hashlib.sha256(f"{tool}\0{canonical_params(params)}".encode()).hexdigest()[:16]


@attrs.frozen
class Approval:
    """One approval request and, once made, its decision."""

    id: str
    key: str
    tool: str
    params: Mapping[str, Any]
    params_hash: str
    turn_id: str
    thread_id: str
    agent: str
    requester: str | None
    prompt: str
    created_at: float
    expires_at: float | None = None
    status: Status = "pending"
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None
    always: bool = False


class ApprovalBook:
    """Create, find, decide and await approval requests in one store."""

    def __init__(self, store: ExecutionStore, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def _load(self, key: str) -> tuple[Approval, int] | None:
        record = self.store.get_record(KIND, key)
        if record is None:
            return None
        return _converter.structure(dict(record.data), Approval), record.revision

    def _save(self, approval: Approval, revision: int) -> Approval:
        self.store.put_record(
            KIND,
            approval.key,
            _converter.unstructure(approval),
            now=self.clock(),
            expect_revision=revision,
        )
        return approval

    def for_call(self, turn_id: str, call_id: str) -> Approval | None:
        """The request made for this tool call of this turn, if any."""
        found = self._load(f"{turn_id}:{call_id}")
        return found[0] if found else None

    def create(
        self,
        *,
        turn_id: str,
        call_id: str,
        tool: str,
        params: Mapping[str, Any],
        thread_id: str,
        agent: str,
        requester: str | None,
        prompt: str,
        timeout_seconds: float | None,
    ) -> Approval:
        """A new pending request for this call (or the existing one, after a restart)."""
        key = f"{turn_id}:{call_id}"
        existing = self._load(key)
        if existing is not None:
            return existing[0]
        now = self.clock()
        approval = Approval(
            id=new_id("ap"),
            key=key,
            tool=tool,
            params=dict(params),
            params_hash=params_hash(tool, params),
            turn_id=turn_id,
            thread_id=thread_id,
            agent=agent,
            requester=requester,
            prompt=prompt,
            created_at=now,
            expires_at=None if timeout_seconds is None else now + timeout_seconds,
        )
        try:
            self._save(approval, 0)
        except RecordConflict:  # created concurrently: take the one that won
            won = self._load(key)
            assert won is not None
            return won[0]
        self.store.put_record(BY_ID_KIND, approval.id, {"key": key}, now=now)
        self.store.put_record(PENDING_KIND, key, {"id": approval.id, "turn_id": turn_id}, now=now)
        return approval

    def get(self, approval_id: str) -> Approval:
        """:raises ApprovalError: for an unknown id."""
        index = self.store.get_record(BY_ID_KIND, approval_id)
        found = self._load(str(index.data["key"])) if index is not None else None
        if found is None:
            raise ApprovalError(
                f"no approval request {approval_id!r} (see `toolang approvals list`)"
            )
        return found[0]

    def list(self, status: Status | None = None) -> list[Approval]:
        approvals = [
            _converter.structure(dict(r.data), Approval) for r in self.store.list_records(KIND)
        ]
        if status is not None:
            approvals = [a for a in approvals if a.status == status]
        return sorted(approvals, key=lambda a: a.created_at)

    def decide(
        self,
        approval_id: str,
        *,
        approved: bool,
        by: str,
        reason: str | None = None,
        always: bool = False,
    ) -> Approval:
        """Record a decision. ``always`` also grants the tool on the request's thread.

        :raises DecisionFromTool: when called from a process a tool started (the
            request stays pending).
        :raises ApprovalError: when the request is unknown or no longer pending.
        """
        refuse_tool_processes(f"{'approve' if approved else 'deny'} {approval_id}")
        approval = self.get(approval_id)
        found = self._load(approval.key)
        assert found is not None
        current, revision = found
        if current.status != "pending":
            raise ApprovalError(f"approval {current.id} was already {current.status}")
        turn = self.store.get(current.turn_id)
        if turn is None or turn.status.is_terminal:
            ended = turn.status.value if turn is not None else "gone"
            self.expire(current, reason=f"its turn ended ({ended}) before anyone decided")
            raise ApprovalError(
                f"approval {current.id}: turn {current.turn_id} already ended ({ended}); "
                "nothing waits for this decision any more"
            )
        decided = attrs.evolve(
            current,
            status="approved" if approved else "denied",
            decided_at=self.clock(),
            decided_by=by,
            reason=reason,
            always=always and approved,
        )
        try:
            self._save(decided, revision)
        except RecordConflict:
            raise ApprovalError(f"approval {current.id} was decided meanwhile") from None
        self._unlist(decided)
        if decided.always:
            self.grant(decided.thread_id, decided.tool, by=by)
        return decided

    def expire(self, approval: Approval, *, reason: str = "nobody decided in time") -> Approval:
        """Mark a pending request expired (no-op when it was decided meanwhile)."""
        found = self._load(approval.key)
        if found is None or found[0].status != "pending":
            return found[0] if found else approval
        expired = attrs.evolve(found[0], status="expired", decided_at=self.clock(), reason=reason)
        try:
            saved = self._save(expired, found[1])
        except RecordConflict:
            refreshed = self._load(approval.key)
            assert refreshed is not None
            return refreshed[0]
        self._unlist(saved)
        return saved

    def _unlist(self, approval: Approval) -> None:
        self.store.delete_record(PENDING_KIND, approval.key)

    def expire_for_turn(self, turn_id: str, *, reason: str) -> builtins.list[Approval]:
        """Expire the pending requests of ``turn_id``, whose turn ended without waiting
        for them any more; return them."""
        expired = []
        for record in self.store.list_records(PENDING_KIND):
            if record.data.get("turn_id") != turn_id:
                continue
            found = self._load(record.key)
            if found is None or found[0].status != "pending":
                self.store.delete_record(PENDING_KIND, record.key)
                continue
            expired.append(self.expire(found[0], reason=reason))
        return expired

    def expire_ended(self) -> builtins.list[Approval]:
        """Expire every pending request whose turn has ended (or is gone) — turns that
        ended while no runtime watched them, e.g. canceled while their runtime was down.
        Called at start-up and after each heartbeat; return what it expired."""
        expired = []
        for record in self.store.list_records(PENDING_KIND):
            found = self._load(record.key)
            if found is None or found[0].status != "pending":
                self.store.delete_record(PENDING_KIND, record.key)
                continue
            turn = self.store.get(found[0].turn_id)
            if turn is None or turn.status.is_terminal:
                ended = turn.status.value if turn is not None else "gone"
                expired.append(self.expire(found[0], reason=f"its turn ended ({ended})"))
        return expired

    def grant(self, thread_id: str, tool: str, *, by: str) -> None:
        """Grant ``tool`` on ``thread_id`` from now on.

        :raises DecisionFromTool: when called from a process a tool started."""
        refuse_tool_processes(f"grant {tool} on thread {thread_id}")
        self.store.put_record(
            GRANT_KIND,
            f"{thread_id}:{tool}",
            {"thread_id": thread_id, "tool": tool, "by": by},
            now=self.clock(),
        )

    def granted(self, thread_id: str, tool: str) -> bool:
        return self.store.get_record(GRANT_KIND, f"{thread_id}:{tool}") is not None

    def grants(self, thread_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Standing grants (``approve --always``), of one thread or all: thread, tool, by."""
        found = [dict(r.data) for r in self.store.list_records(GRANT_KIND)]
        return [g for g in found if thread_id is None or g["thread_id"] == thread_id]

    def revoke(self, thread_id: str, tool: str) -> bool:
        """Withdraw a grant; ``False`` when there was none."""
        return self.store.delete_record(GRANT_KIND, f"{thread_id}:{tool}")

    @staticmethod
    def decision(approval: Approval) -> Granted | Denied:
        """What a decided (or expired) request means for its tool call, worded for the
        model that asked."""
        if approval.status == "approved":
            return Granted(f"approved by {approval.decided_by or 'an operator'}")
        if approval.status == "expired":
            if approval.reason in (None, "nobody decided in time"):
                return Denied(f"nobody approved {approval.tool} in time; it was not run")
            return Denied(f"{approval.tool} was not approved ({approval.reason}); it was not run")
        if approval.status == "denied":
            reason = f": {approval.reason}" if approval.reason else ""
            who = approval.decided_by or "the operator"
            return Denied(f"{who} denied {approval.tool}{reason}; it was not run")
        raise ApprovalError(f"approval {approval.id} is still pending")

    async def wait(self, approval: Approval, *, poll_seconds: float = 0.2) -> Approval:
        """Wait until ``approval`` is decided or expires; return its final state."""
        while True:
            found = self._load(approval.key)
            current = found[0] if found else approval
            if current.status != "pending":
                return current
            if current.expires_at is not None and self.clock() >= current.expires_at:
                return self.expire(current)
            await asyncio.sleep(poll_seconds)
