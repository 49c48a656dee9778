"""``toolang plugins``: the installed plugins as JSON."""

from __future__ import annotations

import json

import click

from toolang_core.cli.state import CliState


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
    from toolang_core.cli.group import ToolangGroup
    from toolang_core.plugins.records import PluginStatus

    host = CliState.of(ctx).host
    root = ctx.find_root().command
    if isinstance(root, ToolangGroup):
        root.add_plugin_commands(ctx)  # a plugin failing to add its commands shows up too
    components = host.components
    rows = []
    for record in host.records:
        if not show_all and record.status is not PluginStatus.LOADED:
            continue
        if hooks and not set(hooks) & set(record.hooks):
            continue
        row = record.to_json()
        row["provides"] = components.provided_by(record.name)
        rows.append(row)
    click.echo(json.dumps(rows, indent=2))
