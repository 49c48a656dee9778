"""``toolang plugins``: the installed plugins as JSON."""

from __future__ import annotations

import json

import click

from toolang_core.cli.state import CliState, pass_state


@click.command()
@click.option("--all", "show_all", is_flag=True,
              help="Include built-in, failed, disabled and duplicate plugins.")
@click.option("--hook", "hooks", multiple=True, metavar="NAME",
              help="Only plugins implementing this hook (repeatable).")
@pass_state
def plugins(state: CliState, show_all: bool, hooks: tuple[str, ...]) -> None:
    """Print the plugins as a JSON list.

    Each entry has name (the entry-point name), distribution, version, entry_point,
    hooks, status (loaded, builtin, failed, disabled, duplicate), reason, error and
    what the plugin provides. Exits 0 even when plugins failed; use --strict or
    `toolang doctor` to fail on them.
    """
    from toolang_core.plugins.records import PluginStatus

    host = state.lenient_host()
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
