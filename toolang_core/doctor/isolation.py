"""``toolang doctor``'s isolation check: paths through which one owner's data could
reach another's, and the turns that failed recently (their traces).

A thread, its memory and its runs belong to an owner (DESIGN §11); the store refuses a
turn on another owner's thread, and the memory service drops another owner's entries.
What is left are paths around those guards, found in the configuration, the tools as
registered, the agents and the store:

- programs tools start run outside the OS sandbox (``[tools] sandbox = "off"``): any of
  them reads every owner's files and the store;
- a tool that needs memory but takes no call context: it cannot know whose turn called
  it, so whatever it keeps or reads is every owner's at once;
- a remote agent: every owner's delegated work reaches it under this runtime's one
  credential, so on its side they share one owner — its memory and threads;
- a delegated turn whose owner is not its parent's: work handed from one owner's turn
  ran as another's.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from toolang_core.doctor.check import Check
from toolang_core.doctor.context import DoctorContext, runtime_for
from toolang_core.errors import ConfigError

if TYPE_CHECKING:
    from toolang_core.runtime import Runtime
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest

RECENT_TURNS: Final = 500
"""How many of the newest turns the store checks read (a bound on the doctor's work)."""
FAILED_WINDOW: Final = 86_400.0
"""What counts as a recent failure: the last 24 hours."""
SHOWN: Final = 10


def check_isolation(ctx: DoctorContext) -> Iterator[Check]:
    """Every path found (``fail`` for the ones that leak today, ``warn`` for the ones
    a configuration opens on purpose), or one ``ok`` saying what was checked."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    found = [*_sandbox(runtime), *_context_free_tools(runtime), *_remote_agents(runtime)]
    store = _open(runtime)
    if store is not None:
        try:
            found.extend(_crossed_delegations(store))
        finally:
            store.close()
    yield from found
    if not found:
        yield Check(
            "isolation",
            "ok",
            "no path between owners found (sandbox, tools, remote agents, delegated turns)",
        )


def check_failed_traces(ctx: DoctorContext) -> Iterator[Check]:
    """The turns that failed in the last 24 hours, counted by outcome (``loop_detected``,
    ``timeout``, ``max_steps``, …), each with the command that shows its trace."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    store = _open(runtime)
    if store is None:
        return
    from toolang_core.store.types import TurnFilter, TurnStatus

    try:
        since = time.time() - FAILED_WINDOW
        failed = [
            t
            for t in store.list_turns(TurnFilter(status=(TurnStatus.FAILED,), limit=200))
            if t.finished_at is not None and t.finished_at > since
        ]
    except Exception:  # check_store reports an unreadable store
        return
    finally:
        store.close()
    if not failed:
        yield Check("traces", "ok", "no turn failed in the last 24 hours")
        return
    counts = Counter(t.outcome or "error" for t in failed)
    by_outcome = ", ".join(f"{outcome} {n}" for outcome, n in counts.most_common())
    yield Check(
        "traces",
        "warn",
        f"{len(failed)} turn(s) failed in the last 24 hours ({by_outcome}); their traces:",
        tuple(
            f"toolang turns trace {t.id}  # {t.outcome or 'error'} on {t.thread_id}: "
            f"{(t.error or '')[:80]}"
            for t in failed[:SHOWN]
        ),
    )


def _open(runtime: Runtime) -> ExecutionStore | None:
    from toolang_core.store.errors import StoreError

    try:
        return runtime.open_store(read_only=True)
    except (StoreError, ConfigError):  # missing or unreadable: check_store says which
        return None


def _sandbox(runtime: Runtime) -> Iterator[Check]:
    if runtime.config.tools.sandbox == "off":
        yield Check(
            "isolation",
            "warn",
            'programs tools start run outside the sandbox ([tools] sandbox = "off"): any '
            "of them can read every owner's files and the store",
            ('set [tools] sandbox = "required" (see docs/security.md)',),
        )


def _context_free_tools(runtime: Runtime) -> Iterator[Check]:
    tools = runtime.host.components.tools
    blind = [
        f"{name} (plugin {registration.plugin})"
        for name, registration in sorted(tools.items())
        if "memory" in registration.tool.requires and not registration.tool.takes_context
    ]
    if blind:
        yield Check(
            "isolation",
            "fail",
            f"{len(blind)} tool(s) use memory without the call's context: they cannot tell "
            "whose turn called them, so every owner shares what they keep",
            (
                *blind,
                "give the tool a `context: ToolCallContext` parameter and scope by "
                "context.turn.owner (as memory_agent_* do)",
            ),
        )


def _remote_agents(runtime: Runtime) -> Iterator[Check]:
    try:
        remote = [d for d in runtime.agents.registry.active() if d.source == "remote"]
    except Exception:  # a registry that does not load: check_agents says why
        return
    if remote:
        yield Check(
            "isolation",
            "warn",
            f"{len(remote)} remote agent(s) receive every owner's delegated work under this "
            "runtime's one credential: on their side those owners share one owner (its "
            "memory and threads)",
            tuple(f"{d.name} ({d.origin})" for d in remote),
        )


def _crossed_delegations(store: ExecutionStore) -> Iterator[Check]:
    from toolang_core.store.types import TurnFilter

    try:
        turns = store.list_turns(TurnFilter(limit=RECENT_TURNS))
        parents = {p for p in {t.parent for t in turns} if p is not None}
        owners = {}
        for parent_id in parents:
            parent = store.get(parent_id)
            if parent is not None:
                owners[parent_id] = _work_of(parent)
    except Exception:  # check_store reports an unreadable store
        return
    crossed = [t for t in turns if t.parent in owners and owners[t.parent] != _work_of(t)]
    if crossed:
        yield Check(
            "isolation",
            "fail",
            f"{len(crossed)} delegated turn(s) ran as another owner than the turn that "
            "handed them over",
            tuple(
                f"{t.id} on {t.thread_id} ({t.source}): {_work_of(t)!r}'s, its parent "
                f"{t.parent} {owners[t.parent or '']!r}'s"
                for t in crossed[:SHOWN]
            ),
        )


def _work_of(turn: TurnRequest) -> str:
    """Whose work a turn is, as its tools see it (``RunningTurn.owner``): its owner,
    else its sender — what the runs it spawns are given."""
    return turn.owner or turn.sender
