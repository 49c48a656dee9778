"""What a serving runtime looks after at start-up and after every scheduler heartbeat:
task runs whose turn ended unnoticed, approval requests and questions whose turn ended, then the
plugins' own upkeep (``toolang_upkeep``: e.g. toolang-agent-pool pings the remote agents
when due, toolang-teams replaces unhealthy members of active teams).

Each part logs its failure and never raises: one failing part does not stop the others
or the runtime. Imports are made on use (start-up and ``toolang --help`` stay cheap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from toolang_core.errors import describe_exception

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime

log = structlog.get_logger("toolang.runtime")


async def upkeep(runtime: CoreRuntime) -> None:
    """Every part below, in this order."""
    await sweep_task_runs(runtime)
    sweep_approvals(runtime)
    sweep_questions(runtime)
    await plugins_upkeep(runtime)


async def sweep_task_runs(runtime: CoreRuntime) -> None:
    """Finalize task runs whose turn ended unnoticed."""
    try:
        await runtime.task_runs.sweep()
    except Exception as exc:
        log.warning("taskrun.sweep_failed", error=describe_exception(exc))


def sweep_approvals(runtime: CoreRuntime) -> None:
    """Expire pending approval requests whose turn has ended."""
    from toolang_core.tools.approvals import ApprovalBook

    if runtime.store is None:
        return
    try:
        expired = ApprovalBook(runtime.store, clock=runtime.clock).expire_ended()
    except Exception as exc:
        log.warning("approval.sweep_failed", error=describe_exception(exc))
        return
    if expired:
        log.info("approval.expired", approvals=[a.id for a in expired])


def sweep_questions(runtime: CoreRuntime) -> None:
    """Expire open questions (``ask_person``) whose turn has ended."""
    from toolang_core.questions.book import QuestionBook

    if runtime.store is None:
        return
    try:
        expired = QuestionBook(runtime.store, clock=runtime.clock).expire_ended()
    except Exception as exc:
        log.warning("question.sweep_failed", error=describe_exception(exc))
        return
    if expired:
        log.info("question.expired", questions=[q.id for q in expired])


async def plugins_upkeep(runtime: CoreRuntime) -> None:
    """Every ``toolang_upkeep`` plugin (each isolated: a failure is logged by the hook's
    rule and the others still run)."""
    if runtime.store is None:
        return
    await runtime.hooks.upkeep(runtime)
