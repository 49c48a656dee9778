"""Required plugins: the ones without which no tool may run.

A safety plugin that fails to load would otherwise leave the tool-call chain without
its filter or gate, and every tool would run unchecked. The operator names such plugins
in ``[plugins] required``; the bundled SecurityFilter and ApprovalGate are required
whenever they are installed and not disabled. While a required plugin is missing,
failed, or broke in one of its hooks, the host reports it and the tool-call chain
refuses every call, saying why.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Final

import attrs

from toolang_core.builtins import install_hint
from toolang_core.plugins.loader import normalize
from toolang_core.plugins.records import PluginRecord, PluginStatus

DEFAULT_REQUIRED: Final = ("hook-security-filter", "hook-approval-gate")
"""Entry-point names of the bundled safety plugins, required whenever they are
installed and not disabled (disable one to run without it)."""

EXPLICIT_ORIGIN: Final = "[plugins] required"
DEFAULT_ORIGIN: Final = "the bundled safety plugins are required while installed and enabled"


@attrs.frozen
class RequiredProblem:
    """Why a required plugin does not stand guard: the plugin (its entry-point name, or
    the name the operator wrote when nothing matches it) and a message for a person."""

    plugin: str
    message: str


def required_problems(
    records: Iterable[PluginRecord],
    active: Collection[str],
    explicit: Iterable[str],
    broken: Mapping[str, str],
) -> list[RequiredProblem]:
    """One problem per required plugin that is not working.

    ``records`` is every plugin offered to the host (shadowed duplicates too), ``active``
    the names registered now, ``explicit`` the ``[plugins] required`` names and
    ``broken`` the active plugins whose hook raised where that stops them (by name:
    what happened)."""
    records = list(records)
    wanted = [(normalize(n), n, EXPLICIT_ORIGIN) for n in explicit]
    listed = {key for key, _, _ in wanted}
    wanted += [(n, n, DEFAULT_ORIGIN) for n in DEFAULT_REQUIRED if n not in listed]
    problems = []
    for key, written, origin in wanted:
        matching = [r for r in records if key in (normalize(r.name), _dist(r))]
        problem = _problem(written, origin, matching, active, broken)
        if problem is not None:
            problems.append(problem)
    return problems


def required_names(records: Iterable[PluginRecord], explicit: Iterable[str]) -> frozenset[str]:
    """The entry-point names of the plugins that are required now (installed ones)."""
    records = list(records)
    keys = {normalize(n) for n in explicit}
    names = {r.name for r in records if keys & {normalize(r.name), _dist(r)}}
    names |= {
        r.name
        for r in records
        if r.name in DEFAULT_REQUIRED and r.status is not PluginStatus.DISABLED
    }
    return frozenset(names)


def _dist(record: PluginRecord) -> str:
    return normalize(record.distribution) if record.distribution else ""


def _problem(
    written: str,
    origin: str,
    matching: list[PluginRecord],
    active: Collection[str],
    broken: Mapping[str, str],
) -> RequiredProblem | None:
    fix = _fix(origin)
    if not matching:
        if origin != EXPLICIT_ORIGIN:
            return None  # a bundled safety plugin that is not installed is not required
        return RequiredProblem(
            written,
            f"required plugin {written!r} ({origin}) is not installed{install_hint(written)}: "
            f"no tool runs until it is installed or removed from {EXPLICIT_ORIGIN}",
        )
    if all(r.status is PluginStatus.DISABLED for r in matching):
        if origin != EXPLICIT_ORIGIN:
            return None  # disabled on purpose: the operator runs without it
        record = matching[0]
        return RequiredProblem(
            record.name,
            f"required {record.describe()} ({origin}) is {record.reason or 'disabled'}: "
            f"no tool runs until it is enabled or removed from {EXPLICIT_ORIGIN}",
        )
    working = [r for r in matching if r.name in active and r.status is not PluginStatus.DUPLICATE]
    if not working:
        record = next((r for r in matching if r.error is not None), matching[0])
        what = record.failure_message() if record.error else f"{record.describe()} is not loaded"
        return RequiredProblem(record.name, f"required {what} ({origin}): no tool runs until {fix}")
    for record in working:
        if record.name in broken:
            return RequiredProblem(
                record.name,
                f"required {record.describe()} ({origin}) {broken[record.name]}: no tool "
                f"runs until {fix}",
            )
    return None


def _fix(origin: str) -> str:
    if origin == EXPLICIT_ORIGIN:
        return f"it is fixed or removed from {EXPLICIT_ORIGIN}"
    return "it is fixed, or disabled ([plugins] disable) to run without it"
