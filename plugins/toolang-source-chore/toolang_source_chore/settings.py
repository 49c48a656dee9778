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

    def __attrs_post_init__(self) -> None:
        # Checked with the rest of the configuration (so `toolang doctor` and start-up
        # report it), not only when the source runs: a chore that can never fire, or two
        # declarations of one key, break the operator's intent silently otherwise.
        problems = list(_chore_problems(self.chores))
        if self.poll_seconds <= 0:
            problems.append(f"poll_seconds: expected a number > 0, found {self.poll_seconds}")
        if problems:
            raise ValueError("; ".join(problems))


def _chore_problems(chores: tuple[ChoreSpec, ...]) -> list[str]:
    import re

    from toolang_core import Schedule, ScheduleError

    key_rule = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    problems: list[str] = []
    seen: set[str] = set()
    for index, spec in enumerate(chores):
        where = f"chores[{index}] ({spec.key!r})"
        if not key_rule.match(spec.key):
            problems.append(f"{where}: key must be lowercase letters, digits, '.', '_', '-'")
        elif spec.key in seen:
            problems.append(f"{where}: key {spec.key!r} is declared twice; keys must be unique")
        seen.add(spec.key)
        try:
            Schedule(spec.schedule, 0.0)
        except ScheduleError as exc:
            problems.append(f"{where}: schedule: {exc}")
    return problems
