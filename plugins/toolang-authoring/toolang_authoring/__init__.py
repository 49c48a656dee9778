"""toolang-authoring: tools for plugin authors, as ``toolang plugin …`` commands.

``toolang plugin new`` scaffolds a plugin distribution that works as generated — in a
toolang checkout's ``plugins/`` or, with ``--standalone``, as a repository of its own
(:mod:`toolang_authoring.scaffold`). Nothing here runs inside a runtime: the plugin
only adds commands, and imports the scaffold when one of them runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_authoring.commands import plugin

    cli.add_command(plugin)
