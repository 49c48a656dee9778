"""``toolang doctor``: real checks of a configuration and its plugins.

Each check returns a :class:`Check`; the command exits non-zero when any check
failed. Checks never raise for a problem they are meant to find.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Literal

import attrs
import click

from toolang_core.builtins import builtin_plugins
from toolang_core.config.loader import find_config, load_config
from toolang_core.config.model import ToolangConfig
from toolang_core.config.settings import validate_plugin_settings
from toolang_core.errors import ConfigError
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.loader import LoadPolicy
from toolang_core.plugins.records import PluginStatus

Status = Literal["ok", "info", "warn", "fail"]


@attrs.frozen
class Check:
    """One finding: which area, how it went, a one-line summary and detail lines."""

    area: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


@attrs.define
class DoctorContext:
    """What the checks share: the configuration (if it loaded) and the plugin host."""

    env: Mapping[str, str]
    config_path: Path | None
    commands: click.Group | None = None
    config: ToolangConfig | None = None
    host: PluginHost | None = None


CheckFn = Callable[[DoctorContext], Iterator[Check]]


def check_config(ctx: DoctorContext) -> Iterator[Check]:
    try:
        path = find_config(ctx.config_path, env=ctx.env)
        ctx.config = load_config(path, env=ctx.env)
    except ConfigError as exc:
        yield Check("config", "fail", "the configuration is invalid", tuple(exc.problems))
        return
    if ctx.config.source is None:
        yield Check(
            "config",
            "info",
            "no toolang.toml found; running on defaults (create one with `toolang init`)",
        )
    else:
        yield Check("config", "ok", f"{ctx.config.source} is valid")


def check_plugins(ctx: DoctorContext) -> Iterator[Check]:
    plugins = ctx.config.plugins if ctx.config else None
    policy = LoadPolicy.resolve(
        ctx.env,
        config_load=plugins.load if plugins else None,
        config_disable=plugins.disable if plugins else (),
    )
    ctx.host = host = PluginHost.from_entry_points(
        attrs.evolve(policy, strict=False), builtins=builtin_plugins()
    )
    host.components  # noqa: B018 - collecting runs every registration hook
    if ctx.commands is not None:
        host.add_commands(ctx.commands)
    active = host.active_names
    yield Check("plugins", "ok", f"{len(active)} plugin(s) active: {', '.join(active) or 'none'}")
    disabled: dict[str, list[str]] = {}
    for record in host.records:
        if record.status is PluginStatus.DISABLED:
            disabled.setdefault(record.reason or "disabled", []).append(record.name)
        elif record.status is PluginStatus.DUPLICATE:
            yield Check("plugins", "fail", f"{record.describe()}: {record.reason}")
        elif record.status is PluginStatus.FAILED:
            yield Check("plugins", "fail", record.failure_message())
    for reason, names in disabled.items():
        yield Check("plugins", "info", f"{len(names)} plugin(s) {reason}: {', '.join(names)}")


def check_plugin_settings(ctx: DoctorContext) -> Iterator[Check]:
    if ctx.config is None or ctx.host is None:
        return
    try:
        settings = validate_plugin_settings(ctx.config, ctx.host, env=ctx.env)
    except ConfigError as exc:
        yield Check("settings", "fail", "a plugin's settings are invalid", tuple(exc.problems))
        return
    if settings:
        yield Check("settings", "ok", f"settings valid for: {', '.join(sorted(settings))}")


def check_home(ctx: DoctorContext) -> Iterator[Check]:
    if ctx.config is None:
        return
    home = ctx.config.home
    if not home.exists():
        parent = next((p for p in home.parents if p.exists()), None)
        if parent is not None and not os.access(parent, os.W_OK):
            yield Check("home", "fail", f"{home} does not exist and {parent} is not writable")
        else:
            yield Check("home", "info", f"{home} does not exist yet; it is created on first run")
    elif not home.is_dir():
        yield Check("home", "fail", f"{home} exists but is not a directory")
    elif not os.access(home, os.W_OK):
        yield Check("home", "fail", f"{home} is not writable")
    else:
        yield Check("home", "ok", f"{home} is writable")


def check_agents(ctx: DoctorContext) -> Iterator[Check]:
    """The agent registry as a runtime would load it: sources, problems, unmatched tools."""
    if ctx.config is None or ctx.host is None:
        return
    from toolang_core.runtime import Runtime

    try:
        runtime = Runtime(ctx.config, ctx.host, env=ctx.env)
    except ConfigError:
        return  # the settings check reported it
    catalog = runtime.agents
    registry = catalog.registry
    active = registry.active()
    counts = Counter(d.source for d in active)
    by_source = ", ".join(f"{label} {n}" for label, n in counts.items())
    default = ctx.config.agents.default
    if not registry.reports:
        yield Check(
            "agents",
            "info",
            f"no agent sources installed: single-agent mode, the default agent {default!r} "
            "is made from [agents] and may use every tool",
        )
    else:
        yield Check("agents", "ok", f"{len(active)} agent(s) active ({by_source})")
    found = registry.get(default)
    if found is None or found.status != "active":
        yield Check(
            "agents", "fail", f"the default agent {default!r} ([agents] default) is disabled"
        )
    levels: tuple[tuple[str, Status, str], ...] = (
        ("error", "fail", "not loaded"),
        ("warning", "warn", "warnings"),
        ("info", "info", "notes"),
    )
    for level, status, what in levels:
        lines = tuple(str(d) for d in registry.diagnostics if d.level == level)
        if lines:
            yield Check("agents", status, f"agent definitions: {len(lines)} {what}", lines)
    for name, health in sorted(registry.health.items()):
        if health.state != "ok":
            yield Check(
                "agents", "warn", f"remote agent {name!r} is {health.state}: {health.detail}"
            )
    unmatched = catalog.assignment.unmatched
    if unmatched and registry.reports:
        yield Check(
            "agents",
            "warn",
            f"{len(unmatched)} tool(s) no agent's prefixes cover: {', '.join(unmatched)}",
            ("only agents granted them (tools: ['*'] or by name) can use them",),
        )


CHECKS: tuple[CheckFn, ...] = (
    check_config,
    check_plugins,
    check_plugin_settings,
    check_home,
    check_agents,
)


def run_checks(
    config_path: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    commands: click.Group | None = None,
    checks: tuple[CheckFn, ...] = CHECKS,
) -> list[Check]:
    """Run ``checks`` in order and return every finding.

    ``commands`` is a command group to exercise the plugins' ``toolang_register_commands``
    against (the CLI passes a fresh copy of its own).
    """
    ctx = DoctorContext(
        env=os.environ if env is None else env, config_path=config_path, commands=commands
    )
    return [finding for check in checks for finding in check(ctx)]
