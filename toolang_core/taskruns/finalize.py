"""Finalizing task runs: from "its turn ended" to a terminal run.

When a run's turn ends — completed, failed, timed out, canceled while queued or while
running, abandoned after crashes — the run is ``finalizing`` until this has happened,
in this order:

1. the ``toolang_finalize_task_run`` hooks attach metadata to the would-be terminal view;
2. the terminal view is stored as the run's final record (the first writer wins, so two
   processes finalizing one run store one result);
3. its note is merged into the parent thread (:mod:`toolang_core.taskruns.merge`);
4. the run leaves the open list, observers see it, waiters wake.

If storing the final record fails, waiters are woken and observers are not called; the
run stays on the open list and the next sweep finalizes it. The serving runtime
finalizes its own runs right after their turn is stored and sweeps the open list at
start-up and every heartbeat, which catches runs ended by a cancel in another process,
by a cascade, or by a crash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.store.errors import RecordConflict
from toolang_core.taskruns import merge, view
from toolang_core.taskruns.types import TaskRun, TaskRunStatus

if TYPE_CHECKING:
    from toolang_core.taskruns.controller import TaskRunController

log = structlog.get_logger("toolang.taskruns")

ORPHAN_SECONDS: Final = 60.0
"""An open record without a turn request this old was left by a spawn that died."""


async def finalize(controller: TaskRunController, run_id: str) -> TaskRun | None:
    """Finalize ``run_id`` if its turn ended; return its terminal view (or ``None``)."""
    store = controller.store
    turn = store.get(run_id)
    if turn is None or not view.is_task_run(turn) or not turn.status.is_terminal:
        return None
    final = store.get_record(view.FINAL_KIND, run_id)
    observe = final is None
    if final is None:
        if run_id in controller.finalizing:
            return None  # this process is at it already
        controller.finalizing.add(run_id)
        try:
            steps = store.steps(run_id)
            data = view.final_data(turn, steps)
            would_be = attrs.evolve(
                view.build(turn, None, steps), status=TaskRunStatus(data["status"])
            )
            extra, _failures = await controller.runtime.hooks.finalize_task_run(
                would_be, controller.runtime
            )
            data["metadata"] = {**data["metadata"], **extra}
            try:
                final = store.put_record(
                    view.FINAL_KIND, run_id, data, now=controller.clock(), expect_revision=0
                )
            except RecordConflict:  # another process finalized it meanwhile
                final = store.get_record(view.FINAL_KIND, run_id)
                observe = False
        except Exception as exc:
            log.warning("taskrun.finalize_failed", run=run_id, error=describe_exception(exc))
            controller.notify()
            return None
        finally:
            controller.finalizing.discard(run_id)
    run = view.build(turn, final)
    parent_thread = run.parent_thread_id
    try:
        if parent_thread:
            merge.add_note(store, parent_thread, merge.MergedNote.of(run), now=controller.clock())
        store.delete_record(view.OPEN_KIND, run_id)
    except Exception as exc:  # the run is final; the sweep merges the note later
        log.warning("taskrun.merge_failed", run=run_id, error=describe_exception(exc))
    if observe:
        await controller.observe(run)
    controller.notify()
    return run


async def sweep(controller: TaskRunController) -> list[str]:
    """Finalize every open run whose turn ended; drop open records of spawns that died
    before submitting. Returns the ids finalized."""
    store = controller.store
    done: list[str] = []
    for record in store.list_records(view.OPEN_KIND):
        turn = store.get(record.key)
        if turn is None:
            if controller.clock() - float(record.data.get("created_at", 0)) > ORPHAN_SECONDS:
                store.delete_record(view.OPEN_KIND, record.key)
            continue
        if turn.status.is_terminal and await finalize(controller, record.key) is not None:
            done.append(record.key)
    if done:
        log.info("taskrun.swept", finalized=len(done))
    return done
