"""Retention: deleting finished task runs (``toolang tasks prune``).

A run is pruned once it is terminal (finalized) and finished longer ago than the
retention period: its turn request and steps, its child thread, its final record and
the post-turn records of its turn. The note it left in its parent thread stays — it is
part of that conversation now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from toolang_core.execution.seam import AFTER_KIND, PROMPT_TRACE_KIND
from toolang_core.store.types import TurnFilter, TurnStatus
from toolang_core.taskruns import merge, view
from toolang_core.taskruns.types import SOURCE

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore

_PAGE: Final = 500
_ENDED: Final = (TurnStatus.COMPLETED, TurnStatus.FAILED, TurnStatus.CANCELED, TurnStatus.DROPPED)


def prunable(
    store: ExecutionStore, *, finished_before: float, owner: str | None = None
) -> list[str]:
    """Ids of finalized runs (of ``owner``, or everyone's) that finished before then."""
    found: list[str] = []
    before: int | None = None
    while True:
        page = store.list_turns(
            TurnFilter(source=SOURCE, owner=owner, status=_ENDED, limit=_PAGE, before_seq=before)
        )
        for turn in page:
            if not view.is_task_run(turn):
                continue
            final = store.get_record(view.FINAL_KIND, turn.id)
            if final is not None and float(final.data.get("finished_at") or 0) < finished_before:
                found.append(turn.id)
        if len(page) < _PAGE:
            return found
        before = page[-1].seq


def delete_runs(store: ExecutionStore, run_ids: list[str]) -> list[str]:
    """Delete the runs' turns, steps, threads and records; returns the ids deleted."""
    deleted = store.delete_turns(run_ids)
    for run_id in deleted:
        for kind in (view.FINAL_KIND, view.OPEN_KIND, AFTER_KIND, PROMPT_TRACE_KIND):
            store.delete_record(kind, run_id)
        store.delete_record(merge.NOTES_KIND, f"task:{run_id}")
    return deleted
