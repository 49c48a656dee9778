"""Child isolation: what a finished task run leaves in its parent thread.

A run's own turns live on its child thread and never enter the parent thread's history.
When the run is finalized, one short note — its summary, or a compact failure note —
is merged into the parent thread: kept in the record ``toolang.taskrun.notes`` of that
thread and placed into the parent's prompt history by time, written as the parent's
own (assistant) words, as Lango's root-authored notes are. The full transcript stays
readable through ``read_task_run_transcript``.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from toolang_core.store.errors import RecordConflict
from toolang_core.store.protocol import ExecutionStore
from toolang_core.taskruns.types import TaskRun, TaskRunStatus

NOTES_KIND: Final = "toolang.taskrun.notes"
MAX_NOTES: Final = 50
"""Notes kept per parent thread (the oldest go first)."""


@attrs.frozen
class MergedNote:
    """What one finished run contributes to its parent thread."""

    run_id: str
    agent: str
    status: str
    summary: str
    finished_at: float
    outcome: str | None = None

    @classmethod
    def of(cls, run: TaskRun) -> MergedNote:
        return cls(
            run_id=run.id,
            agent=run.agent_name or "default agent",
            status=run.status.value,
            summary=run.summary,
            finished_at=run.finished_at if run.finished_at is not None else run.updated_at,
            outcome=run.outcome,
        )

    def text(self) -> str:
        """The note as the parent's history shows it."""
        head = f"[task run {self.run_id} · {self.agent} · {self.status}"
        if self.status == TaskRunStatus.COMPLETED:
            return f"{head}] {self.summary}"
        if self.status == TaskRunStatus.CANCELED:
            return f"{head}] it was stopped before it finished"
        return f"{head} ({self.outcome or 'error'})] {self.summary}"

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def add_note(store: ExecutionStore, thread_id: str, note: MergedNote, *, now: float) -> None:
    """Merge ``note`` into ``thread_id`` (replacing an earlier note of the same run)."""
    for _ in range(10):  # optimistic: another run of the thread may finish at once
        record = store.get_record(NOTES_KIND, thread_id)
        notes = [n for n in (record.data["notes"] if record else []) if n["run_id"] != note.run_id]
        notes.append(note.to_json())
        notes.sort(key=lambda n: n["finished_at"])
        try:
            store.put_record(
                NOTES_KIND,
                thread_id,
                {"notes": notes[-MAX_NOTES:]},
                now=now,
                expect_revision=record.revision if record else 0,
            )
            return
        except RecordConflict:
            continue
    raise RecordConflict(f"thread {thread_id!r}: its task-run notes kept changing; note lost")


def notes_of(store: ExecutionStore, thread_id: str) -> list[MergedNote]:
    """The notes merged into ``thread_id``, oldest first."""
    record = store.get_record(NOTES_KIND, thread_id)
    if record is None:
        return []
    return [MergedNote(**n) for n in record.data.get("notes", ())]
