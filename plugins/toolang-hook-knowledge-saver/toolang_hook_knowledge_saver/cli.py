"""``toolang knowledge list`` and ``toolang knowledge show ID``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import PluginDatabase

NOTHING_YET = "no knowledge saved yet: it is saved while `toolang run` serves turns"


def _open(state: CliState) -> PluginDatabase | None:
    """The plugin's database, read-only; ``None`` when nothing was ever saved."""
    from toolang_core import StoreMissing
    from toolang_hook_knowledge_saver.schema import MIGRATIONS
    from toolang_hook_knowledge_saver.settings import NAME

    try:
        return state.runtime.plugin_database(NAME, MIGRATIONS, read_only=True)
    except StoreMissing:
        return None


@click.group()
def knowledge() -> None:
    """What the KnowledgeSaver kept from tool results."""


@knowledge.command("list")
@click.option("--agent", default=None, help="Only this agent's knowledge.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def list_command(state: CliState, *, agent: str | None, limit: int, as_json: bool) -> None:
    """The newest entries first."""
    from toolang_core.cli import echo_json
    from toolang_hook_knowledge_saver.store import list_knowledge

    db = _open(state)
    if db is None:
        if as_json:
            echo_json([])
        click.echo(NOTHING_YET, err=as_json)
        return
    try:
        entries = list_knowledge(db, agent=agent, limit=limit)
    finally:
        db.close()
    if as_json:
        echo_json(entries)
    elif not entries:
        click.echo(f"no knowledge saved for agent {agent!r}" if agent else NOTHING_YET)
    else:
        _print_list(entries)


@knowledge.command()
@click.argument("entry_id", metavar="ID", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def show(state: CliState, *, entry_id: int, as_json: bool) -> None:
    """One entry with its whole stored content."""
    from toolang_core import ToolangError
    from toolang_core.cli import echo_json
    from toolang_hook_knowledge_saver.store import get_knowledge

    db = _open(state)
    if db is None:
        raise ToolangError(f"no knowledge entry {entry_id}: {NOTHING_YET}")
    try:
        entry = get_knowledge(db, entry_id)
    finally:
        db.close()
    if entry is None:
        raise ToolangError(
            f"no knowledge entry {entry_id}; `toolang knowledge list` shows the ids there are"
        )
    if as_json:
        echo_json(entry)
        return
    _print_entry(entry)


def _print_list(entries: list[Any]) -> None:
    from toolang_core.cli import short, table, when

    table(
        [
            [str(e.id), e.agent, e.tool, str(e.times_seen), when(e.last_seen_at), short(e.content)]
            for e in entries
        ],
        ["ID", "AGENT", "TOOL", "SEEN", "LAST SEEN", "CONTENT"],
    )


def _print_entry(entry: Any) -> None:
    from toolang_core.cli import when

    cut = f" (cut from {entry.content_chars} characters)" if entry.truncated else ""
    for label, value in (
        ("id", entry.id),
        ("agent", entry.agent),
        ("tool", entry.tool),
        ("params", entry.params),
        ("thread", entry.thread_id),
        ("turn", entry.turn_id),
        ("call", entry.call_id),
        ("saved", when(entry.created_at)),
        ("seen", f"{entry.times_seen} time(s), last {when(entry.last_seen_at)}"),
        ("hash", entry.content_hash),
    ):
        click.echo(f"{label + ':':8}{value}")
    click.echo(f"\ncontent{cut}:\n{entry.content}")
