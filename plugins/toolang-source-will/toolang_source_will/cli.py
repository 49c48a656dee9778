"""``toolang wills``."""

from __future__ import annotations

import time

import click

from toolang_core.cli import CliState, pass_state, when


@click.command()
@pass_state
def wills(state: CliState) -> None:
    """Each agent's will: its schedule and next occurrence."""
    from toolang_core import Recurring
    from toolang_source_will import WillSettings
    from toolang_source_will.wills import STATE, WillSource, load_wills

    settings = state.runtime.settings.get("source-will") or WillSettings()
    source = WillSource(settings, state.config.base_dir)
    recurring = Recurring(state.open_store(read_only=False), STATE)
    found, problems = load_wills(source.directory, recurring.anchor)
    now = time.time()
    for will in found:
        paused = " (paused)" if will.paused else ""
        click.echo(
            f"{will.agent:<16} {will.schedule.text:<28} "
            f"next {when(will.schedule.next_after(now))}  {will.path}{paused}"
        )
    if not found and not problems:
        click.echo(f"no will.md files under {source.directory}")
    for problem in problems:
        click.echo(f"invalid  {problem}", err=True)
    if problems:
        raise SystemExit(1)
