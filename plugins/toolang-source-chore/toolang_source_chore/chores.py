"""Chores: where they are declared, their schedules, and when they come due."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import attrs
import structlog

from toolang_core import (
    ExecutionStore,
    Inbox,
    NewTurnRequest,
    Record,
    Recurring,
    Schedule,
    ScheduleError,
)
from toolang_source_chore.settings import ChoreSettings

log = structlog.get_logger("toolang.source.chore")

STATE = "source-chore.state"
RECORDS = "chore"
"""Record kind of chores kept in the execution store (added at run time, e.g. by the
automator's ``cron_add``): key = chore key, data = :data:`RECORD_KEYS` (other keys are
the writer's own and ignored)."""
RECORD_KEYS = {"schedule", "input", "agent", "paused", "owner", "thread_id", "name", "start"}
_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_FILE_KEYS = {"schedule", "agent", "paused", "start"}


@attrs.frozen
class Chore:
    key: str
    schedule: Schedule
    input: str
    agent: str | None
    paused: bool
    origin: str
    owner: str | None = None
    thread_id: str | None = None
    added_at: float | None = None
    """When a chore stored at run time was added (its record's ``start``): its
    occurrences count from then, however late this source learned of it."""


def _anchor(start: str | None, fallback: float, where: str) -> float:
    if start is None:
        return fallback
    try:
        return datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ScheduleError(f"{where}: start {start!r} is not an ISO 8601 date-time") from None


def load_chores(
    settings: ChoreSettings,
    base_dir: Path,
    anchors: Callable[[str], float],
    stored: Sequence[Record] = (),
) -> tuple[list[Chore], list[str]]:
    """Every declared chore (config, files, then ``stored`` records) and one problem
    line per bad declaration (never raises)."""
    chores: list[Chore] = []
    problems: list[str] = []
    for spec in settings.chores:
        where = f"[plugins.source-chore] chore {spec.key!r}"
        try:
            if not _KEY.match(spec.key):
                raise ScheduleError(
                    f"{where}: key must be lowercase letters, digits, '.', '_', '-'"
                )
            schedule = Schedule(spec.schedule, _anchor(spec.start, anchors(spec.key), where))
        except ScheduleError as exc:
            problems.append(str(exc) if str(exc).startswith(where) else f"{where}: {exc}")
            continue
        chores.append(Chore(spec.key, schedule, spec.input, spec.agent, spec.paused, "config"))
    directory = settings.dir if settings.dir is not None else base_dir / "chores"
    if directory.is_dir():
        for path in sorted(directory.glob("*.md")):
            chore, problem = _load_file(path, anchors)
            if problem:
                problems.append(problem)
            elif chore is not None:
                chores.append(chore)
    for record in stored:
        chore, problem = _from_record(record, anchors)
        if problem:
            problems.append(problem)
        elif chore is not None:
            chores.append(chore)
    seen: dict[str, str] = {}
    unique = []
    for chore in chores:
        if chore.key in seen:
            problems.append(
                f"chore {chore.key!r} is declared twice ({seen[chore.key]} and "
                f"{chore.origin}); the first is used"
            )
            continue
        seen[chore.key] = chore.origin
        unique.append(chore)
    return unique, problems


def _load_file(path: Path, anchors: Callable[[str], float]) -> tuple[Chore | None, str | None]:
    import frontmatter
    import yaml

    key = path.stem
    if not _KEY.match(key):
        return None, f"{path}: the file name must be a chore key (lowercase letters, digits, .-_)"
    try:
        post = frontmatter.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}: cannot read: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        return None, f"{path}{line}: invalid front matter: {getattr(exc, 'problem', exc)}"
    meta = post.metadata
    unknown = sorted(set(meta) - _FILE_KEYS)
    if unknown:
        log.warning("chore.unknown_keys", path=str(path), keys=unknown)
    schedule = meta.get("schedule")
    if not isinstance(schedule, str):
        return None, f"{path}: front matter needs `schedule:` (an RRULE, cron or interval)"
    try:
        parsed = Schedule(
            schedule,
            _anchor(str(meta["start"]) if meta.get("start") else None, anchors(key), str(path)),
        )
    except ScheduleError as exc:
        return None, f"{path}: {exc}"
    agent = meta.get("agent")
    return Chore(
        key,
        parsed,
        post.content.strip(),
        str(agent) if agent else None,
        bool(meta.get("paused", False)),
        str(path),
    ), None


def _from_record(
    record: Record, anchors: Callable[[str], float]
) -> tuple[Chore | None, str | None]:
    where = f"stored chore {record.key!r}"
    data = record.data
    if not _KEY.match(record.key):
        return None, f"{where}: key must be lowercase letters, digits, '.', '_', '-'"
    if not isinstance(data.get("schedule"), str):
        return None, f"{where}: `schedule` must be a string (an RRULE, cron or interval)"
    start = data.get("start")
    added_at = float(start) if isinstance(start, int | float) else None
    try:
        anchor = added_at if added_at is not None else anchors(record.key)
        schedule = Schedule(str(data["schedule"]), anchor)
    except ScheduleError as exc:
        return None, f"{where}: {exc}"
    owner = data.get("owner")
    added = f"store (by {owner})" if owner else "store"
    return Chore(
        record.key,
        schedule,
        str(data.get("input") or ""),
        str(data["agent"]) if data.get("agent") else None,
        bool(data.get("paused", False)),
        added,
        str(owner) if owner else None,
        str(data["thread_id"]) if data.get("thread_id") else None,
        added_at,
    ), None


class ChoreBoard:
    """The declared chores, with their occurrences remembered in the store."""

    def __init__(
        self,
        settings: ChoreSettings,
        base_dir: Path,
        store: ExecutionStore,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.base_dir = base_dir
        self.store = store
        self.clock = clock
        self.recurring = Recurring(store, STATE, clock=clock)
        self.chores: list[Chore] = []
        self.problems: list[str] = []

    def reload(self) -> None:
        chores, problems = load_chores(
            self.settings, self.base_dir, self.recurring.anchor, self.store.list_records(RECORDS)
        )
        for problem in set(problems) - set(self.problems):
            log.error("chore.invalid", problem=problem)
        self.chores, self.problems = chores, problems

    def last_fired(self, key: str) -> float | None:
        return self.recurring.last(key)

    def submit_due(self, inbox: Inbox) -> list[str]:
        """Submit one turn per chore whose newest occurrence was not handed over yet."""
        fired = []
        for chore in self.chores:
            due = self.recurring.due(
                chore.key, chore.schedule, paused=chore.paused, since=chore.added_at
            )
            if due is not None:
                self.submit(inbox, chore, occurrence=due[0], previous=due[1])
                fired.append(chore.key)
        return fired

    def submit(
        self,
        inbox: Inbox,
        chore: Chore,
        *,
        occurrence: float | None,
        previous: float | None = None,
        manual: bool = False,
    ) -> str:
        result = inbox.submit(
            NewTurnRequest(
                source="chore",
                thread_id=chore.thread_id or f"chore:{chore.key}",
                input=chore.input or chore.key,
                agent=chore.agent,
                dedupe_key=chore.key,
                sender="self",
                owner=chore.owner,
                strategy="coalesce",
                meta={
                    "chore": {
                        "key": chore.key,
                        "occurrence": occurrence,
                        "previous": previous,
                        "manual": manual,
                    }
                },
            )
        )
        return result.id

    def next_due(self, now: float) -> float | None:
        times = [
            t for c in self.chores if not c.paused if (t := c.schedule.next_after(now)) is not None
        ]
        return min(times) if times else None
