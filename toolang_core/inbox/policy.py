"""Admission policy: priorities, budgets and strategies, from configuration.

Each thread group (by default the name of the source that submits to it) has a
priority, a ``max_running`` budget, a ``max_queued`` limit with an overflow rule, and a
busy-thread strategy. A group's defaults come from whoever owns it — the turn source
that registered it (``register(..., admission=GroupPolicy(...))``), or the core for its
own task runs — and otherwise from :data:`OTHER_GROUP`; ``[scheduler.groups.*]``
overrides any of them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from toolang_core.config.model import GroupConfig, SchedulerConfig
from toolang_core.store.types import GroupPolicy, NewTurnRequest, Strategy, SubmitRules

OTHER_GROUP: Final = GroupPolicy(priority=20)
"""The generic fallback for a group that neither its source nor the configuration
describes: priority 20, enqueued, no running cap."""


class AdmissionPolicy:
    """Resolves the rules of each submission and the running caps of each group."""

    def __init__(
        self, config: SchedulerConfig, defaults: Mapping[str, GroupPolicy] | None = None
    ) -> None:
        """``defaults``: each known group's own defaults, by group name (what turn
        sources declared); ``config``'s ``[scheduler.groups]`` is laid over them."""
        self.max_running = config.max_running
        self.aging_seconds = config.aging_seconds
        self._groups = dict(defaults or {})
        for name, override in config.groups.items():
            self._groups[name] = _merge(self._groups.get(name, OTHER_GROUP), override)
        self._rules: dict[tuple[str, int | None, Strategy | None], SubmitRules] = {}
        """Rules already resolved, by what decides them: each submission needs them."""

    def group(self, name: str) -> GroupPolicy:
        return self._groups.get(name, OTHER_GROUP)

    @functools.cached_property
    def caps(self) -> Mapping[str, int]:
        """``max_running`` of every group that has one (the groups never change)."""
        return MappingProxyType(
            {n: g.max_running for n, g in self._groups.items() if g.max_running is not None}
        )

    @property
    def groups(self) -> Mapping[str, GroupPolicy]:
        return dict(self._groups)

    def rules_for(self, request: NewTurnRequest) -> SubmitRules:
        """The rules one submission is stored under (explicit request fields win)."""
        group_name = request.thread_group or request.source
        key = (group_name, request.priority, request.strategy)
        rules = self._rules.get(key)
        if rules is None:
            if len(self._rules) >= 1024:  # group names come from requests: stay bounded
                self._rules.clear()
            rules = self._rules[key] = self._resolve(*key)
        return rules

    def _resolve(
        self, group_name: str, priority: int | None, strategy: Strategy | None
    ) -> SubmitRules:
        group = self.group(group_name)
        return SubmitRules(
            thread_group=group_name,
            priority=priority if priority is not None else group.priority,
            strategy=strategy or group.strategy,
            max_queued=group.max_queued,
            overflow=group.overflow,
            aging_seconds=self.aging_seconds,
        )


def _merge(base: GroupPolicy, override: GroupConfig) -> GroupPolicy:
    return GroupPolicy(
        priority=override.priority if override.priority is not None else base.priority,
        strategy=override.strategy or base.strategy,
        max_running=override.max_running if override.max_running is not None else base.max_running,
        max_queued=override.max_queued if override.max_queued is not None else base.max_queued,
        overflow=override.overflow or base.overflow,
    )
