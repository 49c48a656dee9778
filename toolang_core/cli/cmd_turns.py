"""``toolang submit | cancel | status | turns … | threads …``: the inbox and its history."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, cast

import click

from toolang_core.cli.cmd_history import threads_fork, turns_replay
from toolang_core.cli.output import ago, echo_json, short, table, when
from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from collections.abc import Iterable

    from toolang_core.redaction import RedactionPolicy
    from toolang_core.store.types import StepRecord, Strategy, TurnRequest

STATUSES = [
    "queued",
    "running",
    "awaiting_approval",
    "canceling",
    "completed",
    "failed",
    "canceled",
    "dropped",
    "steered",
]


def _parse_when(value: str | None) -> float | None:
    """``+30`` (seconds from now), a POSIX time, or an ISO 8601 date-time."""
    if value is None:
        return None
    from datetime import datetime

    from toolang_core.errors import UsageError

    try:
        if value.startswith("+"):
            return time.time() + float(value[1:])
        return float(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise UsageError(
            f"--not-before {value!r}: expected +SECONDS, a POSIX time or an ISO 8601 date-time"
        ) from None


SUBMIT_SOURCE: Final = "chat"
"""What ``toolang submit`` submits as unless told otherwise: a person talking to an agent
(its group's defaults come from toolang-source-chat when installed)."""


@click.command()
@click.argument("text")
@click.option("--thread", "thread_id", required=True, help="The thread, e.g. chat:cli.")
@click.option("--source", default=SUBMIT_SOURCE, show_default=True, help="The turn source.")
@click.option("--group", default=None, help="The thread group (default: the source).")
@click.option("--priority", type=int, default=None, help="Override the group's priority.")
@click.option(
    "--strategy",
    type=click.Choice(["enqueue", "reject", "coalesce", "interrupt", "steer"]),
    default=None,
)
@click.option("--agent", default=None)
@click.option("--dedupe-key", default=None)
@click.option("--not-before", default=None, help="+SECONDS, POSIX time or ISO date-time.")
@click.option("--timeout", "timeout_seconds", type=float, default=None)
@click.option("--parent", default=None)
@click.option("--id", "turn_id", default=None, help="A caller-chosen id (idempotent submit).")
@click.option(
    "--owner",
    envvar="TOOLANG_OWNER",
    default=None,
    help="Whose request this is (default: $TOOLANG_OWNER, else none: the operator's).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="This turn's token limit (lower than [limits] max_tokens_per_turn only).",
)
@click.option(
    "--max-model-calls",
    type=click.IntRange(min=1),
    default=None,
    help="This turn's model-call limit (lower than [limits] max_model_calls only).",
)
@pass_state
def submit(
    state: CliState,
    *,
    text: str,
    thread_id: str,
    source: str,
    group: str | None,
    priority: int | None,
    strategy: str | None,
    agent: str | None,
    dedupe_key: str | None,
    not_before: str | None,
    timeout_seconds: float | None,
    parent: str | None,
    turn_id: str | None,
    owner: str | None,
    max_tokens: int | None,
    max_model_calls: int | None,
) -> None:
    """Put a turn request into the inbox (durably) and print its id as JSON.

    A thread belongs to the owner of its first request: a request of another owner
    is refused (exit 5).
    """
    from toolang_core.ids import is_valid_id
    from toolang_core.inbox.request_checks import InvalidRequest
    from toolang_core.spend import request_limits
    from toolang_core.store.types import NewTurnRequest

    _check_source(state, source)
    inbox = state.open_inbox()
    try:
        if parent is not None and is_valid_id(parent) and inbox.store.get(parent) is None:
            raise InvalidRequest(f"parent {parent!r}: no turn request has this id")
        result = inbox.submit(
            NewTurnRequest(
                source=source,
                thread_id=thread_id,
                input=text,
                thread_group=group,
                priority=priority,
                strategy=cast("Strategy | None", strategy),
                agent=agent,
                dedupe_key=dedupe_key,
                not_before=_parse_when(not_before),
                timeout_seconds=timeout_seconds,
                parent=parent,
                id=turn_id,
                channel="cli",
                owner=owner or None,
                meta=request_limits(max_tokens, max_model_calls),
            )
        )
    finally:
        inbox.store.close()
    echo_json(result)


def _check_source(state: CliState, source: str) -> None:
    """Refuse a source no installed plugin offers and no configured group names (the
    command's own default, :data:`SUBMIT_SOURCE`, is always accepted)."""
    from toolang_core.errors import UsageError

    runtime = state.runtime
    known = {
        SUBMIT_SOURCE,
        *runtime.host.components.of_kind("turn source"),
        *runtime.policy.groups,
    }
    if source not in known:
        raise UsageError(
            f"--source {source!r}: expected one of {', '.join(sorted(known))} "
            "(an installed turn source or a configured group)"
        )


@click.command()
@click.argument("turn_id")
@click.option("--reason", default="canceled from the command line")
@pass_state
def cancel(state: CliState, turn_id: str, reason: str) -> None:
    """Cancel a turn request (and the requests it spawned), from any process.

    A queued request is canceled at once; a running one moves to canceling and ends
    canceled as soon as its runtime stops it.
    """
    import asyncio

    from toolang_core.store.types import TurnStatus
    from toolang_core.taskruns.controller import TaskRunController

    inbox = state.open_inbox()
    try:
        result = inbox.cancel(turn_id, reason=reason)
        # Task runs canceled before they started end here, at once (finalizers run);
        # running ones end canceled when their runtime stops them.
        runs = TaskRunController(inbox.store, state.runtime)
        for other, status in result.changed.items():
            if status is TurnStatus.CANCELED:
                asyncio.run(runs.finalize(other))
    finally:
        inbox.store.close()
    click.echo(f"{turn_id}: {result.status.value}")
    for other, status in result.changed.items():
        if other != turn_id:
            click.echo(f"  {other}: {status.value} (descendant)")


@click.command()
@click.option("--json", "as_json", is_flag=True)
@pass_state
def status(state: CliState, as_json: bool) -> None:
    """Is a runtime running, what is queued, running and failing per group, and which
    task runs are not finished yet."""
    from toolang_core.cli.usage_view import UsageToday
    from toolang_core.store.types import TurnFilter, TurnStatus
    from toolang_core.taskruns.controller import TaskRunController

    store = state.open_store(read_only=True)
    try:
        running = getattr(store, "runtime_running", lambda: None)()
        runs = store.list_runs(limit=1)
        counts = store.counts()
        failures = store.list_turns(TurnFilter(status=(TurnStatus.FAILED,), limit=5))
        task_runs = TaskRunController(store, state.runtime).active(limit=10)
        usage = UsageToday.read(store)
    finally:
        store.close()
    groups: dict[str, dict[str, int]] = {}
    for c in counts:
        groups.setdefault(c.thread_group, {})[c.status.value] = c.count
    if as_json:
        echo_json(
            {
                "store": store.location,
                "runtime_running": running,
                "last_run": runs[0] if runs else None,
                "groups": groups,
                "task_runs": [run.to_json() for run in task_runs],
                "recent_failures": failures,
                "usage_today": usage.to_json(state.config.limits),
            }
        )
        return
    click.echo(f"store     {store.location}")
    if runs:
        run = runs[0]
        alive = {True: "running", False: "not running", None: run.status}[running]
        click.echo(
            f"runtime   {alive} (last run {run.id}, pid {run.pid} on {run.host}, "
            f"started {ago(run.started_at)}, heartbeat {ago(run.heartbeat_at)})"
        )
    else:
        click.echo("runtime   never ran against this store")
    if groups:
        shown = [
            "queued",
            "running",
            "awaiting_approval",
            "canceling",
            "completed",
            "failed",
            "canceled",
        ]
        table(
            [[g, *(str(groups[g].get(s, 0)) for s in shown)] for g in sorted(groups)],
            ["group", *shown],
        )
    if task_runs:
        click.echo(f"task runs {len(task_runs)} not finished (toolang tasks runs)")
        for task_run in task_runs:
            blocked = " awaiting approval" if task_run.awaiting_approval else ""
            click.echo(
                f"  {task_run.id} {task_run.status.value}{blocked} "
                f"{task_run.agent_name or '(default)'} for {task_run.parent_thread_id} "
                f"{ago(task_run.created_at)}: {short(task_run.task, 50)}"
            )
    usage.show(state.config.limits)
    for turn in failures:
        click.echo(
            f"failed    {turn.id} {turn.thread_id} {ago(turn.finished_at)}: {short(turn.error, 70)}"
        )


@click.group()
def turns() -> None:
    """Turn requests and their outcomes."""


@turns.command("list")
@click.option("--thread", "thread_id", default=None)
@click.option("--status", "statuses", multiple=True, type=click.Choice(STATUSES))
@click.option("--source", default=None)
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def turns_list(
    state: CliState,
    *,
    thread_id: str | None,
    statuses: tuple[str, ...],
    source: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """The newest turn requests first."""
    from toolang_core.store.types import TurnFilter, TurnStatus

    store = state.open_store(read_only=True)
    try:
        found = store.list_turns(
            TurnFilter(
                thread_id=thread_id,
                source=source,
                limit=limit,
                status=tuple(TurnStatus(s) for s in statuses),
            )
        )
    finally:
        store.close()
    found = [shown(t, state.runtime.redaction) for t in found]
    if as_json:
        echo_json(found)
        return
    table(
        [
            [
                t.id,
                t.status.value,
                t.thread_id,
                str(t.attempt),
                when(t.created_at),
                short(t.output or t.error or t.input, 50),
            ]
            for t in found
        ],
        ["id", "status", "thread", "try", "created", "output / error / input"],
    )


@turns.command("show")
@click.argument("turn_id")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def turns_show(state: CliState, turn_id: str, as_json: bool) -> None:
    """One turn request: its fields, outcome and steps."""
    from toolang_core.store.errors import TurnNotFound

    store = state.open_store(read_only=True)
    try:
        turn = store.get(turn_id)
        if turn is None:
            raise TurnNotFound(f"no turn request with id {turn_id!r}")
        policy = state.runtime.redaction
        turn, steps = shown(turn, policy), shown_steps(store.steps(turn_id), policy)
    finally:
        store.close()
    if as_json:
        echo_json({"turn": turn, "steps": steps})
        return
    fields = [
        ("id", turn.id),
        ("status", turn.status.value),
        ("outcome", turn.outcome),
        ("thread", f"{turn.thread_id} (group {turn.thread_group})"),
        ("source", turn.source),
        ("priority", str(turn.priority)),
        ("attempt", str(turn.attempt)),
        ("created", when(turn.created_at)),
        ("started", when(turn.started_at)),
        ("finished", when(turn.finished_at)),
        ("parent", turn.parent),
        ("agent", turn.agent),
        ("input", turn.input),
        ("output", turn.output),
        ("error", turn.error),
    ]
    for name, value in fields:
        if value:
            click.echo(f"{name:<10}{value}")
    for step in steps:
        click.echo(
            f"step {step.seq:<3} {step.kind:<14} {step.status:<9} try {step.attempt} "
            f"{(step.finished_at - step.started_at) * 1000:.1f} ms"
            + (f"  {short(step.error, 60)}" if step.error else "")
        )


@turns.command("trace")
@click.argument("turn_id")
@click.option("--json", "as_json", is_flag=True, help="The turn and its steps as JSON.")
@pass_state
def turns_trace(state: CliState, turn_id: str, as_json: bool) -> None:
    """The run trace of one turn: a timeline of its steps, each tool call with the
    verdict of every stage of the tool-hook chain."""
    from toolang_core.runtime.after_turn import AFTER_KIND
    from toolang_core.store.errors import TurnNotFound
    from toolang_core.turn.timeline import in_doubt, timeline

    store = state.open_store(read_only=True)
    try:
        turn = store.get(turn_id)
        if turn is None:
            raise TurnNotFound(f"no turn request with id {turn_id!r} (see `toolang turns list`)")
        policy = state.runtime.redaction
        turn, steps = shown(turn, policy), shown_steps(store.steps(turn_id), policy)
        after = store.get_record(AFTER_KIND, turn_id)
    finally:
        store.close()
    after_data = policy.value(dict(after.data)) if after is not None else None
    if as_json:
        echo_json({"turn": turn, "steps": steps, "after": after_data, "in_doubt": in_doubt(steps)})
        return
    for line in timeline(turn, steps, after_data):
        click.echo(line)


@click.group()
def threads() -> None:
    """Threads: the durable units of conversation and work."""


@threads.command("list")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def threads_list(state: CliState, limit: int, as_json: bool) -> None:
    """Threads, most recently active first."""
    store = state.open_store(read_only=True)
    try:
        found = store.list_threads(limit=limit)
    finally:
        store.close()
    if as_json:
        echo_json(found)
        return
    table(
        [
            [
                t.thread_id,
                t.thread_group,
                str(t.turns),
                t.running_id or "-",
                t.head_id or "-",
                ago(t.updated_at),
            ]
            for t in found
        ],
        ["thread", "group", "turns", "running", "next", "active"],
    )


@threads.command("show")
@click.argument("thread_id")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@pass_state
def threads_show(state: CliState, thread_id: str, limit: int) -> None:
    """The turns of one thread, oldest first (a forked thread's inherited ones too)."""
    from toolang_core.store.errors import TurnNotFound
    from toolang_core.store.forks import fork_of, visible_turns

    store = state.open_store(read_only=True)
    try:
        info = store.thread(thread_id)
        if info is None:
            raise TurnNotFound(f"no thread {thread_id!r}")
        fork = fork_of(store, thread_id)
        found = [
            shown(t, state.runtime.redaction) for t in visible_turns(store, thread_id, limit=limit)
        ]
    finally:
        store.close()
    click.echo(f"{info.thread_id} (group {info.thread_group}, {info.turns} turn(s) run)")
    if fork is not None:
        click.echo(
            f"  {fork.kind} of {fork.origin} at turn {fork.turn_id}; earlier turns by reference"
        )
    for turn in found:
        inherited = f"  (from {turn.thread_id})" if turn.thread_id != thread_id else ""
        click.echo(
            f"  [{turn.status.value}] {when(turn.created_at)} > {short(turn.input, 70)}{inherited}"
        )
        if turn.output or turn.error:
            click.echo(
                f"  {'':>{len(turn.status.value) + 2}} {when(turn.finished_at)} < "
                f"{short(turn.output or turn.error, 70)}"
            )


turns.add_command(turns_replay)
threads.add_command(threads_fork)


# What the views show passes the runtime's redaction policy too: rows stored before it
# applied, or by another writer of the store, are masked on the way out.


def shown(turn: TurnRequest, policy: RedactionPolicy) -> TurnRequest:
    """``turn`` with its input, output and error masked by ``policy``."""
    import attrs

    redact_text = policy.text
    return attrs.evolve(
        turn,
        input=redact_text(turn.input),
        output=None if turn.output is None else redact_text(turn.output),
        error=None if turn.error is None else redact_text(turn.error),
    )


def shown_steps(steps: Iterable[StepRecord], policy: RedactionPolicy) -> list[StepRecord]:
    """``steps`` with their data and errors masked by ``policy``."""
    import attrs

    return [
        attrs.evolve(
            step,
            data=policy.value(dict(step.data)),
            error=None if step.error is None else policy.text(step.error),
        )
        for step in steps
    ]
