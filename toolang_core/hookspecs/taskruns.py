"""Task-run hooks: attach metadata to finishing runs, and watch runs change.

Both are broadcast and isolated per plugin: one that raises (or, for a finalizer, takes
longer than a minute) is logged and skipped; the run goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, MERGE, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.taskruns.types import TaskRun


@calling_rule(MERGE)
@hookspec
def toolang_finalize_task_run(
    run: TaskRun, runtime: RuntimeView
) -> Mapping[str, str] | Awaitable[Mapping[str, str] | None] | None:
    """Attach final metadata to a task run whose turn has ended.

    Called once per run after its turn ended (completed, failed, canceled — also a run
    canceled before it started) and **before** the terminal state is stored and
    observed; meanwhile the run shows ``finalizing`` and waiters keep waiting. ``run``
    is the would-be terminal view. Return a mapping of strings (merged into the run's
    ``metadata``: keys and values trimmed, empty keys dropped), an awaitable of one, or
    ``None``. Keep it idempotent: after a crash mid-way it may run again.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_observe_task_run(run: TaskRun, runtime: RuntimeView) -> Awaitable[None] | None:
    """Watch a task run change: ``queued``, ``running``, ``canceling``, then terminal.

    Called after the change is stored, in the process that made it (the terminal state:
    where the run was finalized). Return ``None`` or an awaitable. Not called when
    storing the terminal state failed (it is retried later, and observed then).
    """
