"""toolang-source-will: the agents' own low-priority, self-driven work."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from toolang_core import GroupPolicy, RegisterSettings, RegisterTurnSource, hookimpl

if TYPE_CHECKING:
    from toolang_core import PluginContext
    from toolang_source_will.wills import WillSource

NAME = "source-will"


@attrs.frozen
class WillSettings:
    """``[plugins.source-will]``: where the agents' directories are, and the longest time
    between two looks at the schedules."""

    dir: Path | None = None
    poll_seconds: float = 30.0


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(WillSettings)


def _will_source(context: PluginContext) -> WillSource:
    from toolang_source_will.wills import WillSource

    return WillSource(context.settings or WillSettings(), context.config.base_dir)


@hookimpl
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    register(
        "will",
        _will_source,
        description="the agents' own low-priority work (will.md)",
        # Last of all, coalesced, and one will turn at a time.
        admission=GroupPolicy(priority=0, strategy="coalesce", max_running=1),
    )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_will.cli import wills

    cli.add_command(wills)
