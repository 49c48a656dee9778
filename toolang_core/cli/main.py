"""The ``toolang`` root command and its entry point."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import click

from toolang_core.cli.group import ToolangGroup

BUILTIN_COMMANDS = {
    "init": "toolang_core.cli.cmd_init:init",
    "plugins": "toolang_core.cli.cmd_plugins:plugins",
    "hooks": "toolang_core.cli.cmd_hooks:hooks",
    "doctor": "toolang_core.cli.cmd_doctor:doctor",
    "agents": "toolang_core.cli.cmd_agents:agents",
    "run": "toolang_core.cli.cmd_run:run",
    "submit": "toolang_core.cli.cmd_turns:submit",
    "cancel": "toolang_core.cli.cmd_turns:cancel",
    "status": "toolang_core.cli.cmd_turns:status",
    "turns": "toolang_core.cli.cmd_turns:turns",
    "threads": "toolang_core.cli.cmd_turns:threads",
    "memory": "toolang_core.cli.cmd_memory:memory",
    "questions": "toolang_core.cli.cmd_questions:questions",
    "eval": "toolang_core.cli.cmd_eval:eval_",
}


def _version() -> str:
    from toolang_core import __version__

    return __version__


@click.group(
    cls=ToolangGroup,
    lazy_commands=BUILTIN_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(_version(), "--version", prog_name="toolang", message="%(prog)s %(version)s")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Configuration file (default: $TOOLANG_CONFIG, then ./toolang.toml).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Any plugin failure is an error (also TOOLANG_STRICT_PLUGINS=1).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "console", "json"]),
    default=None,
    help="Log format on stderr (default: [log] format, auto = console on a terminal).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default=None,
    help="Lowest level logged (default: [log] level, or warning for short commands).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    config_path: Path | None,
    strict: bool,
    log_format: str | None,
    log_level: str | None,
) -> None:
    """toolang — a plugin-host agent runtime.

    One runtime, one inbox of turn requests, one scheduler, one durable execution store;
    memory, tool hooks, agents, turn sources, models and stores are plugins.
    """
    from toolang_core.cli.state import CliState
    from toolang_core.logs import configure_logging

    state = CliState.of(ctx)
    state.log_level, state.log_format = log_level, log_format
    configure_logging(level=log_level or "warning", fmt=log_format or "auto")  # type: ignore[arg-type]


def main() -> None:
    """Run the ``toolang`` command line (``sys.argv``); raises ``SystemExit`` as click's
    commands do."""
    from toolang_core.cli.collector import collect_less

    collect_less()  # a command's start-up makes long-lived objects, not garbage
    cli.main(prog_name="toolang")


def script() -> NoReturn:
    """The ``toolang`` console script and ``python -m toolang_core``: :func:`main`, then
    the process ends without the interpreter's teardown of its modules and objects
    (:mod:`toolang_core.cli.quick_exit`)."""
    from toolang_core.cli.quick_exit import exit_without_teardown

    try:
        main()
    except SystemExit as stop:
        exit_without_teardown(stop.code)
    exit_without_teardown(0)
