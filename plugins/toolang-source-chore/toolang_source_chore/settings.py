"""``[plugins.source-chore]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from pathlib import Path

import attrs


@attrs.frozen
class ChoreSpec:
    """One chore as declared in ``[plugins.source-chore] chores``."""

    key: str
    schedule: str
    input: str = ""
    agent: str | None = None
    paused: bool = False
    start: str | None = None


@attrs.frozen
class ChoreSettings:
    """``[plugins.source-chore]``: declared chores, the chore file directory, and the
    longest time between two looks at the schedules."""

    chores: tuple[ChoreSpec, ...] = ()
    dir: Path | None = None
    poll_seconds: float = 30.0
