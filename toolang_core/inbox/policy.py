"""Admission policy: priorities, budgets and strategies, from configuration.

Each thread group (by default the name of the source that submits to it) has a
priority, a ``max_running`` budget, a ``max_queued`` limit with an overflow rule, and a
busy-thread strategy. The five built-in sources have defaults; ``[scheduler.groups.*]``
overrides any of them and configures groups of other sources.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import attrs

from toolang_core.config.model import GroupConfig, SchedulerConfig
from toolang_core.store.types import NewTurnRequest, Overflow, Strategy, SubmitRules


@attrs.frozen
class GroupPolicy:
    priority: int
    strategy: Strategy = "enqueue"
    max_running: int | None = None
    max_queued: int | None = None
    overflow: Overflow = "reject"


DEFAULT_GROUPS: Final[Mapping[str, GroupPolicy]] = {
    "chat": GroupPolicy(priority=40),
    "invoke": GroupPolicy(priority=30),
    "task": GroupPolicy(priority=20, strategy="coalesce", max_running=4),
    "chore": GroupPolicy(priority=10, strategy="coalesce"),
    "will": GroupPolicy(priority=0, strategy="coalesce", max_running=1),
}
"""chat > invoke > task > chore > will; tasks, chores and will coalesce. Background work
has budgets: at most four task turns (tasks and task runs) and one will turn at once."""

OTHER_GROUP: Final = GroupPolicy(priority=20)


class AdmissionPolicy:
    """Resolves the rules of each submission and the running caps of each group."""

    def __init__(self, config: SchedulerConfig) -> None:
        self.max_running = config.max_running
        self.aging_seconds = config.aging_seconds
        self._groups = dict(DEFAULT_GROUPS)
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
