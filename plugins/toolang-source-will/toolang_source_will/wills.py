"""Wills: where they are, their schedules, and the source that hands them over."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import structlog

from toolang_core import ExecutionStore, Inbox, NewTurnRequest, Recurring, Schedule, ScheduleError
from toolang_source_will import WillSettings

log = structlog.get_logger("toolang.source.will")

STATE = "source-will.state"
_AGENT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@attrs.frozen
class Will:
    agent: str
    schedule: Schedule
    input: str
    paused: bool
    path: Path


def load_wills(directory: Path, anchors: Callable[[str], float]) -> tuple[list[Will], list[str]]:
    """Every ``<agent>/will.md`` under ``directory`` and one problem line per bad one."""
    import frontmatter
    import yaml

    wills: list[Will] = []
    problems: list[str] = []
    if not directory.is_dir():
        return wills, problems
    for path in sorted(directory.glob("*/will.md")):
        agent = path.parent.name
        if not _AGENT.match(agent):
            problems.append(f"{path}: the directory name must be an agent name")
            continue
        try:
            post = frontmatter.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            problems.append(f"{path}{line}: invalid front matter: {getattr(exc, 'problem', exc)}")
            continue
        meta = post.metadata
        interval, text = meta.get("interval"), meta.get("schedule")
        if interval is not None and text is None:
            if isinstance(interval, bool) or not isinstance(interval, int | float):
                problems.append(f"{path}: interval must be a number of seconds, got {interval!r}")
                continue
            text = f"every {interval} seconds"
        if not isinstance(text, str):
            problems.append(f"{path}: front matter needs `interval:` (seconds) or `schedule:`")
            continue
        try:
            schedule = Schedule(text, anchors(agent))
        except ScheduleError as exc:
            problems.append(f"{path}: {exc}")
            continue
        wills.append(Will(agent, schedule, post.content.strip(), bool(meta.get("paused")), path))
    return wills, problems


class WillSource:
    """Places a coalesced, low-priority turn on ``will:<agent>`` at each occurrence."""

    def __init__(self, settings: WillSettings, base_dir: Path) -> None:
        self.settings = settings
        self.directory = settings.dir if settings.dir is not None else base_dir / "agents"
        self.problems: list[str] = []

    def tick(self, inbox: Inbox, store: ExecutionStore) -> float | None:
        recurring = Recurring(store, STATE, clock=inbox.clock)
        wills, problems = load_wills(self.directory, recurring.anchor)
        for problem in set(problems) - set(self.problems):
            log.error("will.invalid", problem=problem)
        self.problems = problems
        for will in wills:
            due = recurring.due(will.agent, will.schedule, paused=will.paused)
            if due is not None:
                inbox.submit(
                    NewTurnRequest(
                        source="will",
                        thread_id=f"will:{will.agent}",
                        agent=will.agent,
                        input=will.input or "Follow your own will.",
                        sender="self",
                        dedupe_key=will.agent,
                        strategy="coalesce",
                        meta={"will": {"agent": will.agent, "occurrence": due[0]}},
                    )
                )
        now = inbox.clock()
        times = [t for w in wills if not w.paused if (t := w.schedule.next_after(now))]
        return min(times) if times else None

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        while not stop.is_set():
            wake = self.tick(inbox, inbox.store)
            now = time.time()
            delay = self.settings.poll_seconds if wake is None else max(0.0, wake - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(delay, self.settings.poll_seconds))
