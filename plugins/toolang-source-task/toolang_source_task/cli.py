"""``toolang tasks``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_source_task.tasks import TaskBook


def _book(state: CliState) -> TaskBook:
    from toolang_source_task.tasks import TaskBook

    return TaskBook(state.open_store(read_only=False))


def _read_body(body: str | None) -> str | None:
    if body == "-":
        return sys.stdin.read()
    return body


@click.group()
def tasks() -> None:
    """Tasks and task runs.

    A task is a durable work item, handed to an agent on thread task:REF (add, list,
    show, edit, pause, resume, cancel). A task run is delegated background work with an
    id, spawned by an agent or through the API, on thread task:ID (runs, get, wait,
    cancel, transcript, prune).
    """


@tasks.command("add")
@click.argument("title")
@click.option("--body", default="", help="The task's text ('-' reads stdin).")
@click.option("--ref", default=None, help="A ref of your choosing (default: random).")
@click.option("--requester", default="owner")
@pass_state
def add(state: CliState, *, title: str, body: str, ref: str | None, requester: str) -> None:
    """Add a task."""
    task = _book(state).add(title, body=_read_body(body) or "", ref=ref, requester=requester)
    click.echo(task.ref)


@tasks.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include done and cancelled tasks.")
@pass_state
def list_(state: CliState, *, show_all: bool) -> None:
    """List tasks (active ones unless --all)."""
    book = _book(state)
    for task in book.all():
        if not show_all and task.status in ("done", "cancelled"):
            continue
        flags = " (paused)" if task.paused else ""
        click.echo(f"{task.ref:<12} {task.status:<9} r{task.revision:<3} {task.title}{flags}")


@tasks.command("show")
@click.argument("ref")
@pass_state
def show(state: CliState, *, ref: str) -> None:
    """Show one task and the turns it was handed in."""
    from toolang_core import TurnFilter

    book = _book(state)
    task = book.get(ref)
    click.echo(
        f"ref        {task.ref}\ntitle      {task.title}\nstatus     {task.status}"
        f"{' (paused)' if task.paused else ''}\nrequester  {task.requester}\n"
        f"revision   {task.revision} (handed over: {book.handed_revision(ref)})\n"
        f"thread     {task.thread_id}"
    )
    if task.body:
        click.echo(f"\n{task.body}\n")
    for turn in reversed(book.store.list_turns(TurnFilter(thread_id=task.thread_id, limit=10))):
        click.echo(f"turn {turn.id} {turn.status.value}: {(turn.output or turn.error or '')[:70]}")


@tasks.command("edit")
@click.argument("ref")
@click.option("--title", default=None)
@click.option("--body", default=None, help="New text ('-' reads stdin).")
@click.option("--status", type=click.Choice(["todo", "doing", "done", "cancelled"]), default=None)
@pass_state
def edit(
    state: CliState, *, ref: str, title: str | None, body: str | None, status: str | None
) -> None:
    """Change a task (a new revision, handed over again while it is active)."""
    changes = {
        k: v
        for k, v in {"title": title, "body": _read_body(body), "status": status}.items()
        if v is not None
    }
    task = _book(state).change(ref, **changes)
    click.echo(f"{task.ref} revision {task.revision}")


@tasks.command("pause")
@click.argument("ref")
@pass_state
def pause(state: CliState, *, ref: str) -> None:
    """Stop handing a task over until it is resumed."""
    _book(state).change(ref, paused=True)
    click.echo(f"{ref} paused")


@tasks.command("resume")
@click.argument("ref")
@pass_state
def resume(state: CliState, *, ref: str) -> None:
    """Resume a paused task."""
    _book(state).change(ref, paused=False)
    click.echo(f"{ref} resumed")


@tasks.command("cancel")
@click.argument("ref")
@click.option("--reason", default="canceled from the command line")
@pass_state
def cancel(state: CliState, *, ref: str, reason: str) -> None:
    """Cancel a task run (by its id) or a task (by its ref) and its queued or running
    turn. A run that already finished is left as it is."""
    import time

    from toolang_core import TurnFilter, TurnStatus
    from toolang_source_task.runs_cli import cancel_run

    if cancel_run(state, ref, reason=reason):
        return
    book = _book(state)
    task = book.change(ref, status="cancelled")
    open_turns = book.store.list_turns(
        TurnFilter(
            thread_id=task.thread_id,
            status=(TurnStatus.QUEUED, TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL),
        )
    )
    for turn in open_turns:
        book.store.cancel(turn.id, now=time.time(), reason=f"task {ref} was cancelled")
    click.echo(
        f"{ref} cancelled" + (f" ({len(open_turns)} turn(s) canceled)" if open_turns else "")
    )


def _add_run_commands() -> None:
    from toolang_source_task.runs_cli import COMMANDS

    for command in COMMANDS:
        tasks.add_command(command)


_add_run_commands()
