"""``toolang plugin …``: tools for plugin authors (the group this plugin adds to ``toolang``)."""

from __future__ import annotations

import os
import shlex
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
    default=None,
    help="Where to create it [default: plugins, or . with --standalone].",
)
@click.option(
    "--standalone",
    is_flag=True,
    help="A repository of its own: pinned toolang-core, tox.ini, CI workflow, README.",
)
def new(name: str, family: str, plugins_dir: Path | None, standalone: bool) -> None:
    """Scaffold toolang-FAMILY-NAME: pyproject, a working hook and passing tests.

    In a toolang checkout it goes under plugins/; with --standalone it is a complete
    outside repository whose tox.ini installs toolang-core from $TOOLANG_FIND_LINKS.
    """
    from toolang_authoring.scaffold import PluginNames, scaffold_plugin

    if plugins_dir is None:
        plugins_dir = Path("." if standalone else "plugins")
    root = scaffold_plugin(plugins_dir, family, name, standalone=standalone)
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
    if standalone:
        click.echo("  a repository of its own (see its README):")
        click.echo(f"            cd {root} && python -m venv .venv")
        # the author who set TOOLANG_FIND_LINKS (docs/plugins.md's walk) can paste these
        found = os.environ.get("TOOLANG_FIND_LINKS")
        wheelhouse = shlex.quote(found) if found else "WHEELHOUSE"
        click.echo(f"            .venv/bin/pip install --find-links {wheelhouse} -e '.[test]'")
        click.echo("            .venv/bin/pytest")
        click.echo(f"            TOOLANG_FIND_LINKS={wheelhouse} tox")
        if not found:
            click.echo(
                "  WHEELHOUSE: a directory of toolang's wheels (tools/wheelhouse.py builds it)"
            )
        return
    click.echo(f"  install into {where}:")
    click.echo(f"            {python} -m pip install -e '{root}[test]'")
    click.echo("            then `toolang plugins` lists it")
    click.echo(f"  test:     {python} -m pytest {root}/tests   (or `tox -e {names.distribution}`)")
