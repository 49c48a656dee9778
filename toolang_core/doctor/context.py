"""What ``toolang doctor``'s checks share (:class:`DoctorContext`), and the one runtime
they build for it (:func:`runtime_for`).

Kept apart from the package's ``__init__`` (which re-exports both and lists the
checks) so that the check modules (:mod:`~toolang_core.doctor.setup`,
:mod:`~toolang_core.doctor.attachments`) import it without importing the list of
checks that imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from toolang_core.config.model import ToolangConfig
from toolang_core.errors import ConfigError
from toolang_core.plugins.host import PluginHost

if TYPE_CHECKING:
    from toolang_core.runtime import Runtime


@attrs.define
class DoctorContext:
    """What the checks share: the configuration (if it loaded) and the plugin host."""

    env: Mapping[str, str]
    config_path: Path | None
    commands: click.Group | None = None
    config: ToolangConfig | None = None
    host: PluginHost | None = None
    runtime: Runtime | None = None


def runtime_for(ctx: DoctorContext) -> Runtime | None:
    """A runtime for the checks, or ``None`` when the configuration or settings failed.

    One for all the checks: each new one read every agent source again, and logged each
    broken AGENT.md once per check."""
    if ctx.config is None or ctx.host is None:
        return None
    if ctx.runtime is not None:
        return ctx.runtime
    from toolang_core.runtime import Runtime

    try:
        ctx.runtime = Runtime(ctx.config, ctx.host, env=ctx.env)
    except ConfigError:
        return None  # the settings check reported it
    return ctx.runtime
