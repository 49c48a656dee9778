"""``toolang plugin …``: tools for plugin authors."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group()
def plugin() -> None:
    """Tools for plugin authors."""


@plugin.command("new")
@click.argument("name")
@click.option(
    "--family",
    default="tools",
    show_default=True,
    type=click.Choice(["tools", "hook", "events", "source", "memory", "model", "store"]),
    help="What kind of plugin to start from.",
)
@click.option(
    "--dir",
    "plugins_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("plugins"),
    show_default=True,
    help="Where plugins live.",
)
def new(name: str, family: str, plugins_dir: Path) -> None:
    """Scaffold plugins/toolang-FAMILY-NAME: pyproject, a hook and a passing test."""
    from toolang_core.scaffold import PluginNames, scaffold_plugin

    root = scaffold_plugin(plugins_dir, family, name)
    names = PluginNames(family, name)
    python = Path(sys.executable)
    in_venv = sys.prefix != sys.base_prefix
    where = f"the venv toolang runs from ({sys.prefix})" if in_venv else f"this Python ({python})"
    click.echo(f"created {root}")
    click.echo(f"  entry point {names.entry_point} = {names.package} (group 'toolang')")
    if family == "tools":
        click.echo(
            f"  agent:    {names.ident} owns the {names.ident}_* tools "
            f'(try: toolang chat --agent {names.ident} "…")'
        )
    click.echo(f"  install into {where}:")
    click.echo(f"            {python} -m pip install -e '{root}[test]'")
    click.echo("            then `toolang plugins` lists it")
    click.echo(f"  test:     {python} -m pytest {root}/tests   (or `tox -e {names.distribution}`)")
