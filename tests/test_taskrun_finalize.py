"""Finalizers and observers of task runs, and what happens when storing fails.

Driven over a real SQLite store; a run's turn is started and ended by hand. Docstrings
name the tRPC-Agent-Go behaviour checked (reference/taskrun.md §5).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from taskrun_helpers import Plane, make_runtime

from toolang_core import TaskRunController, TaskRunStatus, TurnStatus, hookimpl
from toolang_core.testing.runtimes import serving


class Finalizer:
    def __init__(self, metadata: Any = None, *, gate: asyncio.Event | None = None) -> None:
        self.metadata = metadata
        self.gate = gate
        self.seen: list[tuple[str, str]] = []
        self.entered = asyncio.Event()

    @hookimpl
    async def toolang_finalize_task_run(self, run, runtime):
        self.seen.append((run.id, run.status.value))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if isinstance(self.metadata, Exception):
            raise self.metadata
        return self.metadata


class Observer:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []

    @hookimpl
    def toolang_observe_task_run(self, run, runtime):
        self.seen.append((run.status.value, dict(run.metadata)))


def plane_with(tmp_path, *plugins: tuple[str, object]) -> Plane:
    runtime = make_runtime(tmp_path, plugins=plugins)
    return Plane(TaskRunController(runtime.open_store(), runtime))


def finish(plane: Plane, run_id: str, output: str = "ok") -> None:
    plane.start(run_id)
    plane.end(run_id, output=output)


def test_a_finalizer_attaches_metadata_before_the_terminal_state_is_observed(tmp_path):
    """tRPC FinalizerAttachesMetadataBeforeTerminalUpdate: the finalizer sees
    completed; its values are trimmed and merged (empty keys dropped); the initial
    metadata is kept; the observer's terminal update already has it all."""
    finalizer = Finalizer({" worktree ": " /tmp/wt-1 ", " ": "dropped"})
    observer = Observer()
    plane = plane_with(tmp_path, ("fin", finalizer), ("obs", observer))
    run_id = plane.spawn(metadata={"ticket": "T-1"})
    finish(plane, run_id)
    run = plane.finalize(run_id)
    assert finalizer.seen == [(run_id, "completed")]
    assert run.metadata == {"ticket": "T-1", "worktree": "/tmp/wt-1"}
    assert observer.seen[-1] == ("completed", {"ticket": "T-1", "worktree": "/tmp/wt-1"})
    assert plane.get(run_id).metadata == run.metadata


def test_observers_see_queued_canceling_and_the_terminal_state_in_order(tmp_path):
    """tRPC Observer: called after each persisted update (spawn, cancel, terminal)."""
    observer = Observer()
    plane = plane_with(tmp_path, ("obs", observer))
    run_id = plane.spawn()
    plane.start(run_id)
    asyncio.run(plane.controller.cancel(run_id, owner="ada"))
    plane.end(run_id, status=TurnStatus.CANCELED, outcome="canceled")
    plane.finalize(run_id)
    assert [status for status, _ in observer.seen] == ["queued", "canceling", "canceled"]


def test_a_finalizer_runs_for_a_run_canceled_before_it_started(tmp_path):
    """tRPC FinalizerRunsForQueuedCancel: the finalizer saw canceled and its metadata
    is attached to the (immediately) canceled run."""
    finalizer = Finalizer({"cleaned": "yes"})
    plane = plane_with(tmp_path, ("fin", finalizer))
    run_id = plane.spawn()
    run, changed = asyncio.run(plane.controller.cancel(run_id, owner="ada"))
    assert changed
    assert finalizer.seen == [(run_id, "canceled")]
    assert (run.status, run.metadata) == (TaskRunStatus.CANCELED, {"cleaned": "yes"})


def test_a_raising_finalizer_adds_nothing_and_the_run_still_completes(tmp_path):
    """tRPC RunFinalizerRecoversPanic: a failing finalizer gives no metadata; the run
    ends completed with its spawn metadata only."""
    plane = plane_with(tmp_path, ("fin", Finalizer(RuntimeError("cleanup exploded"))))
    run_id = plane.spawn(metadata={"ticket": "T-2"})
    finish(plane, run_id)
    run = plane.finalize(run_id)
    assert (run.status, run.metadata) == (TaskRunStatus.COMPLETED, {"ticket": "T-2"})


def test_while_finalizing_get_shows_it_wait_waits_and_cancel_changes_nothing(tmp_path):
    """tRPC CancelDuringFinalizerDoesNotOverrideExitStatus: while the finalizer blocks,
    Get shows finalizing and Wait does not return; Cancel gives changed=false; after
    release the run is completed with its metadata."""
    gate = asyncio.Event()
    finalizer = Finalizer({"done": "1"}, gate=gate)
    plane = plane_with(tmp_path, ("fin", finalizer))
    run_id = plane.spawn()
    finish(plane, run_id)

    async def scenario() -> Any:
        finalizing = asyncio.create_task(plane.controller.finalize(run_id))
        await asyncio.wait_for(finalizer.entered.wait(), 60)
        assert plane.get(run_id).status is TaskRunStatus.FINALIZING
        waiting = await plane.controller.wait(run_id, owner="ada", timeout=0.05)
        assert waiting.status is TaskRunStatus.FINALIZING
        run, changed = await plane.controller.cancel(run_id, owner="ada")
        assert (changed, run.status) == (False, TaskRunStatus.FINALIZING)
        waiter = asyncio.create_task(plane.controller.wait(run_id, owner="ada", timeout=60))
        gate.set()
        await finalizing
        return await waiter

    run = asyncio.run(scenario())
    assert (run.status, run.metadata) == (TaskRunStatus.COMPLETED, {"done": "1"})


class FailingWrites:
    """Wraps a store so that writing the final record fails ``times`` times."""

    def __init__(self, store: Any, times: int) -> None:
        self._store = store
        self.times = times

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def put_record(self, kind: str, key: str, data: Any, **kw: Any) -> Any:
        if kind == "toolang.taskrun" and self.times > 0:
            self.times -= 1
            raise OSError("disk full")
        return self._store.put_record(kind, key, data, **kw)


def test_a_failed_terminal_write_skips_observers_and_the_sweep_finalizes_later(tmp_path):
    """tRPC TerminalPersistFailureDoesNotNotifyObserver (and …WakesWaiters): storing
    the terminal state fails → no observer call, waiters are woken (they find the run
    still finalizing); the run stays on the open list, and the next sweep stores it —
    observed then."""
    observer = Observer()
    runtime = make_runtime(tmp_path, plugins=[("obs", observer)])
    store = FailingWrites(runtime.open_store(), times=1)
    plane = Plane(TaskRunController(store, runtime))  # type: ignore[arg-type]
    run_id = plane.spawn()
    finish(plane, run_id)
    woken: list[bool] = []

    async def scenario() -> Any:
        waiter = asyncio.create_task(plane.controller._changed(5))
        await asyncio.sleep(0)
        assert await plane.controller.finalize(run_id) is None
        await waiter
        woken.append(True)
        return plane.get(run_id)

    run = asyncio.run(scenario())
    assert woken == [True]
    assert run.status is TaskRunStatus.FINALIZING
    assert [s for s, _ in observer.seen] == ["queued"]
    assert asyncio.run(plane.controller.sweep()) == [run_id]
    assert plane.get(run_id).status is TaskRunStatus.COMPLETED
    assert [s for s, _ in observer.seen] == ["queued", "completed"]


def test_a_raising_observer_is_isolated(tmp_path):
    """tRPC ObserverFunc (a nil observer is safe) — here: an observer that raises is
    logged and skipped; the spawn and the other observers go on."""

    class Raising:
        @hookimpl
        def toolang_observe_task_run(self, run, runtime):
            raise RuntimeError("observer down")

    observer = Observer()
    plane = plane_with(tmp_path, ("obs", observer), ("raising", Raising()))
    run_id = plane.spawn()
    assert plane.get(run_id).status is TaskRunStatus.QUEUED
    assert [s for s, _ in observer.seen] == ["queued"]


def test_the_sweep_finalizes_runs_ended_elsewhere_and_drops_dead_spawns(tmp_path):
    """A run canceled through the store directly (another process, a cascade) is
    finalized by the sweep; an open record whose spawn died before submitting is
    dropped once it is old."""
    plane = plane_with(tmp_path)
    run_id = plane.spawn()
    plane.store.cancel(run_id, now=0, reason="elsewhere")
    assert plane.get(run_id).status is TaskRunStatus.FINALIZING
    plane.store.put_record("toolang.taskrun.open", "ghost", {"created_at": 0.0}, now=0)
    assert asyncio.run(plane.controller.sweep()) == [run_id]
    assert plane.get(run_id).status is TaskRunStatus.CANCELED
    assert plane.store.list_records("toolang.taskrun.open") == []


@pytest.mark.parametrize("status", [TurnStatus.COMPLETED, TurnStatus.FAILED])
def test_finalizing_twice_stores_one_result(tmp_path, status):
    """Two processes may finalize one run at once: the first stored result wins."""
    plane = plane_with(tmp_path)
    run_id = plane.spawn()
    plane.start(run_id)
    plane.end(run_id, status=status, output="x", error="e", outcome="error")
    first = plane.finalize(run_id)
    again = plane.finalize(run_id)
    assert first == again
    assert plane.store.get_record("toolang.taskrun", run_id).revision == 1


def test_shutdown_interrupts_a_finalizer_and_the_next_start_finalizes_the_run(tmp_path):
    """tRPC CloseCancelsFinalizerContext: stopping the runtime interrupts a finalizer
    that is still running (the stop does not hang on it) — and, unlike tRPC, the run is
    not lost: the next runtime's start-up sweep finalizes it."""
    stuck = Finalizer({"first": "never"}, gate=asyncio.Event())
    runtime = make_runtime(tmp_path, executor="echo", plugins=[("fin", stuck)])
    plane = Plane(TaskRunController(runtime.open_store(), runtime))
    run_id = plane.spawn("echo me")

    async def first_life() -> None:
        async with serving(runtime, sources=()):
            await asyncio.wait_for(stuck.entered.wait(), 10)

    asyncio.run(first_life())
    assert plane.get(run_id).status is TaskRunStatus.FINALIZING
    again = make_runtime(tmp_path, executor="echo", plugins=[("fin", Finalizer({"k": "v"}))])
    asyncio.run(again.serve(asyncio.Event(), sources=(), until_idle=True))
    run = plane.get(run_id)
    assert (run.status, run.result, run.metadata) == (
        TaskRunStatus.COMPLETED,
        "echo me",
        {"k": "v"},
    )
