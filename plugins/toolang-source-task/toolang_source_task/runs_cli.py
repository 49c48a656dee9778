"""``toolang tasks runs | get | wait | transcript | prune`` (and ``cancel`` of a run).

Task runs are delegated background work with an id (see toolang's docs/delegation.md),
read through the core's :class:`toolang_core.TaskRunController` — the same controller
the agents' tools use. The command line is the operator: it sees every owner's runs
unless ``--owner`` narrows it (another owner's run is then "not found", exactly as an
agent of that owner would be told).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from toolang_core.cli import CliState, ago, echo_json, pass_state, short, table, when

if TYPE_CHECKING:
    from toolang_core import TaskRun, TaskRunController

STATUSES = ("queued", "running", "finalizing", "canceling", "completed", "failed", "canceled")
TIMED_OUT = 124
"""``toolang tasks wait``'s exit code when the run is still going at ``--timeout``."""

owner_option = click.option(
    "--owner", default=None, help="Act as this owner (default: the operator, who sees all)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@contextlib.contextmanager
def controller(state: CliState, *, read_only: bool) -> Iterator[TaskRunController]:
    """A controller over the configured store (closed afterwards)."""
    from toolang_core import StoreMissing, TaskRunController, UsageError

    try:
        store = state.open_store(read_only=read_only)
    except StoreMissing:
        raise UsageError(
            "no task runs yet: nothing has been stored (start with `toolang run`)"
        ) from None
    try:
        yield TaskRunController(store, state.runtime)
    finally:
        store.close()


def show_run(run: TaskRun, as_json: bool) -> None:
    if as_json:
        echo_json(run.to_json())
        return
    fields = [
        ("id", run.id),
        ("status", run.status.value + (f" ({run.outcome})" if run.outcome else "")),
        ("agent", run.agent_name or "(default)"),
        ("owner", run.owner),
        ("parent", f"{run.parent_thread_id} (turn {run.parent_turn_id or '-'})"),
        ("thread", run.thread_id),
        ("task", short(run.task, 200)),
        ("created", when(run.created_at)),
        ("started", when(run.started_at) if run.started_at else ""),
        ("finished", when(run.finished_at) if run.finished_at else ""),
        ("timeout", f"{run.timeout_seconds:g} s" if run.timeout_seconds else ""),
        ("tools", ", ".join(run.allowed_tools) if run.allowed_tools is not None else ""),
        ("summary", run.summary),
        ("error", run.error),
    ]
    if run.awaiting_approval is not None:
        wait = run.awaiting_approval
        fields.append(("approval", f"{wait.approval_id}: {wait.tool} (toolang approvals)"))
    if run.progress is not None:
        p = run.progress
        fields.append(
            (
                "progress",
                f"{p.event_count} events, {p.tool_call_count} tool calls, {p.total_tokens} tokens",
            )
        )
    if run.usage is not None:
        fields.append(("usage", run.usage.describe()))
    for key, value in run.metadata.items():
        fields.append((f"meta.{key}", value))
    for name, value in fields:
        if value:
            click.echo(f"{name:<10} {value}")
    if run.result and run.result != run.summary:
        click.echo(f"\n{run.result}")


@click.command("runs")
@owner_option
@click.option("--parent-thread", default=None, help="Only runs started from this thread.")
@click.option("--status", type=click.Choice(STATUSES), default=None)
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@json_option
@pass_state
def runs(
    state: CliState,
    *,
    owner: str | None,
    parent_thread: str | None,
    status: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Task runs, newest first."""
    from toolang_core import TaskRunFilter, TaskRunStatus

    with controller(state, read_only=True) as plane:
        found = plane.list(
            TaskRunFilter(
                owner=owner,
                parent_thread_id=parent_thread,
                status=TaskRunStatus(status) if status else None,
                limit=limit,
            )
        )
    if as_json:
        echo_json([run.to_json() for run in found])
        return
    table(
        [
            [
                r.id,
                r.status.value,
                r.agent_name or "-",
                r.owner,
                r.parent_thread_id,
                ago(r.created_at),
                short(r.summary or r.task, 50),
            ]
            for r in found
        ],
        ["id", "status", "agent", "owner", "parent", "created", "summary / task"],
    )


@click.command("get")
@click.argument("run_id")
@owner_option
@json_option
@pass_state
def get(state: CliState, *, run_id: str, owner: str | None, as_json: bool) -> None:
    """One task run: status, summary, result, error, progress."""
    with controller(state, read_only=True) as plane:
        run = plane.get(run_id, owner=owner)
    show_run(run, as_json)


@click.command("wait")
@click.argument("run_id")
@click.option("--timeout", type=float, default=None, help="Seconds to wait at most.")
@owner_option
@json_option
@pass_state
def wait(
    state: CliState, *, run_id: str, timeout: float | None, owner: str | None, as_json: bool
) -> None:
    """Wait for a task run to finish and show it.

    Exits 0 when it completed, 1 when it failed or was canceled, 124 when it is still
    going after --timeout (it goes on). With no runtime serving the store, the run is
    run here, alone (as `toolang invoke` does).
    """
    run = asyncio.run(_wait(state, run_id, timeout, owner))
    show_run(run, as_json)
    if not run.status.is_terminal:
        raise SystemExit(TIMED_OUT)
    if run.status.value != "completed":
        raise SystemExit(1)


async def _wait(state: CliState, run_id: str, timeout: float | None, owner: str | None) -> TaskRun:
    from toolang_core import await_turn

    with controller(state, read_only=False) as plane:
        run = plane.get(run_id, owner=owner)  # not found before anything runs
        if not run.status.is_terminal and plane.store.runtime_running() is False:
            inbox = state.open_inbox()
            try:
                await await_turn(state.runtime, inbox, run_id, timeout=timeout)
            finally:
                inbox.store.close()
        return await plane.wait(run_id, owner=owner, timeout=timeout)


def cancel_run(state: CliState, run_id: str, *, reason: str) -> bool:
    """Cancel ``run_id`` if it is a task run; ``False`` when it is not one."""
    from toolang_core import TaskRunNotFound

    with controller(state, read_only=False) as plane:
        try:
            run, changed = asyncio.run(plane.cancel(run_id, owner=None, reason=reason))
        except TaskRunNotFound:
            return False
    click.echo(f"{run.id}: {run.status.value}" + ("" if changed else " (nothing to cancel)"))
    return True


@click.command("transcript")
@click.argument("run_id")
@click.option("--limit", type=int, default=40, show_default=True, help="At most 200.")
@owner_option
@json_option
@pass_state
def transcript(
    state: CliState, *, run_id: str, limit: int, owner: str | None, as_json: bool
) -> None:
    """The recent events of a task run's child thread."""
    with controller(state, read_only=True) as plane:
        found = plane.read_transcript(run_id, owner=owner, limit=limit)
    if as_json:
        echo_json(found.to_json())
        return
    click.echo(f"{found.id} on {found.child_thread_id}: {found.status.value}")
    for event in found.events:
        what = event.content or ""
        if event.tool_calls:
            what = f"{what} → asks for {', '.join(event.tool_calls)}".strip()
        if event.role == "tool":
            what = f"{event.tool_name}: {event.error or what}"
        click.echo(f"{when(event.timestamp)}  {event.author:<12} {event.role:<9} {short(what, 80)}")


@click.command("prune")
@click.option(
    "--older-than",
    "older_than_days",
    type=float,
    default=None,
    help="Days since a run finished (default: [delegation] retention_days).",
)
@owner_option
@click.option("--dry-run", is_flag=True, help="List what would be deleted.")
@pass_state
def prune(
    state: CliState, *, older_than_days: float | None, owner: str | None, dry_run: bool
) -> None:
    """Delete finished task runs older than the retention: their turn, steps, thread and
    records (the note each left in its parent thread stays)."""
    days = (
        older_than_days if older_than_days is not None else state.config.delegation.retention_days
    )
    with controller(state, read_only=False) as plane:
        pruned = plane.prune(older_than_seconds=days * 86400, owner=owner, dry_run=dry_run)
    for run_id in pruned:
        click.echo(run_id)
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {len(pruned)} task run(s) finished more than {days:g} day(s) ago", err=True)


COMMANDS = (runs, get, wait, transcript, prune)
