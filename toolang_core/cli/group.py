"""A click group that imports built-in commands on demand and adds plugins' commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import IO, TYPE_CHECKING, Any

import click

from toolang_core.errors import ToolangError

if TYPE_CHECKING:
    from toolang_core.cli.state import CliState


class ToolangCliError(click.ClickException):
    """A :class:`ToolangError` on its way to the terminal: message only, no traceback."""

    def __init__(self, error: ToolangError) -> None:
        super().__init__(str(error))
        # click declares exit_code on the class; each toolang error carries its own.
        self.exit_code = error.exit_code  # type: ignore[misc]
        self.problems = getattr(error, "problems", None)

    def show(self, file: IO[Any] | None = None) -> None:
        out = file if file is not None else sys.stderr
        problems = self.problems
        if problems and len(problems) > 1:
            click.echo(f"error: {len(problems)} problems in the configuration", file=out)
            for line in problems:
                click.echo(f"  {line}", file=out)
        else:
            click.echo(f"error: {self.message}", file=out)


PLUGIN_COMMANDS = {
    "a2a": "toolang-source-a2a",
    "approvals": "toolang-hook-approval-gate",
    "chat": "toolang-source-chat",
    "chores": "toolang-source-chore",
    "invoke": "toolang-source-invoke",
    "knowledge": "toolang-hook-knowledge-saver",
    "learning": "toolang-hook-learning-observer",
    "plugin": "toolang-authoring",
    "serve": "toolang-server",
    "tasks": "toolang-source-task",
    "teams": "toolang-teams",
    "wills": "toolang-source-will",
}
"""The commands the README and docs use that toolang's own plugins bring, by the
distribution that brings each: ``toolang chat`` without toolang-source-chat says what
to install instead of only "No such command". (Names only; no plugin is imported.)"""


class ToolangGroup(click.Group):
    """The root ``toolang`` group.

    ``lazy_commands`` maps names to ``"module:attribute"``; a module is imported only
    when its command runs or help lists it. Plugins' commands are added through
    ``toolang_register_commands`` the first time a name is not built in: only by the
    plugin the cache names as the command's owner when it does, else by every plugin.
    """

    def __init__(
        self, *args: Any, lazy_commands: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy_commands or {})
        self._plugins_added = False
        self._plugins_asked: set[str] = set()  # added their commands through the cache
        self._owners: dict[str, str] = {}
        self._clean = True

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Add a command; a name that is built in or already added is refused."""
        name = name or cmd.name
        if name in self.lazy:
            raise ValueError(f"command {name!r} is built into toolang")
        if name in self.commands:
            raise ValueError(f"command {name!r} is already taken")
        super().add_command(cmd, name)

    def add_plugin_commands(self, ctx: click.Context) -> None:
        """Let the plugins add their commands (once); a plugin that fails is recorded.

        When every plugin added its commands cleanly, which plugin added each is cached
        (:func:`toolang_core.cli.command_index.owners_key`) for :meth:`get_command`."""
        if self._plugins_added:
            return
        self._plugins_added = True
        from toolang_core.cli.state import CliState

        state = CliState.of(ctx)
        try:
            host = state.lenient_host()
            owners, clean = host.add_commands(self, skip=self._plugins_asked)
        except ToolangError as exc:
            raise ToolangCliError(exc) from None
        owners.update(self._owners)
        self._owners = owners
        if clean and self._clean:
            from toolang_core.cli import command_index

            command_index.write_owners(state.env, self._owners_key(state), owners)

    def _add_owner_commands(self, ctx: click.Context, name: str) -> None:
        """Only the plugin the cache names as ``name``'s owner adds its commands: a
        ``toolang chat`` does not import every plugin's command module. A miss, or an
        owner that no longer adds ``name``, leaves ``name`` to :meth:`add_plugin_commands`."""
        from toolang_core.cli import command_index
        from toolang_core.cli.state import CliState

        state = CliState.of(ctx)
        try:
            host = state.lenient_host()
        except ToolangError as exc:
            raise ToolangCliError(exc) from None
        owners = command_index.read_owners(state.env, self._owners_key(state))
        plugin = owners.get(name) if owners is not None else None
        if plugin is None or plugin in self._plugins_asked:
            return
        self._plugins_asked.add(plugin)
        added, clean = host.add_commands(self, only=(plugin,))
        self._owners.update(added)
        self._clean = self._clean and clean

    def _owners_key(self, state: CliState) -> str:
        from toolang_core import __version__
        from toolang_core.cli import command_index

        host = state.lenient_host()
        return command_index.owners_key(__version__, host.records, state.config_path, state.env)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The help's command list, from the cached listing when nothing changed (see
        :mod:`toolang_core.cli.command_index`): no plugin is imported for ``--help``."""
        from toolang_core import __version__
        from toolang_core.cli import command_index
        from toolang_core.cli.state import CliState

        state = CliState.of(ctx)
        key = command_index.listing_key(__version__, state.config_path, state.env)
        listing = command_index.read_listing(state.env, key)
        if listing is None:
            listing = {}
            for name in self.list_commands(ctx):
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    listing[name] = (
                        command.short_help or command.help or "",
                        bool(command.short_help),
                    )
            command_index.write_listing(state.env, key, listing)
        # Stand-ins shorten each text exactly as the real commands would.
        stand_ins = [
            click.Command(name, short_help=text) if explicit else click.Command(name, help=text)
            for name, (text, explicit) in sorted(listing.items())
        ]
        if stand_ins:
            limit = formatter.width - 6 - max(len(c.name or "") for c in stand_ins)
            with formatter.section("Commands"):
                formatter.write_dl([(c.name or "", c.get_short_help_str(limit)) for c in stand_ins])

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.add_plugin_commands(ctx)
        return sorted({*self.lazy, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is not None:
            module_name, _, attr = target.partition(":")
            command = getattr(import_module(module_name), attr)
            assert isinstance(command, click.Command)
            return command
        if cmd_name not in self.commands and not self._plugins_added:
            self._add_owner_commands(ctx, cmd_name)
        if cmd_name not in self.commands:
            self.add_plugin_commands(ctx)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        distribution = PLUGIN_COMMANDS.get(name)
        if distribution is not None and self.get_command(ctx, name) is None:
            ctx.fail(
                f"No such command {name!r}: it comes with {self._why_missing(ctx, distribution)}"
            )
        return super().resolve_command(ctx, args)

    def _why_missing(self, ctx: click.Context, distribution: str) -> str:
        from toolang_core.cli.state import CliState

        for record in CliState.of(ctx).lenient_host().records:
            if record.distribution == distribution and record.reason:
                return f"{distribution}, which is {record.reason}"
            if record.distribution == distribution and record.error is not None:
                return f"{distribution}, which failed: {record.failure_message()}"
        return f"{distribution}, which is not installed (pip install {distribution})"

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ToolangError as exc:
            raise ToolangCliError(exc) from None
        except Exception as exc:
            damage = _damaged_store(ctx, exc)
            if damage is None:
                raise
            raise ToolangCliError(damage) from None

    def main(self, args: Sequence[str] | None = None, *a: Any, **kw: Any) -> Any:
        from toolang_core.logs import configure_logging

        # Until the root command reads --log-format/--log-level, warnings (e.g. a plugin
        # failing while commands are listed) still belong on stderr, never stdout.
        configure_logging(level="warning")
        try:
            return super().main(args, *a, **kw)
        except ToolangError as exc:  # raised outside invoke, e.g. while resolving a command
            ToolangCliError(exc).show()
            sys.exit(exc.exit_code)
        except Exception as exc:
            if os.environ.get("TOOLANG_DEBUG"):
                raise
            click.echo(
                f"internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in toolang or a plugin; run again with TOOLANG_DEBUG=1 "
                "to see the traceback.",
                file=sys.stderr,
            )
            sys.exit(70)


def _damaged_store(ctx: click.Context, exc: Exception) -> ToolangError | None:
    """A command that met a damaged page of an SQLite file after opening it (opening
    probes only the edges of each table): the error to show instead of an "internal
    error" — the execution store's, with the advice ``toolang doctor`` gives, when a
    check of the store finds it damaged; else the file is a plugin's."""
    from toolang_core.store.sqlite.damage import is_corruption

    if not is_corruption(exc):
        return None
    from toolang_core.cli.state import CliState
    from toolang_core.store.errors import StoreCorrupt, StoreMissing

    checked = True  # whether the store could be checked (else: which file is unknown)
    try:
        store = CliState.of(ctx).open_store(read_only=True)
    except StoreCorrupt as found:  # the store itself: say so, with the advice
        return found
    except StoreMissing:  # no store: the damaged file is another
        store = None
    except Exception:  # a report about another error: keep to that one
        store, checked = None, False
    if store is not None:
        try:
            check = getattr(store, "integrity_problems", None)
            problems = check(limit=3) if check is not None else []
        finally:
            store.close()
        if problems:
            from toolang_core.store.sqlite.damage import damaged

            return damaged(store.location, "; ".join(problems))
    which = "other than the execution store " if checked else ""
    return StoreCorrupt(
        f"an SQLite file {which}is damaged ({exc}); it was left "
        "untouched — `toolang doctor` says which; restore it from a backup"
    )
