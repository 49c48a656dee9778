"""Property-based (stateful) test of admission over a real SQLite store.

Random sequences of submit / claim / finish / cancel / crash / time passing. After each
step the database itself is checked: never two active turns on one thread, no group over
its budget. Each claim is compared with a reference model that knows only the rules:
the head (best rank, then arrival) of every idle thread whose not_before has passed is
admissible, and admissible requests are taken best-first within the group budgets and
the limit — so a higher-priority admissible request is never passed over by a lower one
except through aging, which is part of the rank. At the end everything is drained and
every request has reached exactly one terminal state.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import attrs
from hypothesis import settings, strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import (
    ACTIVE,
    TERMINAL,
    NewTurnRequest,
    SubmitRules,
    TurnStatus,
)

THREADS = {
    "chat:a": "chat",
    "chat:b": "chat",
    "task:a": "task",
    "task:b": "task",
    "task:c": "task",
    "chore:a": "chore",
    "chore:b": "chore",
}
PRIORITY = {"chat": 40, "task": 20, "chore": 10}
CAPS = {"task": 2, "chore": 1}
MAX_ATTEMPTS = 3
AGING = 5.0
RUN = "run-1"


@attrs.define
class Model:
    id: str
    thread: str
    group: str
    rank: float
    seq: int
    not_before: float
    status: TurnStatus = TurnStatus.QUEUED
    attempt: int = 0
    terminal_transitions: int = 0


class Admission(RuleBasedStateMachine):
    @initialize()
    def open_store(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="toolang-props-"))
        self.store = SQLiteStore(self.dir / "toolang.db")
        self.now = 1_000.0
        self.requests: dict[str, Model] = {}

    def teardown(self) -> None:
        if hasattr(self, "store"):
            try:
                self.drain()
            finally:
                self.store.close()
                shutil.rmtree(self.dir, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------

    def set_status(self, model: Model, status: TurnStatus) -> None:
        assert not model.status.is_terminal, f"{model.id} left terminal state {model.status}"
        if status.is_terminal:
            model.terminal_transitions += 1
        model.status = status

    def expected_claim(self, limit: int) -> list[str]:
        active_threads = {m.thread for m in self.requests.values() if m.status in ACTIVE}
        running = {g: 0 for g in PRIORITY}
        for m in self.requests.values():
            if m.status in ACTIVE:
                running[m.group] += 1
        heads: dict[str, Model] = {}
        for m in self.requests.values():
            if m.status is TurnStatus.QUEUED:
                best = heads.get(m.thread)
                if best is None or (m.rank, m.seq) < (best.rank, best.seq):
                    heads[m.thread] = m
        admissible = sorted(
            (m for t, m in heads.items() if t not in active_threads and m.not_before <= self.now),
            key=lambda m: (m.rank, m.seq),
        )
        chosen = []
        for m in admissible:
            if len(chosen) == limit:
                break
            cap = CAPS.get(m.group)
            if cap is not None and running[m.group] >= cap:
                continue
            running[m.group] += 1
            chosen.append(m.id)
        return chosen

    def drain(self) -> None:
        for _ in range(1000):
            self.store.recover(now=self.now, max_attempts=MAX_ATTEMPTS, dead_runs=[RUN])
            self.now += 100  # past every not_before
            turns = self.store.claim(
                run_id=RUN, limit=100, now=self.now, lease_seconds=10, caps=CAPS
            )
            for t in turns:
                self.store.finish(
                    t.id, run_id=RUN, attempt=t.attempt, status=TurnStatus.COMPLETED, now=self.now
                )
            if not turns and not any(
                self.store.get(i).status in {*ACTIVE, TurnStatus.QUEUED} for i in self.requests
            ):
                break
        for turn_id in self.requests:
            assert self.store.get(turn_id).status in TERMINAL, turn_id

    # -- rules ---------------------------------------------------------------------

    @rule(
        thread=st.sampled_from(sorted(THREADS)),
        bump=st.integers(min_value=-10, max_value=10),
        delay=st.sampled_from([0.0, 0.0, 0.0, 2.0, 7.0]),
        coalesce=st.booleans(),
    )
    def submit(self, thread: str, bump: int, delay: float, coalesce: bool) -> None:
        group = THREADS[thread]
        not_before = self.now + delay if delay else None
        strategy = "coalesce" if coalesce and group == "chore" else "enqueue"
        result = self.store.submit(
            NewTurnRequest(source=group, thread_id=thread, input="x", not_before=not_before),
            SubmitRules(group, PRIORITY[group] + bump, strategy=strategy, aging_seconds=AGING),
            now=self.now,
        )
        if result.status == "coalesced":
            assert result.id in self.requests
            return
        stored = self.store.get(result.id)
        self.requests[result.id] = Model(
            result.id, thread, group, stored.rank, stored.seq, not_before or 0.0
        )

    @rule(limit=st.integers(min_value=1, max_value=4))
    def claim(self, limit: int) -> None:
        expected = self.expected_claim(limit)
        turns = self.store.claim(
            run_id=RUN, limit=limit, now=self.now, lease_seconds=10**6, caps=CAPS
        )
        assert [t.id for t in turns] == expected
        for t in turns:
            model = self.requests[t.id]
            self.set_status(model, TurnStatus.RUNNING)
            model.attempt += 1
            assert t.attempt == model.attempt <= MAX_ATTEMPTS

    @precondition(lambda self: any(m.status in ACTIVE for m in self.requests.values()))
    @rule(data=st.data(), status=st.sampled_from([TurnStatus.COMPLETED, TurnStatus.FAILED]))
    def finish(self, data: st.DataObject, status: TurnStatus) -> None:
        # Insertion order, never the (random) ids: replays must draw the same way.
        active = [m.id for m in self.requests.values() if m.status in ACTIVE]
        turn_id = active[data.draw(st.integers(0, len(active) - 1))]
        model = self.requests[turn_id]
        if model.status is TurnStatus.CANCELING:
            status = TurnStatus.CANCELED
        assert self.store.finish(
            turn_id, run_id=RUN, attempt=model.attempt, status=status, now=self.now
        )
        self.set_status(model, status)

    @precondition(lambda self: bool(getattr(self, "requests", None)))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        ids = list(self.requests)
        turn_id = ids[data.draw(st.integers(0, len(ids) - 1))]
        model = self.requests[turn_id]
        result = self.store.cancel(turn_id, now=self.now)
        if model.status is TurnStatus.QUEUED:
            assert result.status is TurnStatus.CANCELED
            self.set_status(model, TurnStatus.CANCELED)
        elif model.status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
            assert result.status is TurnStatus.CANCELING
            self.set_status(model, TurnStatus.CANCELING)
        else:
            assert result.changed == {}

    @rule()
    def crash(self) -> None:
        """The runtime dies; a new one recovers the turns its run held."""
        report = self.store.recover(now=self.now, max_attempts=MAX_ATTEMPTS, dead_runs=[RUN])
        for turn_id in report.requeued:
            self.set_status(self.requests[turn_id], TurnStatus.QUEUED)
        for turn_id in report.failed:
            assert self.requests[turn_id].attempt >= MAX_ATTEMPTS
            self.set_status(self.requests[turn_id], TurnStatus.FAILED)
        for turn_id in report.canceled:
            self.set_status(self.requests[turn_id], TurnStatus.CANCELED)
        expected = {m.id for m in self.requests.values() if m.status in ACTIVE}
        assert expected == set(), "every active turn of the dead run was dealt with"

    @rule(seconds=st.sampled_from([0.5, 3.0, 30.0]))
    def tick(self, seconds: float) -> None:
        self.now += seconds

    # -- invariants over the database itself ---------------------------------------------

    @invariant()
    def never_two_active_turns_on_a_thread(self) -> None:
        if not hasattr(self, "store"):
            return
        rows = self.store._conn.execute(
            "SELECT thread_id, count(*) FROM turn_requests WHERE status IN "
            "('running', 'awaiting_approval', 'canceling') GROUP BY thread_id HAVING count(*) > 1"
        ).fetchall()
        assert rows == []

    @invariant()
    def no_group_over_its_budget(self) -> None:
        if not hasattr(self, "store"):
            return
        rows = self.store._conn.execute(
            "SELECT thread_group, count(*) FROM turn_requests WHERE status IN "
            "('running', 'awaiting_approval', 'canceling') GROUP BY thread_group"
        ).fetchall()
        for group, count in rows:
            assert count <= CAPS.get(group, 10**9), (group, count)

    @invariant()
    def the_store_agrees_with_the_model(self) -> None:
        if not hasattr(self, "store"):
            return
        for model in self.requests.values():
            assert model.terminal_transitions <= 1
            assert self.store.get(model.id).status is model.status, model.id


TestAdmission = Admission.TestCase
TestAdmission.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
