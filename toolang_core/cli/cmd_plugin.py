"""``toolang plugin …``: tools for plugin authors."""

from __future__ import annotations

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
    click.echo(f"created {root}")
    click.echo(f"  entry point {names.entry_point} = {names.package} (group 'toolang')")
    click.echo(f"  install:  pip install -e '{root}[test]'   then `toolang plugins` lists it")
    click.echo(f"  test:     pytest {root}/tests   (or `tox -e {names.distribution}`)")
