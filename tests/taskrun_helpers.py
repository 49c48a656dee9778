"""Helpers for the delegation tests: the test kit's delegation runtimes
(:mod:`toolang_core.testing.delegation`: agents, tools, one scripted model, re-exported
here) and :class:`Plane`, a controller driven by hand.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from toolang_core import (
    SpawnRequest,
    StepRecord,
    TaskRunController,
    TurnRequest,
    TurnStatus,
)
from toolang_core.testing.delegation import (
    CONTROL,
    DEFAULT_AGENTS,
    Agents,
    Cast,
    make_config,
    make_runtime,
    release,
    started,
    with_delegation,
)

__all__ = [
    "CONTROL",
    "DEFAULT_AGENTS",
    "RUN",
    "Agents",
    "Cast",
    "Plane",
    "make_config",
    "make_runtime",
    "release",
    "started",
    "with_delegation",
]


RUN = "run-a"
"""The run id the by-hand runtime of :class:`Plane` claims turns as."""


class Plane:
    """A controller plus the store moves a runtime would make for a run's turn."""

    def __init__(self, controller: TaskRunController) -> None:
        self.controller = controller
        self.store = controller.store

    def spawn(self, task: str = "do it", **kw: Any) -> str:
        kw.setdefault("owner", "ada")
        kw.setdefault("parent_thread_id", "chat:1")
        return asyncio.run(self.controller.spawn(SpawnRequest(task=task, **kw))).id

    def start(self, run_id: str) -> TurnRequest:
        (turn,) = self.store.claim(
            run_id=RUN, limit=1, now=time.time(), lease_seconds=30, caps={}, only=[run_id]
        )
        return turn

    def step(self, run_id: str, kind: str, data: dict[str, Any], **kw: Any) -> None:
        now = time.time()
        step = StepRecord(run_id, 0, 1, kind, kw.pop("status", "completed"), now, now, data, **kw)
        assert self.store.record_step(step, run_id=RUN) is not None

    def end(self, run_id: str, status: TurnStatus = TurnStatus.COMPLETED, **kw: Any) -> None:
        turn = self.store.get(run_id)
        assert turn is not None
        assert self.store.finish(
            run_id, run_id=RUN, attempt=turn.attempt, status=status, now=time.time(), **kw
        )

    def finalize(self, run_id: str) -> Any:
        return asyncio.run(self.controller.finalize(run_id))

    def get(self, run_id: str, owner: str | None = "ada") -> Any:
        return self.controller.get(run_id, owner=owner)
