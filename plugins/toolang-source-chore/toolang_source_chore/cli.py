"""``toolang chores``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from toolang_core.cli import CliState, pass_state, when

if TYPE_CHECKING:
    from toolang_source_chore.chores import ChoreBoard


def _board(state: CliState) -> ChoreBoard:
    from toolang_source_chore.chores import ChoreBoard
    from toolang_source_chore.settings import ChoreSettings

    settings = state.runtime.settings.get("source-chore") or ChoreSettings()
    board = ChoreBoard(settings, state.config.base_dir, state.open_store(read_only=False))
    board.reload()
    return board


@click.group()
def chores() -> None:
    """Chores: recurring work on RRULE or cron schedules."""


@chores.command("list")
@pass_state
def list_(state: CliState) -> None:
    """Each chore: its schedule, next and last occurrence, and where it is declared."""
    import time

    board = _board(state)
    now = time.time()
    for chore in board.chores:
        paused = " (paused)" if chore.paused else ""
        click.echo(
            f"{chore.key:<20} {chore.schedule.text:<28} next {when(chore.schedule.next_after(now))}"
            f"  last {when(board.last_fired(chore.key))}  {chore.origin}{paused}"
        )
    for problem in board.problems:
        click.echo(f"invalid  {problem}", err=True)
    if board.problems:
        raise SystemExit(1)


@chores.command("run")
@click.argument("key")
@pass_state
def run(state: CliState, *, key: str) -> None:
    """Place a turn for chore KEY now (coalesced with one already pending)."""
    from toolang_core import Inbox, UsageError

    board = _board(state)
    chore = next((c for c in board.chores if c.key == key), None)
    if chore is None:
        known = ", ".join(c.key for c in board.chores) or "none"
        raise UsageError(f"no chore {key!r} (known: {known})")
    turn_id = board.submit(
        Inbox(board.store, state.runtime.policy, redaction=state.runtime.redaction),
        chore,
        occurrence=None,
        manual=True,
    )
    click.echo(turn_id)
