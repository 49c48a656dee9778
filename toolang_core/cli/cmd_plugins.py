"""``toolang plugins``: the installed plugins as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from toolang_core.cli.state import CliState

if TYPE_CHECKING:
    from toolang_core.cli.plugin_index import Row


@click.command()
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Include built-in, failed, disabled and duplicate plugins.",
)
@click.option(
    "--hook",
    "hooks",
    multiple=True,
    metavar="NAME",
    help="Only plugins implementing this hook (repeatable).",
)
@click.pass_context
def plugins(ctx: click.Context, show_all: bool, hooks: tuple[str, ...]) -> None:
    """Print the plugins as a JSON list.

    Each entry has name (the entry-point name), distribution, version, entry_point,
    hooks, status (loaded, builtin, failed, disabled, duplicate), reason, error and
    what the plugin provides. Exits 0 even when plugins failed; use --strict or
    `toolang doctor` to fail on them.
    """
    from toolang_core import __version__
    from toolang_core.cli import plugin_index
    from toolang_core.plugins.records import PluginStatus

    state = CliState.of(ctx)
    state.config  # noqa: B018 -- a broken configuration fails here, cached listing or not
    # Debug and info logging show how the plugins load: then they are loaded each time.
    cached = state.log_level in (None, "warning", "error")
    key = plugin_index.listing_key(__version__, state.config_path, state.env) if cached else ""
    rows = plugin_index.read_listing(state.env, key) if cached else None
    if rows is None:
        rows, clean = _listing(ctx, state)
        if cached and clean:
            plugin_index.write_listing(state.env, key, rows)
    shown = [
        row
        for row in rows
        if (show_all or row["status"] == PluginStatus.LOADED)
        and (not hooks or set(hooks) & set(row["hooks"]))
    ]
    click.echo(json.dumps(shown, indent=2))


def _listing(ctx: click.Context, state: CliState) -> tuple[list[Row], bool]:
    """Every plugin's row, made by loading them all; and whether the load was clean
    (no plugin failed, was refused or warned, no tool name was withheld), so that it
    may be cached."""
    from toolang_core.cli.group import ToolangGroup

    host = state.host
    root = ctx.find_root().command
    if isinstance(root, ToolangGroup):
        root.add_plugin_commands(ctx)  # a plugin failing to add its commands shows up too
    components = host.components
    rows = []
    for record in host.records:
        row = record.to_json()
        row["provides"] = components.provided_by(record.name)
        rows.append(row)
    return rows, not host.failures and not host.warnings and not host.errors
