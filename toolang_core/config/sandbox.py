"""The sandbox's part of ``[tools]``: per-agent and per-tool overrides, and the check
of host rules — for ``toolang.toml`` (``[tools]``, ``[tools.agent.<name>]``,
``[tools.tool.<name>]``) and AGENT.md (``sandbox:``) alike. The rules themselves are
:mod:`toolang_core.sandbox.rules`.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from toolang_core.config.converter import KeyPath, KeyProblems
from toolang_core.config.validators import NonNegativeInt
from toolang_core.sandbox.rules import Network, parse_host_rule


def check_host_rules(key: str, values: tuple[str, ...] | None) -> None:
    """Raise :class:`~toolang_core.config.converter.KeyProblems` naming each entry of
    ``values`` (at ``<key>[i]``) that is not a host rule."""
    problems: list[tuple[KeyPath, str]] = []
    for index, value in enumerate(values or ()):
        try:
            parse_host_rule(value)
        except ValueError as exc:
            problems.append(((key, index), str(exc)))
    if problems:
        raise KeyProblems(problems)


@attrs.frozen
class SandboxOverride:
    """What one agent (``[tools.agent.<name>]``, AGENT.md ``sandbox:``) or one tool
    (``[tools.tool.<name>]``) changes of ``[tools]``' sandbox settings; an unset key
    keeps the wider setting. ``0`` for a limit means no limit."""

    workdir: Path | None = None
    network: Network | None = None
    allow_hosts: tuple[str, ...] | None = None
    cpu_seconds: NonNegativeInt | None = None
    address_space_mb: NonNegativeInt | None = None
    file_size_mb: NonNegativeInt | None = None
    max_processes: NonNegativeInt | None = None

    def __attrs_post_init__(self) -> None:
        check_host_rules("allow_hosts", self.allow_hosts)


OVERRIDE_KEYS = tuple(a.name for a in attrs.fields(SandboxOverride))
"""The keys of an override table (and of AGENT.md's ``sandbox:`` mapping)."""
