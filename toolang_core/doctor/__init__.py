"""``toolang doctor``: real checks of a configuration and its plugins.

Each check returns a :class:`Check`; the command exits non-zero when any check
failed. Checks never raise for a problem they are meant to find.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolang_core.config.loader import find_config, load_config
from toolang_core.config.settings import unowned_sections, validate_plugin_settings
from toolang_core.doctor.attachments import check_attachments, check_fallback_attachments
from toolang_core.doctor.check import Check as Check, DoctorCheck as DoctorCheck, Status as Status

# DoctorContext and runtime_for live in toolang_core.doctor.context, which the check
# modules import without this package's own; re-exported here, their documented path.
from toolang_core.doctor.context import (
    DoctorContext as DoctorContext,
    runtime_for as runtime_for,
)
from toolang_core.doctor.isolation import check_failed_traces, check_isolation
from toolang_core.doctor.setup import check_directories, check_models, check_sandbox
from toolang_core.errors import ConfigError
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.mistakes import misnamed_sources
from toolang_core.plugins.records import PluginStatus

if TYPE_CHECKING:
    from toolang_core.runtime import Runtime


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
    ctx.host = host = PluginHost.from_config(ctx.config, ctx.env, lenient=True)
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
    for text in host.unknown_names:
        # a typo in the deny-list leaves on the plugin it meant to turn off
        yield Check("plugins", "fail", text, ("fix the name or remove it",))
    for text in host.errors:  # a tool name withheld: no plugin's tool answers to it
        yield Check("plugins", "fail", text)
    for text in host.warnings:
        if text not in host.unknown_names:
            yield Check("plugins", "warn", text)
    yield from _required(host)


def _required(host: PluginHost) -> Iterator[Check]:
    """Required plugins: which ones, and each that is not working (no tool runs then)."""
    for problem in host.required_problems():
        yield Check("plugins", "fail", problem.message)
    required = sorted(n for n in host.active_names if host.is_required(n))
    if required and not host.required_problems():
        yield Check(
            "plugins",
            "info",
            f"required plugin(s), without which no tool runs: {', '.join(required)}",
        )


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
    for message in unowned_sections(ctx.config, ctx.host)[1]:
        yield Check("settings", "warn", message)
    sources = ctx.host.components.of_kind("turn source")
    for message in misnamed_sources(ctx.config, sources):
        yield Check("settings", "warn", message)


def check_agents(ctx: DoctorContext) -> Iterator[Check]:
    """The agent registry as a runtime would load it: sources, problems, unmatched tools."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    catalog = runtime.agents
    registry = catalog.registry
    active = registry.active()
    counts = Counter(d.source for d in active)
    by_source = ", ".join(f"{label} {n}" for label, n in counts.items())
    default = runtime.config.agents.default
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
    if found is not None and found.status != "active":
        yield Check(
            "agents", "fail", f"the default agent {default!r} ([agents] default) is disabled"
        )
    levels: tuple[tuple[str, Status, str], ...] = (
        ("error", "fail", "not loaded"),
        ("warning", "warn", "warnings"),
        ("info", "info", "notes"),
    )
    shadowed = {s.diagnostic for s in registry.shadowed}
    for hidden in registry.shadowed:  # said once, here, not again among the errors
        yield Check(
            "agents",
            "fail",
            hidden.message,
            (f"rename the agent the remote runtime serves, or the local {hidden.by.origin}",),
        )
    for level, status, what in levels:
        lines = tuple(
            str(d) for d in registry.diagnostics if d.level == level and d not in shadowed
        )
        if lines:
            yield Check("agents", status, f"agent definitions: {len(lines)} {what}", lines)
    for name, health in sorted(registry.health.items()):
        if health.state != "ok":
            yield Check(
                "agents", "warn", f"remote agent {name!r} is {health.state}: {health.detail}"
            )
    yield from _tool_owners(runtime)


def _tool_owners(runtime: Runtime) -> Iterator[Check]:
    """Tools no agent owns (a problem, with the fix) and declared owners that are not
    active agents."""
    from toolang_core.agents.catalog import UNMATCHED_FIX

    catalog = runtime.agents
    if not catalog.registry.reports:
        return  # single-agent mode: the one agent may use every tool
    tools = runtime.host.components.tools
    active = {d.name for d in catalog.registry.active()}
    wrong = [
        f"{name} (plugin {registration.plugin}) names owner {registration.tool.owner!r}"
        for name, registration in sorted(tools.items())
        if registration.tool.owner and registration.tool.owner not in active
    ]
    if wrong:
        yield Check(
            "agents",
            "warn",
            f"{len(wrong)} tool(s) declare an owner that is not an active agent",
            (*wrong, f"active agents: {', '.join(sorted(active)) or 'none'}"),
        )
    unmatched = catalog.assignment.unmatched
    core = [t for t in unmatched if t in tools and _is_builtin(runtime, tools[t].plugin)]
    installed = [t for t in unmatched if t not in core]
    if installed:
        yield Check(
            "agents",
            "fail",
            f"{len(installed)} tool(s) no agent owns: "
            + ", ".join(f"{t} ({tools[t].plugin})" if t in tools else t for t in installed),
            (UNMATCHED_FIX,),
        )
    if core:
        yield Check(
            "agents",
            "info",
            f"{len(core)} of the core's own tool(s) no agent owns: {', '.join(core)}",
            (
                "the built-in roles (toolang-agents-builtin) claim them; an agent that should "
                "delegate claims or is granted them by name",
            ),
        )


def _is_builtin(runtime: Runtime, plugin: str) -> bool:
    try:
        return runtime.host.record(plugin).status == "builtin"
    except KeyError:
        return False


def check_store(ctx: DoctorContext) -> Iterator[Check]:
    """The execution store, read-only: readable, current schema, whether a runtime serves
    it, turns whose lease ran out with nobody to recover them (recent failures:
    :func:`~toolang_core.doctor.isolation.check_failed_traces`)."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    from toolang_core.store.errors import StoreError, StoreMissing
    from toolang_core.store.types import TurnFilter, TurnStatus

    try:
        store = runtime.open_store(read_only=True)
    except StoreMissing as exc:
        yield Check("store", "info", str(exc))
        return
    except (StoreError, ConfigError) as exc:
        yield Check("store", "fail", str(exc))
        return
    try:
        now = time.time()
        serving = store.runtime_running()
        state = (
            "cannot tell whether a runtime serves it"
            if serving is None
            else "a runtime serves it"
            if serving
            else "no runtime serves it now"
        )
        yield Check("store", "ok", f"{store.name} store at {store.location}: {state}")
        active = store.list_turns(
            TurnFilter(status=(TurnStatus.RUNNING, TurnStatus.CANCELING), limit=1000)
        )
        stuck = [t for t in active if t.lease_expires is not None and t.lease_expires < now]
        if stuck:
            yield Check(
                "store",
                "warn" if serving else "info",
                f"{len(stuck)} turn(s) hold an expired lease"
                + ("" if serving else "; the next `toolang run` recovers them"),
                tuple(f"{t.id} on {t.thread_id} (attempt {t.attempt})" for t in stuck[:10]),
            )
    except Exception as exc:  # e.g. damaged pages (check_store_pages tells which)
        yield Check("store", "fail", f"reading {store.location} failed: {exc}")
    finally:
        store.close()


def check_store_pages(ctx: DoctorContext) -> Iterator[Check]:
    """The embedded store's file page by page (``PRAGMA quick_check``): damaged pages or
    indexes are a failure — every later write could make them worse. Stores without
    such a check (a database server checks its own) are skipped."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    from toolang_core.store.errors import StoreError

    try:
        store = runtime.open_store(read_only=True)
    except (StoreError, ConfigError):
        return  # check_store reported it
    try:
        quick_check = getattr(store, "integrity_problems", None)
        if quick_check is None:
            return
        problems = quick_check()
    finally:
        store.close()
    if problems:
        yield Check(
            "store",
            "fail",
            f"{store.location} is damaged: PRAGMA quick_check found {len(problems)} "
            "problem(s); stop the runtime and restore it from a backup (or `sqlite3 "
            f"{store.location} .recover`)",
            tuple(problems),
        )
    else:
        yield Check("store", "ok", f"{store.location} passes PRAGMA quick_check")


def check_memory(ctx: DoctorContext) -> Iterator[Check]:
    """The memory plugin's own health report (or that memory is off)."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    try:
        memory = runtime.memory
    except ConfigError as exc:
        yield Check("memory", "fail", "the memory plugin is not available", tuple(exc.problems))
        return
    if memory is None:
        yield Check("memory", "info", "memory is off (set [memory] plugin to turn it on)")
        return
    import asyncio

    try:
        health = asyncio.run(memory.health())
    finally:
        memory.close()
    status: Status = (
        "ok" if health.status == "ok" else "warn" if health.status == "degraded" else "fail"
    )
    facts = [f"{health.entries} entries" if health.entries is not None else ""]
    if health.size_bytes is not None:
        facts.append(f"{health.size_bytes / 1_000_000:.1f} MB")
    summary = f"memory plugin {memory.name!r} is {health.status}"
    if any(facts):
        summary += f" ({', '.join(f for f in facts if f)})"
    details = [health.detail] if health.detail else []
    if health.last_error:
        details.append(f"last error: {health.last_error}")
    yield Check("memory", status, summary, tuple(details))


def check_plugin_health(ctx: DoctorContext) -> Iterator[Check]:
    """What plugins report through ``toolang_doctor_checks`` (e.g. an exporter that
    fails); a plugin whose report raised is a failed check naming it."""
    runtime = runtime_for(ctx)
    if runtime is None:
        return
    for plugin, found in runtime.host.hooks.doctor_checks(runtime):
        if isinstance(found, BaseException):
            yield Check(plugin, "fail", f"plugin {plugin!r} could not report its health: {found!r}")
            continue
        for check in found:
            if isinstance(check, Check):
                yield check
            else:
                yield Check(
                    plugin, "fail", f"plugin {plugin!r} reported {check!r}, not a DoctorCheck"
                )


CHECKS: tuple[CheckFn, ...] = (
    check_config,
    check_plugins,
    check_plugin_settings,
    check_directories,
    check_attachments,
    check_sandbox,
    check_store,
    check_failed_traces,
    check_store_pages,
    check_memory,
    check_agents,
    check_isolation,
    check_models,
    check_fallback_attachments,
    check_plugin_health,
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
