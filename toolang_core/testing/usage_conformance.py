"""The store conformance suite's part on token usage (:meth:`ExecutionStore.usage`).

:class:`~toolang_core.testing.store_conformance.StoreConformance` includes it; a backend
gets these tests with the rest.
"""

from __future__ import annotations

from typing import Any

from toolang_core.store.protocol import ExecutionStore
from toolang_core.store.types import NewTurnRequest, StepRecord, SubmitRules, TurnStatus
from toolang_core.store.usage import Usage, UsageFilter

T0 = 1_800_000_000.0


def _model_call(turn_id: str, finished: float, tokens: dict[str, int], **kw: Any) -> StepRecord:
    return StepRecord(
        turn_id=turn_id,
        seq=0,
        attempt=1,
        kind=kw.pop("kind", "model_call"),
        status=kw.pop("status", "completed"),
        started_at=finished,
        finished_at=finished,
        data={"response": {"text": ""}, **({"tokens": tokens} if tokens else {})},
    )


class UsageConformance:
    """Sums of model-call usage by turn, thread, owner, budget and time."""

    def _turn(self, store: ExecutionStore, thread: str, run: str, **kw: Any) -> str:
        submitted = store.submit(
            NewTurnRequest(source="chat", thread_id=thread, input="hi", **kw),
            SubmitRules(thread_group="chat", priority=40),
            now=T0,
        )
        claimed = store.claim(run_id=run, limit=1, now=T0 + 1, lease_seconds=30.0, caps={})
        assert [t.id for t in claimed] == [submitted.id]
        return submitted.id

    def test_usage_sums_model_calls_by_turn_thread_owner_budget_and_time(
        self, store: ExecutionStore
    ) -> None:
        budget = {"budget": {"scope": "team:t1", "tokens": 100}}
        a = self._turn(store, "chat:a", "run-a", owner="alice", meta=budget)
        b = self._turn(store, "chat:b", "run-a", owner="bob")
        store.record_steps(
            [
                _model_call(a, T0 + 10, {"input": 10, "output": 2, "cached": 4}),
                _model_call(a, T0 + 20, {"input": 20, "output": 3}),
                _model_call(a, T0 + 30, {}),  # a model that reported nothing
                _model_call(a, T0 + 30, {"input": 99}, kind="tool_call"),
                _model_call(a, T0 + 30, {"input": 99}, status="failed"),
            ],
            run_id="run-a",
        )
        store.record_step(_model_call(b, T0 + 40, {"input": 5, "output": 1}), run_id="run-a")

        assert store.usage(UsageFilter(turn_id=a)) == Usage(30, 5, 4, 3)
        assert store.usage(UsageFilter(thread_id="chat:b")) == Usage(5, 1, 0, 1)
        assert store.usage(UsageFilter(owner="alice")).total == 35
        assert store.usage(UsageFilter(budget="team:t1")).total == 35
        assert store.usage(UsageFilter(budget="team:other")) == Usage()
        assert store.usage(UsageFilter(since=T0 + 20)) == Usage(25, 4, 0, 3)
        assert store.usage(UsageFilter(exclude_turn=a)) == Usage(5, 1, 0, 1)
        assert store.usage(UsageFilter()).model_calls == 4
        assert store.usage_by_owner(UsageFilter()) == {
            "alice": Usage(30, 5, 4, 3),
            "bob": Usage(5, 1, 0, 1),
        }
        assert store.usage_by_owner(UsageFilter(owner="bob")) == {"bob": Usage(5, 1, 0, 1)}

    def _task_turn(
        self, store: ExecutionStore, thread: str, *, source: str = "task", **kw: Any
    ) -> str:
        submitted = store.submit(
            NewTurnRequest(source=source, thread_id=thread, input="hi", owner="alice", **kw),
            SubmitRules(thread_group="task", priority=20),
            now=T0,
        )
        claimed = store.claim(run_id="run-a", limit=1, now=T0 + 1, lease_seconds=30.0, caps={})
        assert [t.id for t in claimed] == [submitted.id]
        store.record_step(
            _model_call(submitted.id, T0 + 10, {"input": 10, "output": 1, "cached": 2}),
            run_id="run-a",
        )
        done = store.finish(
            submitted.id,
            run_id="run-a",
            attempt=claimed[0].attempt,
            status=TurnStatus.COMPLETED,
            now=T0 + 11,
        )
        assert done  # the thread's next turn may start
        return submitted.id

    def test_a_task_runs_usage_sums_its_threads_turns_and_its_child_runs(
        self, store: ExecutionStore
    ) -> None:
        run = self._task_turn(store, "task:r1", id="r1")
        again = self._task_turn(store, "task:r1", source="chat")  # a follow-up on its thread
        child = self._task_turn(store, "task:r2", id="r2", parent=again)
        self._task_turn(store, "task:r3", id="r3", parent=child)  # a grandchild
        self._task_turn(store, "chat:x", source="chat", parent=run)  # not a task run
        self._task_turn(store, "task:r4", id="r4")  # another run
        self._task_turn(store, "task:r5", id="r5", parent="r4")  # its child

        assert store.usage(UsageFilter(task_run="r1")) == Usage(40, 4, 8, 4)
        assert store.usage(UsageFilter(task_run="r2")) == Usage(20, 2, 4, 2)
        assert store.usage(UsageFilter(task_run="r4")) == Usage(20, 2, 4, 2)
        assert store.usage(UsageFilter(task_run="r1", owner="alice")).model_calls == 4
        assert store.usage(UsageFilter(task_run="r1", owner="bob")) == Usage()
        assert store.usage(UsageFilter(task_run="missing")) == Usage()
        assert store.usage_by_owner(UsageFilter(task_run="r2")) == {"alice": Usage(20, 2, 4, 2)}
