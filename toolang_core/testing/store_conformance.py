"""The execution-store conformance suite: the contract, as tests, for every backend.

A backend's test module subclasses :class:`StoreConformance` and provides one fixture,
``toolang_store_factory``: a callable that opens a new connection (a new store object)
to one fresh, shared backing store for the test::

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def toolang_store_factory(self, tmp_path):
            return lambda: MyStore(tmp_path / "db")

Every test names the rule it checks. Times are passed explicitly, so nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from toolang_core.store.errors import NotThreadOwner, RecordConflict, SubmitRejected, TurnNotFound
from toolang_core.store.owners import check_thread, not_thread_owner
from toolang_core.store.protocol import ExecutionStore
from toolang_core.store.types import (
    Finish,
    NewTurnRequest,
    RunRecord,
    StepRecord,
    SubmitRules,
    TurnFilter,
    TurnRequest,
    TurnStatus,
)
from toolang_core.testing.usage_conformance import UsageConformance

T0 = 1_800_000_000.0
LEASE = 30.0


def rules(group: str = "chat", priority: int = 40, **kw: Any) -> SubmitRules:
    return SubmitRules(thread_group=group, priority=priority, **kw)


def request(
    thread: str = "chat:1", text: str = "hi", source: str = "chat", **kw: Any
) -> NewTurnRequest:
    return NewTurnRequest(source=source, thread_id=thread, input=text, **kw)


class StoreConformance(UsageConformance):
    """Subclass and provide ``toolang_store_factory`` (see the module docstring)."""

    @pytest.fixture
    def store(
        self, toolang_store_factory: Callable[[], ExecutionStore]
    ) -> Iterator[ExecutionStore]:
        store = toolang_store_factory()
        yield store
        store.close()

    # helpers -----------------------------------------------------------------------

    def submit(
        self,
        store: ExecutionStore,
        thread: str = "chat:1",
        *,
        group: str = "chat",
        priority: int = 40,
        now: float = T0,
        text: str = "hi",
        **kw: Any,
    ) -> str:
        strategy_rules = {
            k: kw.pop(k) for k in ("strategy", "max_queued", "overflow", "aging_seconds") if k in kw
        }
        result = store.submit(
            request(thread, text, source=group, **kw),
            rules(group, priority, **strategy_rules),
            now=now,
        )
        return result.id

    def claim_ids(
        self,
        store: ExecutionStore,
        *,
        limit: int = 10,
        now: float = T0 + 1,
        caps: dict[str, int] | None = None,
        run: str = "run-a",
    ) -> list[str]:
        turns = store.claim(run_id=run, limit=limit, now=now, lease_seconds=LEASE, caps=caps or {})
        return [t.id for t in turns]

    def finish(
        self,
        store: ExecutionStore,
        turn_id: str,
        *,
        run: str = "run-a",
        status: TurnStatus = TurnStatus.COMPLETED,
        now: float = T0 + 2,
    ) -> bool:
        turn = store.get(turn_id)
        assert turn is not None
        return store.finish(
            turn_id, run_id=run, attempt=turn.attempt, status=status, now=now, output="done"
        )

    # ingress -----------------------------------------------------------------------

    def test_attachment_references_and_their_owners_are_kept(
        self, store, toolang_store_factory, tmp_path
    ):
        from toolang_core.attachments import (
            AttachmentNotFound,
            AttachmentStore,
            attachment_refs,
            with_attachments,
        )
        from toolang_core.config.model import AttachmentsConfig

        attachments = AttachmentStore(tmp_path / "att", AttachmentsConfig(), store)
        ref = attachments.put(b"a note", name="note.txt", owner="alice")
        turn_id = self.submit(store, owner="alice", meta=with_attachments({}, [ref]))
        other = toolang_store_factory()  # a second connection, as another process would have
        try:
            turn = other.get(turn_id)
            seen = AttachmentStore(tmp_path / "att", AttachmentsConfig(), other)
            assert seen.ref(ref.sha256, owner="alice") == ref
            assert seen.ref(ref.sha256, owner=None) == ref  # the operator sees every owner's
            with pytest.raises(AttachmentNotFound):
                seen.ref(ref.sha256, owner="bob")
        finally:
            other.close()
        assert turn is not None
        assert attachment_refs(turn.meta) == (ref,)

    def test_submit_stores_the_request_queued_before_returning(self, store, toolang_store_factory):
        turn_id = self.submit(store, text="hello", channel="cli", meta={"k": [1, "ü"]})
        other = toolang_store_factory()  # a second connection, as another process would have
        try:
            turn = other.get(turn_id)
        finally:
            other.close()
        assert turn is not None
        assert (turn.status, turn.input, turn.channel, turn.attempt) == (
            TurnStatus.QUEUED,
            "hello",
            "cli",
            0,
        )
        assert turn.meta == {"k": [1, "ü"]}

    def test_a_caller_chosen_id_makes_submit_idempotent(self, store):
        first = store.submit(request(id="req-1"), rules(), now=T0)
        again = store.submit(request(id="req-1", text="other"), rules(), now=T0 + 1)
        assert (first.status, again.status, again.id) == ("queued", "exists", "req-1")
        assert store.get("req-1").input == "hi"

    @pytest.mark.parametrize("strategy", ["enqueue", "reject"])
    def test_a_taken_id_is_exists_before_any_refusal(self, store, strategy):
        """A request again under its id is ``exists`` even where a new one would be
        refused (another owner's or another group's thread); a new id there is refused
        as any request is (however the backend checks: insert first or read first)."""
        store.submit(request("chat:ada", owner="ada", id="req-1"), rules(), now=T0)
        store.submit(request("task:1"), rules("task"), now=T0)
        again = [
            store.submit(
                request("chat:ada", owner="bob", id="req-1"), rules(strategy=strategy), now=T0 + 1
            ),
            store.submit(
                request("task:1", owner="ada", id="req-1"), rules(strategy=strategy), now=T0 + 1
            ),
            store.submit(  # (its metadata could not even be stored)
                request("chat:ada", owner="ada", id="req-1", meta={"n": {1, 2}}),
                rules(strategy=strategy),
                now=T0 + 1,
            ),
        ]
        assert [(r.id, r.status) for r in again] == [("req-1", "exists")] * 3
        with pytest.raises(NotThreadOwner, match="belongs to another owner"):
            store.submit(
                request("chat:ada", owner="bob", id="req-2"), rules(strategy=strategy), now=T0
            )
        with pytest.raises(SubmitRejected, match="belongs to group 'task'"):
            store.submit(request("task:1", id="req-3"), rules(strategy=strategy), now=T0)
        assert store.get("req-2") is None
        assert store.get("req-3") is None
        assert [t.id for t in store.list_turns(TurnFilter(thread_id="chat:ada"))] == ["req-1"]

    def test_a_thread_keeps_its_group(self, store):
        self.submit(store, "t:1", group="task")
        with pytest.raises(SubmitRejected, match="belongs to group 'task'"):
            self.submit(store, "t:1", group="chat")

    @pytest.mark.parametrize("strategy", ["enqueue", "coalesce", "reject"])
    def test_a_thread_belongs_to_the_owner_of_its_first_request(self, store, strategy):
        """Any other owner (``None``, the operator's, is one) is refused, whatever the
        thread's strategy: the simple insert and the checked submission alike."""
        first = self.submit(store, "chat:ada", owner="ada")
        for intruder in ("bob", None):
            with pytest.raises(NotThreadOwner) as refused:
                self.submit(store, "chat:ada", owner=intruder, strategy=strategy)
            # The one refusal of the owner rule, whichever path refused it.
            assert str(refused.value) == str(not_thread_owner("chat:ada", intruder))
            assert refused.value.reason == "wrong_owner"
        assert [t.id for t in store.list_turns(TurnFilter(thread_id="chat:ada"))] == [first]
        assert self.submit(store, "chat:ada", owner="ada", now=T0 + 1)
        operator = self.submit(store, "chat:operator")
        with pytest.raises(NotThreadOwner, match="belongs to another owner"):
            self.submit(store, "chat:operator", owner="ada", strategy=strategy)
        assert store.get(operator) is not None
        # Another owner's thread is that first, whatever its group: not theirs to learn.
        with pytest.raises(NotThreadOwner) as refused:
            self.submit(store, "chat:ada", group="task", owner="bob", strategy=strategy)
        assert str(refused.value) == str(not_thread_owner("chat:ada", "bob"))

    def test_a_thread_tells_its_owner_and_check_thread_applies_the_rule(self, store):
        """The owner the store keeps is what doors that act on a thread without
        submitting to it check (``check_thread``): a new thread is anyone's."""
        self.submit(store, "chat:ada", owner="ada")
        self.submit(store, "chat:operator")
        assert store.thread("chat:ada").owner == "ada"
        assert store.thread("chat:operator").owner is None
        assert [t.owner for t in store.list_threads() if t.thread_id == "chat:ada"] == ["ada"]
        check_thread(store, "chat:ada", "ada")
        check_thread(store, "chat:new", "bob")
        for thread, intruder in (("chat:ada", "bob"), ("chat:ada", None), ("chat:operator", "ada")):
            with pytest.raises(NotThreadOwner) as refused:
                check_thread(store, thread, intruder)
            assert str(refused.value) == str(not_thread_owner(thread, intruder))

    # admission order ---------------------------------------------------------------

    def test_higher_priority_is_admitted_first(self, store):
        low = self.submit(store, "chore:1", group="chore", priority=10)
        high = self.submit(store, "chat:1", group="chat", priority=40, now=T0 + 0.5)
        assert self.claim_ids(store, limit=1) == [high]
        assert self.claim_ids(store, limit=1) == [low]

    def test_fifo_within_a_priority(self, store):
        ids = [self.submit(store, f"chat:{i}", now=T0 + i * 0.01) for i in range(5)]
        assert self.claim_ids(store, limit=5, now=T0 + 1) == ids

    def test_aging_lets_a_long_waiting_request_overtake(self, store):
        old_chore = self.submit(store, "chore:1", group="chore", priority=10, aging_seconds=60)
        # 30 priority steps of 60 s = 1800 s: a chat submitted later than that loses.
        late_chat = self.submit(store, "chat:1", priority=40, aging_seconds=60, now=T0 + 1801)
        assert self.claim_ids(store, limit=1, now=T0 + 1802) == [old_chore]
        assert self.claim_ids(store, limit=1, now=T0 + 1802) == [late_chat]

    def test_without_aging_priority_is_strict(self, store):
        chore = self.submit(store, "chore:1", group="chore", priority=10, aging_seconds=0)
        chat = self.submit(store, "chat:1", priority=40, aging_seconds=0, now=T0 + 10**6)
        assert self.claim_ids(store, limit=1, now=T0 + 10**6 + 1) == [chat]
        assert chore

    def test_not_before_delays_admission_and_sets_the_next_wakeup(self, store):
        later = self.submit(store, "chat:1", not_before=T0 + 100)
        assert self.claim_ids(store, now=T0 + 50) == []
        assert store.next_wakeup(now=T0 + 50) == T0 + 100
        assert self.claim_ids(store, now=T0 + 100) == [later]

    def test_limit_bounds_one_claim(self, store):
        for i in range(4):
            self.submit(store, f"chat:{i}")
        assert len(self.claim_ids(store, limit=3)) == 3
        assert len(self.claim_ids(store, limit=3)) == 1

    def test_claim_only_admits_the_named_requests(self, store):
        self.submit(store, "chat:1")
        wanted = self.submit(store, "chat:2")
        turns = store.claim(
            run_id="r", limit=5, now=T0 + 1, lease_seconds=LEASE, caps={}, only=[wanted]
        )
        assert [t.id for t in turns] == [wanted]

    # threads and groups -------------------------------------------------------------

    def test_one_active_turn_per_thread(self, store):
        first = self.submit(store, "chat:1", now=T0)
        second = self.submit(store, "chat:1", now=T0 + 0.1)
        assert self.claim_ids(store) == [first]
        assert self.claim_ids(store) == []
        assert self.finish(store, first)
        assert self.claim_ids(store, now=T0 + 3) == [second]

    def test_the_thread_head_is_its_best_request(self, store):
        chore_like = self.submit(store, "mixed:1", priority=10, now=T0)
        urgent = self.submit(store, "mixed:1", priority=40, now=T0 + 1)
        assert self.claim_ids(store, now=T0 + 2) == [urgent]
        self.finish(store, urgent, now=T0 + 3)
        assert self.claim_ids(store, now=T0 + 4) == [chore_like]

    def test_group_caps_are_never_exceeded(self, store):
        for i in range(5):
            self.submit(store, f"task:{i}", group="task", priority=20)
        first = self.claim_ids(store, limit=10, caps={"task": 2})
        assert len(first) == 2
        assert self.claim_ids(store, limit=10, caps={"task": 2}) == []
        self.finish(store, first[0])
        assert len(self.claim_ids(store, limit=10, caps={"task": 2}, now=T0 + 3)) == 1

    def test_a_full_group_does_not_block_another(self, store):
        for i in range(3):
            self.submit(store, f"chore:{i}", group="chore", priority=50)
        chat = self.submit(store, "chat:1", priority=40)
        claimed = self.claim_ids(store, limit=10, caps={"chore": 1})
        assert chat in claimed
        assert len(claimed) == 2

    # the turn lifecycle and fencing -------------------------------------------------------

    def test_finish_is_fenced_by_run_and_attempt(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        assert not store.finish(
            turn_id, run_id="run-b", attempt=1, status=TurnStatus.COMPLETED, now=T0 + 2
        )
        assert not store.finish(
            turn_id, run_id="run-a", attempt=2, status=TurnStatus.COMPLETED, now=T0 + 2
        )
        assert store.finish(
            turn_id,
            run_id="run-a",
            attempt=1,
            status=TurnStatus.FAILED,
            now=T0 + 2,
            outcome="timeout",
            error="took too long",
        )
        turn = store.get(turn_id)
        assert (turn.status, turn.outcome, turn.error) == (
            TurnStatus.FAILED,
            "timeout",
            "took too long",
        )
        assert not store.finish(
            turn_id, run_id="run-a", attempt=1, status=TurnStatus.COMPLETED, now=T0 + 3
        )

    def test_a_zombie_cannot_finish_a_turn_another_run_took_over(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store, run="zombie")
        store.recover(now=T0 + 1 + LEASE + 1, max_attempts=3)
        assert self.claim_ids(store, run="healthy", now=T0 + 40) == [turn_id]
        assert not store.finish(
            turn_id, run_id="zombie", attempt=1, status=TurnStatus.COMPLETED, now=T0 + 41
        )
        step = StepRecord(
            turn_id=turn_id,
            seq=0,
            attempt=1,
            kind="model_call",
            status="completed",
            started_at=T0,
            finished_at=T0,
        )
        assert store.record_step(step, run_id="zombie") is None
        assert store.finish(
            turn_id, run_id="healthy", attempt=2, status=TurnStatus.COMPLETED, now=T0 + 42
        )

    def test_recover_requeues_expired_leases_with_the_attempt_counted(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        assert store.recover(now=T0 + 5, max_attempts=3).requeued == ()  # lease still valid
        report = store.recover(now=T0 + 1 + LEASE + 1, max_attempts=3)
        assert report.requeued == (turn_id,)
        assert store.get(turn_id).status is TurnStatus.QUEUED
        assert self.claim_ids(store, now=T0 + 40) == [turn_id]
        assert store.get(turn_id).attempt == 2

    def test_recover_fails_a_turn_past_the_attempt_bound(self, store):
        turn_id = self.submit(store)
        now = T0
        for _ in range(2):
            now += 100
            assert self.claim_ids(store, now=now) == [turn_id]
            store.recover(now=now + LEASE + 1, max_attempts=2)
        turn = store.get(turn_id)
        assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "abandoned")
        assert "2 attempt(s)" in turn.error

    def test_recover_treats_dead_runs_as_expired_at_once(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store, run="crashed")
        assert store.recover(now=T0 + 2, max_attempts=3, dead_runs=["crashed"]).requeued == (
            turn_id,
        )

    def test_release_gives_a_turn_back_with_the_attempt_counted(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        assert not store.release(turn_id, run_id="run-b", attempt=1, now=T0 + 2, max_attempts=3)
        assert store.release(turn_id, run_id="run-a", attempt=1, now=T0 + 2, max_attempts=3)
        turn = store.get(turn_id)
        assert (turn.status, turn.attempt, turn.lease_owner) == (TurnStatus.QUEUED, 1, None)
        assert self.claim_ids(store, now=T0 + 3) == [turn_id]
        assert store.get(turn_id).attempt == 2

    def test_release_fails_a_turn_at_the_attempt_bound(self, store):
        turn_id = self.submit(store)
        for attempt in (1, 2):
            assert self.claim_ids(store, now=T0 + attempt) == [turn_id]
            assert store.release(
                turn_id, run_id="run-a", attempt=attempt, now=T0 + attempt, max_attempts=2
            )
        turn = store.get(turn_id)
        assert (turn.status, turn.outcome, turn.attempt) == (TurnStatus.FAILED, "abandoned", 2)
        assert "2 attempt(s)" in turn.error
        assert "shut down" in turn.error
        assert self.claim_ids(store, now=T0 + 5) == []

    def test_hand_backs_while_waiting_for_a_person_spend_no_attempt(self, store):
        """A turn parked on an approval is handed back at every deploy (release) or
        crash (recover) while nobody decides: each hand-back starts a new attempt
        (attempt numbers tell runs apart) but only attempts that ran count towards
        ``max_attempts``."""
        turn_id = self.submit(store)
        now = T0
        for attempt in range(1, 6):  # five hand-backs while parked, with max_attempts 2
            now += 100
            assert self.claim_ids(store, now=now) == [turn_id]
            assert store.set_active_status(
                turn_id, run_id="run-a", attempt=attempt, status=TurnStatus.AWAITING_APPROVAL,
                now=now,
            )  # fmt: skip
            if attempt % 2:
                assert store.release(
                    turn_id, run_id="run-a", attempt=attempt, now=now, max_attempts=2
                )
            else:
                assert store.recover(now=now + LEASE + 1, max_attempts=2).requeued == (turn_id,)
            turn = store.get(turn_id)
            assert (turn.status, turn.attempt) == (TurnStatus.QUEUED, attempt)
        # Running, it spends attempts again: two that ran, and it is abandoned.
        for _ in (6, 7):
            now += 100
            assert self.claim_ids(store, now=now) == [turn_id]
            store.recover(now=now + LEASE + 1, max_attempts=2)
        turn = store.get(turn_id)
        assert (turn.status, turn.outcome, turn.attempt) == (TurnStatus.FAILED, "abandoned", 7)
        assert "after 2 attempt(s)" in turn.error

    def test_crashes_while_parked_end_after_their_own_bound_shutdowns_never(self, store):
        """A process that keeps dying while a turn waits for a person: the first ``10 x
        max_attempts`` crashes spend no attempt, then they count (a crash loop ends);
        a shutdown's hand-back never counts."""

        def parked_then(end, attempt: int, now: float) -> None:
            assert self.claim_ids(store, now=now) == [turn_id]
            assert store.set_active_status(
                turn_id, run_id="run-a", attempt=attempt, status=TurnStatus.AWAITING_APPROVAL,
                now=now,
            )  # fmt: skip
            end(attempt, now)

        def crash(attempt: int, now: float) -> None:
            store.recover(now=now + LEASE + 1, max_attempts=1)

        def shutdown(attempt: int, now: float) -> None:
            assert store.release(turn_id, run_id="run-a", attempt=attempt, now=now, max_attempts=1)

        turn_id = self.submit(store)
        now, attempt = T0, 0
        for _ in range(15):  # shutdowns: never a bound
            attempt, now = attempt + 1, now + 100
            parked_then(shutdown, attempt, now)
        assert store.get(turn_id).status is TurnStatus.QUEUED
        store.cancel(turn_id, now=now)  # out of the way
        other = self.submit(store, "cli:other", now=now)
        turn_id, attempt = other, 0
        for _ in range(10):  # 10 x max_attempts (1) crashes while parked: free
            attempt, now = attempt + 1, now + 100
            parked_then(crash, attempt, now)
            assert store.get(turn_id).status is TurnStatus.QUEUED
        attempt, now = attempt + 1, now + 100
        parked_then(crash, attempt, now)  # the 11th counts: the bound of 1 is reached
        turn = store.get(turn_id)
        assert (turn.status, turn.outcome, turn.attempt) == (TurnStatus.FAILED, "abandoned", 11)

    def test_release_ends_a_canceling_turn_canceled(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        store.cancel(turn_id, now=T0 + 2)
        assert store.release(turn_id, run_id="run-a", attempt=1, now=T0 + 3, max_attempts=3)
        assert store.get(turn_id).status is TurnStatus.CANCELED

    def test_awaiting_approval_keeps_the_thread_busy(self, store):
        first = self.submit(store)
        self.submit(store, now=T0 + 0.5)
        self.claim_ids(store)
        assert store.set_active_status(
            first, run_id="run-a", attempt=1, status=TurnStatus.AWAITING_APPROVAL, now=T0 + 2
        )
        assert store.get(first).status is TurnStatus.AWAITING_APPROVAL
        assert self.claim_ids(store, now=T0 + 3) == []
        assert store.set_active_status(
            first, run_id="run-a", attempt=1, status=TurnStatus.RUNNING, now=T0 + 4
        )

    def test_a_turn_awaiting_approval_holds_no_slot_of_its_group(self, store):
        a, b, c = (self.submit(store, f"task:{x}", group="task", now=T0 + i) for i, x in
                   enumerate("abc"))  # fmt: skip
        caps = {"task": 2}
        assert self.claim_ids(store, caps=caps, now=T0 + 3) == [a, b]
        for parked in (a, b):
            assert store.set_active_status(
                parked, run_id="run-a", attempt=1, status=TurnStatus.AWAITING_APPROVAL, now=T0 + 4
            )
        assert self.claim_ids(store, caps=caps, now=T0 + 5) == [c]
        assert store.group_load()["task"] == (1, 0)
        # Back to running only while the group has room, in one step with the claims.
        assert store.resume_parked(a, run_id="run-a", attempt=1, cap=2, now=T0 + 6) is True
        assert store.resume_parked(b, run_id="run-a", attempt=1, cap=2, now=T0 + 6) is False
        assert store.get(b).status is TurnStatus.AWAITING_APPROVAL
        assert self.finish(store, c, now=T0 + 7)
        assert store.resume_parked(b, run_id="run-a", attempt=1, cap=2, now=T0 + 8) is True
        assert store.get(b).status is TurnStatus.RUNNING
        assert store.group_load()["task"] == (2, 0)
        # Not parked (any more), or not by this run: nothing changes.
        assert store.resume_parked(b, run_id="run-a", attempt=1, cap=None, now=T0 + 9) is None
        assert store.set_active_status(
            a, run_id="run-a", attempt=1, status=TurnStatus.AWAITING_APPROVAL, now=T0 + 9
        )
        assert store.resume_parked(a, run_id="run-b", attempt=1, cap=None, now=T0 + 9) is None
        assert store.resume_parked(a, run_id="run-a", attempt=1, cap=None, now=T0 + 9) is True

    def test_heartbeat_renews_leases_and_reports_cancel_requests(self, store):
        a = self.submit(store, "chat:1")
        b = self.submit(store, "chat:2")
        self.claim_ids(store)
        store.cancel(b, now=T0 + 2)
        beat = store.heartbeat("run-a", now=T0 + 20, lease_expires=T0 + 20 + LEASE)
        assert beat.owned == {a, b}
        assert beat.cancel_requested == {b}
        assert store.get(a).lease_expires == T0 + 20 + LEASE
        assert store.recover(now=T0 + 40, max_attempts=3).requeued == ()

    # cancellation ----------------------------------------------------------------------

    def test_cancel_a_queued_request_at_once(self, store):
        turn_id = self.submit(store)
        result = store.cancel(turn_id, now=T0 + 1)
        assert result.status is TurnStatus.CANCELED
        assert self.claim_ids(store) == []
        assert store.cancel(turn_id, now=T0 + 2).changed == {}  # terminal: a no-op

    def test_cancel_a_running_turn_asks_its_runtime(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        result = store.cancel(turn_id, now=T0 + 2)
        assert result.status is TurnStatus.CANCELING
        assert store.get(turn_id).cancel_requested
        assert store.finish(
            turn_id, run_id="run-a", attempt=1, status=TurnStatus.CANCELED, now=T0 + 3
        )

    def test_a_cancel_reason_holding_a_nul_is_written_out(self, store):
        """Every store keeps a NUL as the four characters ``\\x00`` (PostgreSQL's
        ``text`` cannot hold one: the cancel raised there)."""
        running = self.submit(store)
        assert self.claim_ids(store) == [running]
        queued = self.submit(store, now=T0 + 1)  # behind it on its thread
        store.cancel(queued, now=T0 + 2, reason="stop\x00now")
        store.cancel(running, now=T0 + 2, reason="halt\x00")
        assert store.get(queued).error == "stop\\x00now"
        assert store.get(running).error == "halt\\x00"

    def test_cancel_cascades_to_descendants(self, store):
        parent = self.submit(store, "chat:1")
        self.claim_ids(store)
        child = self.submit(store, "task:c1", group="task", parent=parent)
        grandchild = self.submit(store, "task:c2", group="task", parent=child)
        unrelated = self.submit(store, "task:c3", group="task")
        result = store.cancel(parent, now=T0 + 3)
        assert result.changed == {
            parent: TurnStatus.CANCELING,
            child: TurnStatus.CANCELED,
            grandchild: TurnStatus.CANCELED,
        }
        assert store.get(unrelated).status is TurnStatus.QUEUED

    def test_cancel_of_an_unknown_id_is_not_found(self, store):
        with pytest.raises(TurnNotFound):
            store.cancel("nope", now=T0)

    def test_recover_ends_a_canceling_turn_canceled(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        store.cancel(turn_id, now=T0 + 2)
        assert store.recover(now=T0 + 100, max_attempts=3).canceled == (turn_id,)
        assert store.get(turn_id).status is TurnStatus.CANCELED

    # busy-thread strategies and overflow --------------------------------------------------

    def test_reject_strategy_refuses_a_busy_thread(self, store):
        self.submit(store, strategy="reject")
        with pytest.raises(SubmitRejected, match="busy") as info:
            self.submit(store, strategy="reject")
        assert info.value.reason == "thread_busy"

    def test_coalesce_keeps_one_pending_per_dedupe_key(self, store):
        first = store.submit(
            request("chore:x", "v1", source="chore", dedupe_key="x"),
            rules("chore", 10, strategy="coalesce"),
            now=T0,
        )
        second = store.submit(
            request("chore:x", "v2", source="chore", dedupe_key="x"),
            rules("chore", 10, strategy="coalesce"),
            now=T0 + 1,
        )
        assert (second.status, second.id) == ("coalesced", first.id)
        assert store.get(first.id).input == "v2"
        assert len(store.list_turns(TurnFilter(thread_id="chore:x"))) == 1

    def test_coalesce_queues_again_once_the_pending_one_started(self, store):
        first = self.submit(store, "chore:x", group="chore", strategy="coalesce")
        self.claim_ids(store)
        second = self.submit(store, "chore:x", group="chore", strategy="coalesce", now=T0 + 2)
        assert second != first
        assert store.get(second).status is TurnStatus.QUEUED

    def test_interrupt_cancels_the_running_turn_and_queues_the_new_one(self, store):
        running = self.submit(store)
        self.claim_ids(store)
        result = store.submit(request(), rules(strategy="interrupt"), now=T0 + 2)
        assert result.interrupted == (running,)
        assert store.get(running).status is TurnStatus.CANCELING
        assert store.get(result.id).status is TurnStatus.QUEUED

    def test_steer_reaches_the_running_turn_or_else_runs_next(self, store):
        running = self.submit(store)
        self.claim_ids(store)
        steer = store.submit(request(text="also this"), rules(strategy="steer"), now=T0 + 2)
        assert steer.steer
        taken = store.take_steer(running, run_id="run-a", attempt=1, now=T0 + 3)
        assert [t.input for t in taken] == ["also this"]
        assert store.get(steer.id).status is TurnStatus.STEERED
        late = store.submit(request(text="too late"), rules(strategy="steer"), now=T0 + 4)
        self.finish(store, running, now=T0 + 5)
        assert self.claim_ids(store, now=T0 + 6) == [late.id]

    def test_steer_on_an_idle_thread_just_queues(self, store):
        result = store.submit(request(), rules(strategy="steer"), now=T0)
        assert not result.steer

    def test_overflow_reject(self, store):
        self.submit(store, "task:1", group="task", max_queued=1)
        with pytest.raises(SubmitRejected, match="max_queued = 1") as info:
            self.submit(store, "task:2", group="task", max_queued=1)
        assert info.value.reason == "queue_full"

    def test_overflow_drop_oldest(self, store):
        oldest = self.submit(store, "task:1", group="task", max_queued=2, overflow="drop_oldest")
        self.submit(store, "task:2", group="task", max_queued=2, overflow="drop_oldest", now=T0 + 1)
        result = store.submit(
            request("task:3", source="task"),
            rules("task", 20, max_queued=2, overflow="drop_oldest"),
            now=T0 + 2,
        )
        assert result.dropped == (oldest,)
        assert (store.get(oldest).status, store.get(oldest).outcome) == (
            TurnStatus.DROPPED,
            "overflow_dropped",
        )

    def test_overflow_replace_pending(self, store):
        self.submit(store, "task:1", group="task", max_queued=2, overflow="replace_pending")
        newest = self.submit(
            store, "task:2", group="task", max_queued=2, overflow="replace_pending", now=T0 + 1
        )
        result = store.submit(
            request("task:3", source="task"),
            rules("task", 20, max_queued=2, overflow="replace_pending"),
            now=T0 + 2,
        )
        assert result.dropped == (newest,)

    # steps -----------------------------------------------------------------------------

    def test_steps_are_recorded_in_order_and_found_by_idempotency_key(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)

        def step(kind: str, key: str | None = None) -> StepRecord:
            return StepRecord(
                turn_id=turn_id,
                seq=0,
                attempt=1,
                kind=kind,
                status="completed",
                started_at=T0,
                finished_at=T0 + 1,
                data={"x": kind},
                idempotency_key=key,
            )

        first = store.record_step(step("prompt_build"), run_id="run-a")
        second = store.record_step(step("tool_call", f"{turn_id}:call-1"), run_id="run-a")
        assert (first.seq, second.seq) == (1, 2)
        again = store.record_step(step("tool_call", f"{turn_id}:call-1"), run_id="run-a")
        assert again.seq == 2
        assert [s.kind for s in store.steps(turn_id)] == ["prompt_build", "tool_call"]
        assert store.find_step(f"{turn_id}:call-1").data == {"x": "tool_call"}
        assert store.find_step("missing") is None

    def test_several_steps_are_recorded_in_one_write_in_order_or_none_when_fenced(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)

        def step(kind: str, key: str | None = None) -> StepRecord:
            return StepRecord(
                turn_id=turn_id,
                seq=0,
                attempt=1,
                kind=kind,
                status="completed",
                started_at=T0,
                finished_at=T0 + 1,
                data={"x": kind},
                idempotency_key=key,
            )

        assert store.record_steps([], run_id="run-a") == []
        first = store.record_step(step("prompt_build"), run_id="run-a")
        stored = store.record_steps(
            [step("model_call", f"{turn_id}:model:0"), self.intent(turn_id, f"{turn_id}:c1")],
            run_id="run-a",
        )
        assert [(s.kind, s.seq, s.status) for s in stored] == [
            ("model_call", 2, "completed"),
            ("tool_call", 3, "intent"),
        ]
        # A replayed key keeps the stored step; the new one after it is appended.
        again = store.record_steps(
            [step("model_call", f"{turn_id}:model:0"), step("model_call", f"{turn_id}:model:1")],
            run_id="run-a",
        )
        assert [(s.seq, s.data) for s in again] == [
            (2, {"x": "model_call"}),
            (4, {"x": "model_call"}),
        ]
        # Fenced out: nothing of the batch is stored.
        assert store.record_steps([step("late"), step("later")], run_id="zombie") is None
        kinds = [s.kind for s in store.steps(turn_id)]
        assert kinds == ["prompt_build", "model_call", "tool_call", "model_call"]
        assert first.seq == 1

    def test_final_steps_with_idempotency_keys_are_stored_with_the_finish(self, store):
        first, second = self.submit(store), self.submit(store, thread="chat:2")
        self.claim_ids(store)

        def step(turn_id: str, kind: str, key: str | None) -> StepRecord:
            return StepRecord(
                turn_id=turn_id,
                seq=0,
                attempt=1,
                kind=kind,
                status="completed",
                started_at=T0,
                finished_at=T0 + 1,
                data={"x": kind},
                idempotency_key=key,
            )

        store.record_step(step(first, "model_call", f"{first}:model:0"), run_id="run-a")
        finishes = [
            Finish(
                first,
                "run-a",
                1,
                TurnStatus.COMPLETED,
                T0 + 2,
                output="one",
                # a replayed key is kept once and does not fail the batch
                steps=(
                    step(first, "model_call", f"{first}:model:0"),
                    step(first, "model_call", f"{first}:model:1"),
                ),
            ),
            Finish(
                second,
                "zombie",
                1,
                TurnStatus.COMPLETED,
                T0 + 2,
                output="two",
                steps=(step(second, "model_call", f"{second}:model:0"),),
            ),
        ]
        assert store.finish_many(finishes) == [True, False]
        stored = store.steps(first)
        assert [s.idempotency_key for s in stored] == [f"{first}:model:0", f"{first}:model:1"]
        assert stored[0].seq < stored[1].seq
        assert store.find_step(f"{first}:model:1") is not None
        assert store.steps(second) == []  # fenced: its steps neither

    def test_a_finishs_records_are_written_with_it_and_only_when_it_is_recorded(self, store):
        first, second = self.submit(store), self.submit(store, thread="chat:2")
        self.claim_ids(store)
        store.put_record("trace", first, {"old": True}, now=T0)
        finishes = [
            Finish(
                first,
                "run-a",
                1,
                TurnStatus.COMPLETED,
                T0 + 2,
                output="one",
                records=(("trace", first, {"agent": "ü"}), ("other", first, {"n": 1})),
            ),
            Finish(
                second,
                "zombie",  # fenced: its records neither
                1,
                TurnStatus.COMPLETED,
                T0 + 2,
                records=(("trace", second, {"agent": "b"}),),
            ),
        ]
        assert store.finish_many(finishes) == [True, False]
        written = store.get_record("trace", first)
        assert (written.data, written.revision, written.updated_at) == ({"agent": "ü"}, 2, T0 + 2)
        assert store.get_record("other", first).data == {"n": 1}
        assert store.get_record("trace", second) is None

    def test_thread_history_is_what_was_said_before_a_turn_newest_first(self, store):
        ids = [self.submit(store, text=f"say {n}", now=T0 + n) for n in range(4)]
        self.submit(store, thread="chat:other", text="elsewhere", now=T0 + 9)
        for n, turn_id in enumerate(ids[:3]):
            assert self.claim_ids(store, now=T0 + 10 + n, limit=1) == [turn_id]
            status = TurnStatus.COMPLETED if n != 1 else TurnStatus.FAILED
            item = Finish(turn_id, "run-a", 1, status, T0 + 11 + n, output=f"said {n}")
            if n == 1:
                item = attrs.evolve(item, output=None, outcome="timeout", error="late")
            assert store.finish_many([item]) == [True]
        last = store.get(ids[3])
        history = store.thread_history("chat:1", before_seq=last.seq, limit=2)
        assert [(p.input, p.status, p.output, p.outcome) for p in history] == [
            ("say 2", TurnStatus.COMPLETED, "said 2", None),
            ("say 1", TurnStatus.FAILED, None, "timeout"),
        ]
        assert history[0].created_at == T0 + 2
        assert history[0].seq > history[1].seq
        assert store.thread_history("chat:1", before_seq=store.get(ids[0]).seq, limit=5) == []

    def test_put_records_writes_each_whatever_its_revision_in_one_go(self, store):
        store.put_record("after", "t1", {"stages": []}, now=T0)
        store.put_records(
            [("after", "t1", {"stages": ["a"]}), ("after", "t2", {"stages": ["ü"]})], now=T0 + 1
        )
        one, two = store.get_record("after", "t1"), store.get_record("after", "t2")
        assert (one.data, one.revision, one.updated_at) == ({"stages": ["a"]}, 2, T0 + 1)
        assert (two.data, two.revision) == ({"stages": ["ü"]}, 1)
        store.put_records([], now=T0 + 2)  # nothing to write is no error

    def intent(self, turn_id: str, key: str, attempt: int = 1) -> StepRecord:
        return StepRecord(
            turn_id=turn_id,
            seq=0,
            attempt=attempt,
            kind="tool_call",
            status="intent",
            started_at=T0 + 1,
            finished_at=T0 + 1,
            data={"call": {"name": "append"}},
            idempotency_key=key,
        )

    def test_a_tool_intent_is_stored_before_and_completed_in_place_by_its_result(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        key = f"{turn_id}:tool:c1"
        intent = store.record_step(self.intent(turn_id, key), run_id="run-a")
        assert intent is not None
        assert intent.seq == 1
        assert store.find_step(key).status == "intent"  # a crash now leaves it in doubt
        result = attrs.evolve(
            intent, status="completed", finished_at=T0 + 2, data={"result": {"ok": True}}
        )
        done = store.complete_step(result, run_id="run-a")
        assert done is not None
        assert done.seq == 1
        (stored,) = store.steps(turn_id)
        assert (stored.seq, stored.status, stored.started_at, stored.finished_at) == (
            1,
            "completed",
            T0 + 1,
            T0 + 2,
        )
        assert stored.data == {"result": {"ok": True}}
        assert store.complete_step(result, run_id="run-a") is None  # a result is stored once

    def test_a_result_is_fenced_and_needs_an_intent(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        key = f"{turn_id}:tool:c1"
        result = attrs.evolve(self.intent(turn_id, key), status="completed")
        assert store.complete_step(result, run_id="run-a") is None  # no intent stored
        store.record_step(self.intent(turn_id, key), run_id="run-a")
        assert store.complete_step(result, run_id="zombie") is None
        assert store.complete_step(attrs.evolve(result, attempt=2), run_id="run-a") is None
        assert store.find_step(key).status == "intent"

    def test_an_intent_left_by_a_crash_is_completed_by_the_next_attempt(self, store):
        turn_id = self.submit(store)
        self.claim_ids(store)
        key = f"{turn_id}:tool:c1"
        store.record_step(self.intent(turn_id, key), run_id="run-a")
        store.recover(now=T0 + 1 + LEASE + 1, max_attempts=3)
        assert self.claim_ids(store, now=T0 + 40, run="run-b") == [turn_id]
        # the new attempt finds the intent (in doubt) and records what it decided
        found = store.find_step(key)
        assert (found.status, found.attempt) == ("intent", 1)
        decided = attrs.evolve(
            found,
            attempt=2,
            status="failed",
            finished_at=T0 + 41,
            data={"in_doubt": {"decision": "told_model"}},
            error="in doubt",
        )
        assert store.complete_step(decided, run_id="run-b") is not None
        stored = store.find_step(key)
        assert (stored.status, stored.attempt, stored.error) == ("failed", 2, "in doubt")
        assert stored.data == {"in_doubt": {"decision": "told_model"}}

    # queries -----------------------------------------------------------------------------

    def test_list_turns_filters_and_orders_newest_first(self, store):
        a = self.submit(store, "chat:1")
        b = self.submit(store, "chat:2", now=T0 + 1, parent=a, owner="ada")
        assert [t.id for t in store.list_turns()] == [b, a]
        assert [t.id for t in store.list_turns(TurnFilter(parent=a))] == [b]
        assert [t.id for t in store.list_turns(TurnFilter(owner="ada"))] == [b]
        assert [
            t.id for t in store.list_turns(TurnFilter(status=(TurnStatus.QUEUED,), limit=1))
        ] == [b]

    def test_threads_and_counts(self, store):
        first = self.submit(store, "chat:1")
        self.submit(store, "task:1", group="task")
        self.claim_ids(store, limit=1)
        info = store.thread("chat:1")
        assert (info.thread_group, info.running_id, info.turns) == ("chat", first, 1)
        assert {t.thread_id for t in store.list_threads()} == {"chat:1", "task:1"}
        counts = {(c.thread_group, c.status): c.count for c in store.counts()}
        assert counts == {("chat", TurnStatus.RUNNING): 1, ("task", TurnStatus.QUEUED): 1}

    def test_delete_turns_removes_finished_requests_their_steps_and_empty_threads(self, store):
        done = self.submit(store, "task:done", group="task")
        self.claim_ids(store)
        store.record_step(
            StepRecord(done, 0, 1, "echo", "completed", T0, T0 + 1, idempotency_key="k-done"),
            run_id="run-a",
        )
        self.finish(store, done)
        queued = self.submit(store, "task:queued", group="task", now=T0 + 3)
        assert store.delete_turns([done, queued, "missing"]) == [done]
        assert store.get(done) is None
        assert store.steps(done) == []
        assert store.find_step("k-done") is None
        assert store.thread("task:done") is None
        assert store.get(queued) is not None
        claimed: list[TurnRequest] = store.claim(
            run_id="run-b", limit=10, now=T0 + 10, lease_seconds=LEASE, caps={}
        )
        assert [t.id for t in claimed] == [queued]

    # runs and records ----------------------------------------------------------------------

    def test_runs_are_recorded_and_stale_ones_marked_lost(self, store):
        store.begin_run(
            RunRecord(
                id="r1",
                host="h",
                pid=1,
                version="0",
                started_at=T0,
                heartbeat_at=T0,
                plugins=({"name": "x"},),
            )
        )
        store.begin_run(
            RunRecord(id="r2", host="h", pid=2, version="0", started_at=T0 + 5, heartbeat_at=T0 + 5)
        )
        assert store.mark_lost_runs(now=T0 + 100, stale_before=T0 + 3, exclude="r2") == ["r1"]
        store.end_run("r2", now=T0 + 101)
        runs = {r.id: r for r in store.list_runs()}
        assert (runs["r1"].status, runs["r2"].status) == ("lost", "stopped")
        assert runs["r1"].plugins == ({"name": "x"},)

    def test_records_round_trip_with_optimistic_revisions(self, store):
        first = store.put_record("source-task", "t1", {"title": "ü"}, now=T0, expect_revision=0)
        assert first.revision == 1
        with pytest.raises(RecordConflict):
            store.put_record("source-task", "t1", {"title": "x"}, now=T0, expect_revision=0)
        store.put_record("source-task", "t1", {"title": "y"}, now=T0 + 1, expect_revision=1)
        assert store.get_record("source-task", "t1").data == {"title": "y"}
        assert [r.key for r in store.list_records("source-task")] == ["t1"]
        assert store.delete_record("source-task", "t1")
        assert store.get_record("source-task", "t1") is None

    # concurrency ---------------------------------------------------------------------------

    def test_concurrent_producers_and_claimers_keep_every_rule(self, toolang_store_factory):
        """Producers submit while claimers claim and finish, each on its own connection."""
        threads_count, per_producer, cap = 12, 60, 3
        errors: list[BaseException] = []
        claimed: list[str] = []
        lock = threading.Lock()
        done_producing = threading.Event()

        def produce(s: ExecutionStore, n: int) -> None:
            for i in range(per_producer):
                group = "task" if i % 2 else "chat"
                thread = f"{group}:{(n * per_producer + i) % threads_count}"
                s.submit(request(thread, source=group), rules(group, 20), now=T0 + i)

        def consume(s: ExecutionStore, name: str) -> None:
            idle = 0
            while idle < 50:
                turns = s.claim(
                    run_id=name, limit=2, now=T0 + 10_000, lease_seconds=LEASE, caps={"task": cap}
                )
                if not turns:
                    idle = idle + 1 if done_producing.is_set() else 0
                    continue
                idle = 0
                active = s.list_turns(TurnFilter(status=(TurnStatus.RUNNING,), limit=1000))
                by_thread = [t.thread_id for t in active]
                assert len(by_thread) == len(set(by_thread)), "two running on one thread"
                assert sum(t.thread_group == "task" for t in active) <= cap, "cap exceeded"
                for t in turns:
                    assert s.finish(
                        t.id,
                        run_id=name,
                        attempt=t.attempt,
                        status=TurnStatus.COMPLETED,
                        now=T0 + 10_001,
                    )
                with lock:
                    claimed.extend(t.id for t in turns)

        def on_own_store(body: Callable[[ExecutionStore, Any], None], arg: Any) -> None:
            s: ExecutionStore | None = None
            try:  # opening is inside: a store that fails to open is an error too
                s = toolang_store_factory()
                body(s, arg)
            except BaseException as exc:
                errors.append(exc)
            finally:
                if s is not None:
                    s.close()

        producers = [threading.Thread(target=on_own_store, args=(produce, n)) for n in range(3)]
        consumers = [
            threading.Thread(target=on_own_store, args=(consume, f"run-{n}")) for n in range(3)
        ]
        for t in (*producers, *consumers):
            t.start()
        for t in producers:
            t.join()
        done_producing.set()
        for t in consumers:
            t.join()
        assert not errors, errors
        assert len(claimed) == len(set(claimed)) == 3 * per_producer
