"""The task runs as hooks and tools reach them (:class:`TaskRuns`).

``RuntimeView.task_runs`` is typed as this protocol, which the
:class:`~toolang_core.taskruns.controller.TaskRunController` implements: the view names
the task runs' values, not the controller that calls hooks and submits turns (the type
checker's graph would otherwise lead from the view back to the hook specifications).

A leaf module: the types it names are imported for type checking only.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest
    from toolang_core.taskruns.types import (
        SpawnRequest,
        TaskRun,
        TaskRunFilter,
        TaskRunTranscript,
    )


class TaskRuns(Protocol):
    """Task runs in one execution store: spawn, read, wait for, cancel, finalize."""

    @property
    def store(self) -> ExecutionStore:
        """The execution store the runs live in."""

    async def spawn(self, request: SpawnRequest) -> TaskRun:
        """Store a new run ``queued`` (durably) and return its view.

        :raises TaskRunError: for a missing owner, parent thread or task, an invalid id
            or a full ``task`` queue. :raises TaskRunExists: for an id spawned before.
        """
        ...

    def child_by_key(self, parent_turn_id: str, key: str, *, owner: str | None) -> TaskRun | None:
        """The run ``parent_turn_id`` spawned with the idempotency key ``key``, or ``None``."""
        ...

    def get(self, run_id: str, *, owner: str | None) -> TaskRun:
        """One run (:raises TaskRunNotFound: unknown, or ``owner``'s it is not)."""
        ...

    def list(self, where: TaskRunFilter | None = None) -> builtins.list[TaskRun]:
        """The runs ``where`` selects, newest first."""
        ...

    def active(self, *, owner: str | None = None, limit: int = 20) -> builtins.list[TaskRun]:
        """Runs not finished yet, newest first."""
        ...

    def read_transcript(
        self,
        run_id: str,
        *,
        owner: str | None,
        parent_thread_id: str | None = None,
        limit: int | None = None,
    ) -> TaskRunTranscript:
        """The run's recent events (owner and parent checked)."""
        ...

    async def wait(
        self,
        run_id: str,
        *,
        owner: str | None,
        timeout: float | None = None,
        until_blocked: bool = False,
    ) -> TaskRun:
        """Wait until the run is terminal (or ``timeout`` passed) and return it."""
        ...

    async def cancel(
        self, run_id: str, *, owner: str | None, reason: str = "canceled"
    ) -> tuple[TaskRun, bool]:
        """Cancel the run; also whether this call changed anything."""
        ...

    async def finalize(self, run_id: str) -> TaskRun | None:
        """Finalize a run whose turn ended (once); ``None`` when it is not one."""
        ...

    async def sweep(self) -> builtins.list[str]:
        """Finalize every ended run nobody finalized; the ids done."""
        ...

    def prune(
        self, *, older_than_seconds: float, owner: str | None = None, dry_run: bool = False
    ) -> builtins.list[str]:
        """Delete finalized runs older than ``older_than_seconds``; the ids."""
        ...

    async def started(self, turn: TurnRequest) -> None:
        """A run's turn started: tell the observer hooks."""
        ...

    def notify(self) -> None:
        """Wake every waiter (a run may have changed)."""
        ...
