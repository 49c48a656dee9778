"""CLI hooks: plugins add subcommands to ``toolang``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    import click


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``toolang`` command group.

    Called when the CLI needs the full command list (``toolang --help``) or a command
    that is not built in. Use ``cli.command()`` / ``cli.group()`` or
    ``cli.add_command``. A name already taken (built-in or by another plugin) is
    reported against this plugin and the command is not added. Keep imports of heavy
    libraries inside the command functions: every ``toolang`` invocation pays for
    what this hook imports.
    """
