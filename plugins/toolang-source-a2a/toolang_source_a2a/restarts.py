"""Tasks a restart interrupted, whose caller has stopped waiting: not run again.

A turn this runtime was running when it died (or stopped) is requeued by recovery and
would run again. For an A2A task that is right only while its caller still follows
it. A toolang caller does not follow a task across the serving runtime's restart: when
the connection is lost it gives up on the task and tries to cancel it — which cannot
reach a runtime that is down. Its message says so (metadata
``toolang.resume_after_restart: false``), and at start-up, before the first turn is
admitted, such a task is ended ``canceled`` instead of run again (``a2a.not_resumed``).
A task of a caller that does not say so (any other A2A client) is resumed as before.

On a shared store (PostgreSQL) a dead node's turns are also taken back by the other
nodes while they run (their lease expires); this check is made at each runtime's
start-up only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import structlog

from toolang_core import TurnFilter, TurnStatus

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Message

    from toolang_core import Runtime, TurnRequest

log = structlog.get_logger("toolang.a2a")

RESUME_FLAG: Final = "toolang.resume_after_restart"
"""Message metadata: ``false`` means the caller stops following the task if this
runtime goes away while running it, so it must not be run again after a restart."""
META_KEY: Final = "a2a_resume_after_restart"
"""Where the caller's ``false`` is kept: the chat turn's ``meta``, or the task run's
metadata (as the string ``"false"``)."""
REASON: Final = (
    "interrupted by a restart of this runtime; its caller stopped following it when the "
    "connection was lost (toolang.resume_after_restart = false), so it is not run again"
)
_PAGE: Final = 200


def not_resumed(message: Message) -> bool:
    """Whether ``message`` says its task must not be run again after a restart."""
    fields = message.metadata.fields
    return (
        RESUME_FLAG in fields
        and fields[RESUME_FLAG].WhichOneof("kind") == "bool_value"
        and (not fields[RESUME_FLAG].bool_value)
    )


def _abandoned(turn: TurnRequest) -> bool:
    """A queued turn that ran before (recovery handed it back) and whose caller does
    not follow it across a restart."""
    if turn.attempt < 1:
        return False
    if turn.meta.get(META_KEY) is False:
        return True
    run = turn.meta.get("taskrun")
    metadata = run.get("metadata") if isinstance(run, dict) else None
    return isinstance(metadata, dict) and metadata.get(META_KEY) == "false"


async def cancel_abandoned(runtime: Runtime) -> list[str]:
    """End ``canceled`` every A2A task of this store that a restart interrupted and
    whose caller has stopped waiting (see the module docstring); the ids."""
    store, inbox = runtime.store, getattr(runtime, "inbox", None)
    if store is None or inbox is None:
        return []
    found: list[TurnRequest] = []
    before: int | None = None
    while True:
        page = store.list_turns(
            TurnFilter(status=(TurnStatus.QUEUED,), limit=_PAGE, before_seq=before)
        )
        found += [t for t in page if _abandoned(t)]
        if len(page) < _PAGE:
            break
        before = page[-1].seq
    for turn in found:
        if "taskrun" in turn.meta:  # a task run: canceled and finalized as one
            await runtime.task_runs.cancel(turn.id, owner=None, reason=REASON)
        else:
            inbox.cancel(turn.id, reason=REASON)
    if found:
        log.warning("a2a.not_resumed", tasks=[t.id for t in found], reason=REASON)
    return [t.id for t in found]
