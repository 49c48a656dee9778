"""One serving run of a runtime, from start to stop (what :meth:`Runtime.serve
<toolang_core.Runtime.serve>` runs): the hooks left out for the run, the store held,
the dead runtimes' programs killed and their turns recovered, the inbox and the
scheduler built, the plugins started, the turn sources run and turns admitted until
stopped; then the sources stopped, the turns drained, the plugins shut down, the run
ended in the store and everything it opened closed.

The runtime keeps what outlives a run (its plugins, settings, redaction policy and
per-runtime state); a run sets the runtime's ``run_id``, ``store``, ``inbox`` and
``scheduler`` for whoever serves beside it (hooks, tools, routes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

import structlog

from toolang_core import __version__
from toolang_core.errors import describe_exception
from toolang_core.hookspecs.rules import HookFailure
from toolang_core.ids import new_id
from toolang_core.inbox.inbox import Inbox
from toolang_core.plugins.live_tools import OfferedTools
from toolang_core.plugins.mistakes import misnamed_sources
from toolang_core.runtime.acquire import take_store
from toolang_core.runtime.scheduler import Scheduler, log_recovery
from toolang_core.store.errors import StoreReplaced
from toolang_core.store.types import RunRecord
from toolang_core.tools import process_ledger

if TYPE_CHECKING:
    from toolang_core.memory.service import MemoryService
    from toolang_core.runtime.executor import TurnExecutor
    from toolang_core.runtime.runtime import Runtime
    from toolang_core.runtime.sources import RunningSources, TurnSource
    from toolang_core.runtime.upkeep_lease import UpkeepLease
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.runtime")


async def serve(
    runtime: Runtime,
    stop: asyncio.Event,
    running: RunningSources,
    *,
    sources: Collection[str] | None,
    only: Collection[str] | None,
    until_idle: bool,
    lock_wait_seconds: float,
    on_started: Callable[[], None] | None,
    one_shot: bool,
) -> None:
    """Run ``runtime`` until ``stop`` is set, its turn sources under ``running``; the
    arguments are :meth:`Runtime.serve <toolang_core.Runtime.serve>`'s.

    :raises StoreBusy: when another runtime owns an exclusive store.
    """
    runtime.one_shot = one_shot
    # First: what is built next asks which hooks are implemented, and a plugin's
    # inactive hooks (toolang_inactive_hooks) are none of them for this run.
    restore_hooks = runtime.hooks.leave_out_inactive(runtime)
    try:
        executor, turn_sources, memory, store = _run_parts(runtime, sources)
    except BaseException:
        restore_hooks()
        raise
    run_id = new_id()
    runtime.run_id, runtime.store = run_id, store
    offered: OfferedTools | None = None
    try:
        # An exclusive store refuses a second runtime; a shared one records presence.
        if not await take_store(store, run_id, stop, wait_seconds=lock_wait_seconds):
            return
        # Before any turn is recovered: kill what tools of a dead runtime left running.
        process_ledger.sweep(runtime.config.home, store, now=runtime.clock())
        _begin(runtime, store, run_id)
        runtime.inbox = Inbox(
            store, runtime.policy, clock=runtime.clock, keep_raw=True, redaction=runtime.redaction
        )
        runtime.scheduler = _scheduler(runtime, store, executor, run_id, only)
        host = runtime.host
        offered = OfferedTools(host.components, host.tool_providers, host.record)
        await _start_plugins(runtime, offered)
        if on_started is not None:
            on_started()
        prepare = getattr(executor, "prepare", None)
        if prepare is not None:
            await prepare()
        beside = await _start_up_upkeep(runtime)
        log.info(
            "runtime.started",
            run=run_id,
            store=store.location,
            sources=sorted(turn_sources),
            plugins=host.active_names,
            memory=memory.name if memory is not None else "off",
            tool_sandbox=runtime.config.tools.sandbox,
        )
        source_tasks = running.start(turn_sources, runtime.inbox, stop)
        try:
            runtime.admitting = True
            await runtime.scheduler.run(stop, until_idle=until_idle)
        except BaseException as exc:  # StoreReplaced: the store's files went away
            raise _stopping_on(runtime, store, exc)  # noqa: B904 (it is exc, or says why exc)
        finally:
            runtime.admitting = False
            running.stopped()
            stop.set()
            # The sources, and a one-shot's start-up upkeep (begun beside its turn).
            upkeep = [beside] if beside is not None else []
            await asyncio.gather(*source_tasks, *upkeep, return_exceptions=True)
            await _wind_down(runtime, store, run_id, memory)
    finally:
        if offered is not None:  # the run ends: the tools plugins offered are withdrawn
            offered.close()
        store.close()
        restore_hooks()


def _run_parts(
    runtime: Runtime, sources: Collection[str] | None
) -> tuple[TurnExecutor, dict[str, TurnSource], MemoryService | None, ExecutionStore]:
    """What a run is made of: its executor, turn sources, memory and open store."""
    executor = runtime.make_executor()
    turn_sources = runtime.turn_sources(sources)
    memory = runtime.memory  # an unknown memory plugin stops the start, visibly
    return executor, turn_sources, memory, runtime.open_store()


def _scheduler(
    runtime: Runtime,
    store: ExecutionStore,
    executor: TurnExecutor,
    run_id: str,
    only: Collection[str] | None,
) -> Scheduler:
    """The run's scheduler, over its store and the runtime's inbox (built first)."""
    assert runtime.inbox is not None
    settings = runtime.config.runtime
    hooks = runtime.hooks
    return Scheduler(
        store=store,
        policy=runtime.policy,
        executor=executor,
        run_id=run_id,
        lease_seconds=settings.lease_seconds,
        max_attempts=settings.max_attempts,
        poll_seconds=settings.poll_seconds,
        clock=runtime.clock,
        runtime=runtime,
        hooks=hooks,
        inbox=runtime.inbox,
        only=only,
        on_event=runtime.publish,
        has_subscribers=lambda: hooks.implemented("toolang_on_event"),
        on_heartbeat=runtime.upkeep,
    )


async def _start_plugins(runtime: Runtime, offered: OfferedTools) -> None:
    """The plugins' part of starting a run: their offered tools first (start-up
    hooks may look for them), then ``toolang_startup``; a failing plugin is logged
    and skipped — unless it is required."""
    await runtime.hooks.offer_tools(runtime, offered.offer_for)
    _report_start_up(runtime, await runtime.hooks.startup(runtime))


def _report_start_up(runtime: Runtime, failures: list[HookFailure]) -> None:
    """What start-up must say: a required plugin whose ``toolang_startup`` raised
    stops every tool call, and each required plugin not working is logged as an
    error naming it and why; a near-miss source name in the configuration is a
    warning."""
    host = runtime.host
    for failure in failures:
        if host.is_required(failure.plugin):
            host.mark_broken(failure.plugin, f"raised in toolang_startup: {failure.error}")
    for problem in host.required_problems():
        log.error("plugin.required_unavailable", plugin=problem.plugin, problem=problem.message)
    sources = host.components.of_kind("turn source")
    for message in misnamed_sources(runtime.config, sources):  # a typo applies to nothing
        log.warning("config.unknown_source", problem=message)


async def _start_up_upkeep(runtime: Runtime) -> asyncio.Future[None] | None:
    """The start-up upkeep, done; a one-shot's is only begun (the future to await
    before the run ends): its turn does not wait for team sweeps or pings of remote
    agents, which run beside it as a heartbeat's upkeep runs beside turns."""
    if runtime.one_shot:
        return asyncio.ensure_future(runtime.upkeep())
    await runtime.upkeep()
    return None


async def _wind_down(
    runtime: Runtime, store: ExecutionStore, run_id: str, memory: MemoryService | None
) -> None:
    """After the sources stopped: the turns drained, the plugins shut down, the run
    ended in the store, the plugins' databases and memory closed."""
    reason = runtime.stop_reason
    scheduler = runtime.scheduler
    assert scheduler is not None
    # With its files gone, nothing the turns do can be recorded: no grace.
    await scheduler.drain(
        0 if reason == "store_replaced" else runtime.config.runtime.shutdown_grace_seconds
    )
    await _shut_down(runtime, reason)
    with contextlib.suppress(StoreReplaced):  # reported, and on its way out
        if (lease := runtime.upkeep_lease()) is not None:
            _give_up(lease, runtime.clock())
        store.end_run(run_id, now=runtime.clock())
    runtime.close_plugin_databases()
    if memory is not None:
        runtime._close_memory(memory)
    log.info("runtime.stopped", run=run_id, reason=reason, admitted=scheduler.admitted)


async def _shut_down(runtime: Runtime, reason: str) -> None:
    """The plugins' shutdown hooks; then the bubblewraps waiting for tools' programs
    are killed (:mod:`toolang_core.sandbox.pool`)."""
    await runtime.hooks.shutdown(runtime, reason)
    # The pools live in that module: never imported (no tool ran a sandboxed program, as
    # in most one-shot chats), nothing waits — and importing it now would cost the exit.
    pool = sys.modules.get("toolang_core.sandbox.pool")
    if pool is not None:
        await pool.close()


def _begin(runtime: Runtime, store: ExecutionStore, run_id: str) -> None:
    """The run recorded in the store; the runs that died marked lost and their turns
    recovered."""
    now = runtime.clock()
    plugins = tuple(
        {
            "name": r.name,
            "distribution": r.distribution,
            "version": r.version,
            "status": str(r.status),
        }
        for r in runtime.host.records
    )
    store.begin_run(
        RunRecord(
            id=run_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            version=__version__,
            started_at=now,
            heartbeat_at=now,
            plugins=plugins,
        )
    )
    settings = runtime.config.runtime
    # An exclusive store has no other live runtime: every earlier run still marked
    # running died, and its turns can be recovered now rather than after its lease.
    stale_before = now if store.exclusive else now - 3 * settings.lease_seconds
    dead = store.mark_lost_runs(now=now, stale_before=stale_before, exclude=run_id)
    recovery = store.recover(
        now=now,
        max_attempts=settings.max_attempts,
        dead_runs=dead if store.exclusive else (),
    )
    log_recovery(dead, recovery)


def _stopping_on(runtime: Runtime, store: ExecutionStore, exc: BaseException) -> BaseException:
    """What the run stops with, its reason set: ``exc``, or the store's files deleted or
    replaced under the runtime when that is why ``exc`` (an SQLite "malformed" read)
    happened — a read on the old connection can meet another process's new files before
    a write's check notices them."""
    from toolang_core.store.sqlite.damage import is_corruption

    check = getattr(store, "replaced", None)
    replaced = check() if is_corruption(exc) and callable(check) else None
    if replaced is not None:
        replaced.__cause__ = exc
        exc = replaced
    runtime.stop_reason = "store_replaced" if isinstance(exc, StoreReplaced) else "error"
    return exc


def _give_up(lease: UpkeepLease, now: float) -> None:
    """Release the upkeep lease at stop; a failure only delays another runtime's
    upkeep until the lease lapses."""
    try:
        lease.release(now)
    except StoreReplaced:
        raise
    except Exception as exc:
        log.warning("upkeep.lease_release_failed", error=describe_exception(exc))
