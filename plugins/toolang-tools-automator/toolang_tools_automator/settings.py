"""``[plugins.tools-automator]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from typing import Any, Final

import attrs

NAME: Final = "tools-automator"


def _range(low: float, high: float) -> Any:
    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if not low <= value <= high:
            raise ValueError(f"{attribute.name}: expected {low:g} to {high:g}, found {value}")

    return check


@attrs.frozen
class AutomatorSettings:
    """``[plugins.tools-automator]``.

    ``max_chores``: chores one owner may keep. ``max_workflow_steps``: steps of one
    workflow. ``max_parallel_steps``: steps of one workflow run in flight at once (the
    ``task`` group's ``max_running`` still bounds every task run together).
    ``reconcile_seconds``: how often a serving runtime looks at unfinished workflow runs
    (a finished step advances its run at once; this catches up after a crash).
    """

    max_chores: int = attrs.field(default=100, validator=_range(1, 10_000))
    max_workflow_steps: int = attrs.field(default=50, validator=_range(1, 500))
    max_parallel_steps: int = attrs.field(default=4, validator=_range(1, 100))
    reconcile_seconds: float = attrs.field(default=5.0, validator=_range(0.05, 3600))
