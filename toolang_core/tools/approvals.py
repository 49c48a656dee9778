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

Every decision and every standing grant is sealed with the runtime's approval key
(:mod:`toolang_core.tools.approval_seal`); one whose seal does not check — written
straight into the store by someone without the key — is ignored (the request reads as
pending, the grant as absent) and logged as ``approval.decision_forged`` /
``approval.grant_forged``. The check lives here, so every store backend honours it.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
import cattrs
import structlog

from toolang_core.errors import ToolangError
from toolang_core.ids import new_id
from toolang_core.redaction import redact_text
from toolang_core.store.errors import RecordConflict
from toolang_core.store.json_text import dumps
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.approval_seal import ApprovalKey, ApprovalKeyFile, same_stored, when
from toolang_core.tools.decision_book import DecisionBook
from toolang_core.tools.types import Denied, Granted

log = structlog.get_logger("toolang.approvals")

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
    seal: str | None = None
    """The approval key's seal over the decision (``None`` while pending)."""
    request_seal: str | None = None
    """The approval key's seal over the request, made with it (``None``: made by a
    version before requests were sealed; such a request cannot be decided)."""
    adopted: bool = False
    """Decided before decisions were sealed and sealed later, at an upgrade
    (:meth:`ApprovalBook.adopt_history`): history only, it authorises no call."""
    params_mac: str | None = None
    """The approval key's seal over the call's own parameters, unmasked (``params``
    may be masked: a call whose masked form matches is not yet this call). Made when
    the gate gives them (``create(given=...)``); reveals nothing without the key."""

    def sealed_fields(self) -> tuple[Any, ...]:
        """What the seal covers: the request, the tool call it is for, the decision
        (and the request's own seal, and whether it was adopted, when so)."""
        fields: tuple[Any, ...] = (
            "approval",
            self.id,
            self.key,
            self.tool,
            self.params_hash,
            self.thread_id,
            self.status,
            self.always,
            self.decided_by,
            when(self.decided_at),
            self.reason,
        )
        if self.request_seal is not None:
            fields += (["request", self.request_seal],)
        if self.adopted:
            fields += (["adopted"],)
        return fields

    def request_fields(self) -> tuple[Any, ...]:
        """What the request seal covers: the call, as stored, and what a person is shown."""
        return (
            "approval-request",
            self.id,
            self.key,
            self.tool,
            dict(self.params),
            self.params_hash,
            self.turn_id,
            self.thread_id,
            self.agent,
            self.requester,
            self.prompt,
            when(self.created_at),
            when(self.expires_at),
            self.params_mac,
        )

    def pending(self) -> Approval:
        """This request with no decision on it."""
        return attrs.evolve(
            self,
            status="pending",
            decided_at=None,
            decided_by=None,
            reason=None,
            always=False,
            seal=None,
            adopted=False,
        )


def _params_fields(key: str, tool: str, params: Mapping[str, Any]) -> tuple[Any, ...]:
    """What ``params_mac`` seals: the call's own parameters, as a store keeps them, for
    the request in the place ``key`` (a mac copied into another request never checks)."""
    return ("approval-params", key, tool, json.loads(dumps(dict(params))))


def _grant_fields(thread_id: str, tool: str, by: object, at: object) -> tuple[Any, ...]:
    return ("grant", thread_id, tool, by, when(at) if isinstance(at, int | float) else None)


class ApprovalBook(DecisionBook[Approval]):
    """Create, find, decide and await approval requests in one store.

    ``key`` seals and checks decisions: by default the approval key the store was
    opened with (:attr:`~toolang_core.store.base.StoreBase.approval_key`, bound by
    :meth:`Runtime.open_store <toolang_core.runtime.Runtime.open_store>`). Every use
    needs it (:class:`ApprovalKeyError` without one): a request is sealed when it is
    made, and a request or decision whose seal does not check does not count."""

    _record_type = Approval
    _kind = KIND
    _by_id_kind = BY_ID_KIND
    _waiting_kind = PENDING_KIND
    _waiting = "pending"
    _noun = "approval"
    _decided = "decided"
    _decision_noun = "decision"
    _decided_at = "decided_at"
    _error = ApprovalError
    _expired_reason = "nobody decided in time"
    _unknown = "no approval request {id!r} (see `toolang approvals list`)"

    def __init__(
        self,
        store: ExecutionStore,
        *,
        key: ApprovalKey | ApprovalKeyFile | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(store, key=key, clock=clock)

    def _undecided(self, record: Approval) -> Approval:
        return record.pending()

    def _report_unsealed(self, record: Approval) -> None:
        log.warning(
            "approval.request_forged",
            approval=record.id,
            turn=record.turn_id,
            tool=record.tool,
            note="its request seal does not check with the approval key: read as expired",
        )

    def _report_forged(self, record: Approval) -> None:
        log.warning(
            "approval.decision_forged",
            approval=record.id,
            turn=record.turn_id,
            tool=record.tool,
            claimed_status=record.status,
            claimed_by=redact_text(str(record.decided_by)),
            note="its seal does not check with the approval key: ignored, still pending",
        )

    def for_call(self, turn_id: str, call_id: str) -> Approval | None:
        """The request made for this tool call of this turn, if any."""
        return self._for_call(turn_id, call_id)

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
        given: Mapping[str, Any] | None = None,
    ) -> Approval:
        """A new pending request for this call (or the existing one, after a restart).

        ``params`` are what a person is shown (masked, as a gate stores them);
        ``given`` are the call's own parameters when they differ: the request keeps a
        seal of them (``params_mac``), and only a call with exactly those runs on its
        approval (:meth:`shows`). Without ``given``, a call's parameters must be
        ``params`` themselves."""
        key = f"{turn_id}:{call_id}"
        existing = self._load(key)
        if existing is not None:
            return existing[0]
        now = self.clock()
        mac = None if given is None else self._key().seal(_params_fields(key, tool, given))
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
            params_mac=mac,
        )
        return self._add(approval, now)

    def shows(self, approval: Approval, tool: str, params: Mapping[str, Any]) -> bool:
        """Whether ``approval`` (as read: its seals checked) asks about a call of
        ``tool`` with ``params``, compared as a store keeps values (a NUL written out,
        numbers and key order as the seals' canonical form): by the seal of the call's
        own parameters when the request has one, else by the parameters it shows.

        A request made before requests were sealed shows no call: nothing binds what it
        shows (nor a ``params_mac`` written into it) to a call, so its decision is
        asked again."""
        if approval.tool != tool or approval.request_seal is None:
            return False
        if approval.params_mac is not None:
            fields = _params_fields(approval.key, tool, params)
            return self._key().verify(fields, approval.params_mac)
        return same_stored(approval.params, params)

    def get(self, approval_id: str) -> Approval:
        """:raises ApprovalError: for an unknown id."""
        return self._get(approval_id)

    def list(self, status: Status | None = None) -> list[Approval]:
        approvals = [
            self._in_place(str(r.key), _converter.structure(dict(r.data), Approval))
            for r in self.store.list_records(KIND)
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

        ``by`` names who decided, as the door that checked them says (``cli:<os
        user>``, ``console:<owner>``, ``token:<owner>`` …): only people decide, and each
        door checks that one is there before calling this.

        :raises DecisionFromTool: when called from a process a tool started (the
            request stays pending).
        :raises ApprovalKeyError: when there is no approval key to seal the decision.
        :raises ApprovalError: when the request is unknown or no longer pending.
        """
        refuse_tool_processes(f"{'approve' if approved else 'deny'} {approval_id}")
        decided = self._decide(
            approval_id,
            lambda _: {
                "status": "approved" if approved else "denied",
                "decided_by": by,
                "reason": reason,
                "always": always and approved,
            },
        )
        if decided.always:  # by as stored (a NUL written out): the grant's seal checks
            self.grant(decided.thread_id, decided.tool, by=decided.decided_by or by)
        return decided

    def expire(self, approval: Approval, *, reason: str = "nobody decided in time") -> Approval:
        """Mark a pending request expired (no-op when it was decided meanwhile)."""
        return self._expire(approval, reason)

    def expire_for_turn(self, turn_id: str, *, reason: str) -> builtins.list[Approval]:
        """Expire the pending requests of ``turn_id``, whose turn ended without waiting
        for them any more; return them."""
        expired = []
        for record in self.store.list_records(PENDING_KIND):
            if record.data.get("turn_id") != turn_id:
                continue
            found = self._load(record.key)
            if found is not None and found[0].turn_id != turn_id:
                continue  # the index named another turn's request: not this one's to end
            if found is None or found[0].status != "pending":
                self.store.delete_record(PENDING_KIND, record.key)
                continue
            expired.append(self.expire(found[0], reason=reason))
        return expired

    def expire_ended(self) -> builtins.list[Approval]:
        """Expire every pending request whose turn has ended (or is gone) — turns that
        ended while no runtime watched them, e.g. canceled while their runtime was down.
        Called at start-up and after each heartbeat; return what it expired."""
        return self._expire_ended()

    def grant(self, thread_id: str, tool: str, *, by: str) -> None:
        """Grant ``tool`` on ``thread_id`` from now on.

        :raises DecisionFromTool: when called from a process a tool started.
        :raises ApprovalKeyError: when there is no approval key to seal the grant."""
        refuse_tool_processes(f"grant {tool} on thread {thread_id}")
        now = self.clock()
        seal = self._key().seal(_grant_fields(thread_id, tool, by, now))
        self.store.put_record(
            GRANT_KIND,
            f"{thread_id}:{tool}",
            {"thread_id": thread_id, "tool": tool, "by": by, "at": now, "seal": seal},
            now=now,
        )

    def _grant_holds(self, data: Mapping[str, Any]) -> bool:
        """Whether a grant record is sealed by our key (logged when it is not)."""
        fields = _grant_fields(
            str(data.get("thread_id")), str(data.get("tool")), data.get("by"), data.get("at")
        )
        if self._key().verify(fields, data.get("seal")):
            return True
        log.warning(
            "approval.grant_forged",
            thread=redact_text(str(data.get("thread_id"))),
            tool=redact_text(str(data.get("tool"))),
            claimed_by=redact_text(str(data.get("by"))),
            note="its seal does not check with the approval key: ignored",
        )
        return False

    def granted(self, thread_id: str, tool: str) -> bool:
        """Whether ``tool`` stands granted on ``thread_id`` (by a sealed grant)."""
        record = self.store.get_record(GRANT_KIND, f"{thread_id}:{tool}")
        if record is None:
            return False
        data = record.data  # a grant of another thread or tool copied here grants nothing
        if data.get("thread_id") == thread_id and data.get("tool") == tool:
            return self._grant_holds(data)
        log.warning(
            "approval.grant_forged",
            thread=redact_text(thread_id),
            tool=redact_text(tool),
            note="the grant stored here is another thread's or tool's: ignored",
        )
        return False

    def grants(self, thread_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Standing grants (``approve --always``), of one thread or all: thread, tool,
        by, at (forged ones left out)."""
        found = [dict(r.data) for r in self.store.list_records(GRANT_KIND)]
        return [
            {k: v for k, v in g.items() if k != "seal"}
            for g in found
            if (thread_id is None or g.get("thread_id") == thread_id) and self._grant_holds(g)
        ]

    def adopt_history(self) -> int:
        """Seal the decisions of turns that have ended, made before this store's
        decisions were sealed (an upgrade), as ``adopted``; return how many. Called
        once, when a runtime first records its key's fingerprint in the store.
        Decisions of turns still waiting and standing grants are never adopted:
        unsealed, they do not count. An adopted decision is history only: it
        authorises no call (:meth:`decision`), so one written into the store for a
        turn made to look ended, adopted at a start, runs nothing when the turn is
        made to run again."""
        adopted = 0
        key = self._key()
        for record in self.store.list_records(KIND):
            approval = _converter.structure(dict(record.data), Approval)
            if approval.status == "pending" or approval.seal is not None:
                continue
            turn = self.store.get(approval.turn_id)
            if turn is not None and not turn.status.is_terminal:
                continue
            adopted_one = attrs.evolve(approval, adopted=True)
            sealed = attrs.evolve(adopted_one, seal=key.seal(adopted_one.sealed_fields()))
            try:
                self.store.put_record(
                    KIND,
                    approval.key,
                    _converter.unstructure(sealed),
                    now=self.clock(),
                    expect_revision=record.revision,
                )
            except RecordConflict:
                continue
            adopted += 1
        return adopted

    def revoke(self, thread_id: str, tool: str) -> bool:
        """Withdraw a grant; ``False`` when there was none."""
        return self.store.delete_record(GRANT_KIND, f"{thread_id}:{tool}")

    @staticmethod
    def decision(approval: Approval) -> Granted | Denied:
        """What a decided (or expired) request means for its tool call, worded for the
        model that asked."""
        if approval.adopted and approval.status == "approved":
            return Denied(
                f"approval {approval.id} was decided before decisions were sealed and "
                f"authorises no call; {approval.tool} was not run"
            )
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
        return await self._wait(approval, poll_seconds)
