"""Recurring schedules for turn sources: RFC 5545 RRULEs, cron expressions, intervals.

A schedule is anchored to its occurrences, never to when work finished: a long turn
does not shift the next occurrence, and occurrences missed while the runtime was down
collapse into one catch-up (:meth:`Schedule.latest` gives the newest one that is due).
RRULEs are read by python-dateutil and cron expressions by croniter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from dateutil.rrule import rrule, rruleset


class ScheduleError(ValueError):
    """A schedule string could not be understood; the message says how to write one."""


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


@attrs.frozen
class Schedule:
    """One recurring schedule. ``anchor`` is the POSIX time occurrences count from."""

    text: str
    anchor: float
    kind: str = attrs.field(init=False)
    _known: dict[str, Any] = attrs.field(init=False, factory=dict, eq=False, repr=False)
    """An RRULE's parsed rule and the latest occurrence found (:meth:`_rule_near`)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.text))
        self.latest(self.anchor)  # parse now, so a bad schedule fails where it is declared

    def latest(self, now: float) -> float | None:
        """The newest occurrence at or before ``now`` (and not before the anchor)."""
        if self.kind == "interval":
            every = _interval(self.text)
            if now < self.anchor:
                return None
            return self.anchor + ((now - self.anchor) // every) * every
        if self.kind == "rrule":
            found = self._rule_near(now).before(_dt(now), inc=True)
            self._found(found)
            return None if found is None else found.timestamp()
        from croniter import CroniterBadDateError, croniter

        if now < self.anchor:
            return None
        # croniter steps strictly before its start, so start a second later to include
        # ``now`` itself, and step once more if that overshoots.
        steps = croniter(self.text, _dt(now + 1))
        try:
            stamp: float = steps.get_prev(datetime).timestamp()
            if stamp > now:
                stamp = steps.get_prev(datetime).timestamp()
        except CroniterBadDateError:  # e.g. '0 0 31 2 *': the 31st of February
            raise ScheduleError(
                f"cron expression {self.text!r} never fires: no date matches all its fields"
            ) from None
        return stamp if stamp >= self.anchor else None

    def next_after(self, now: float) -> float | None:
        """The first occurrence strictly after ``now`` (``None`` when the rule ended)."""
        if self.kind == "interval":
            every = _interval(self.text)
            if now < self.anchor:
                return self.anchor
            return self.anchor + ((now - self.anchor) // every + 1) * every
        if self.kind == "rrule":
            rule = self._rule_near(now)
            if "at" not in self._known and self._known.get("restarts"):
                self._found(rule.before(_dt(now), inc=True))  # once: then from there
                rule = self._rule_near(now)
            found = rule.after(_dt(now))
            return None if found is None else found.timestamp()
        from croniter import croniter

        start = max(now, self.anchor)
        stamp: float = croniter(self.text, _dt(start)).get_next(datetime).timestamp()
        return stamp

    def _rule_near(self, now: float) -> rrule | rruleset:
        """The RRULE, restarted at its latest occurrence found so far when that is at or
        before ``now``: dateutil walks every occurrence from the start to answer, so a
        minutely rule started a year ago took seconds a call, on the event loop.

        Restarting at an occurrence yields the same occurrences from there on for a
        rule without ``COUNT`` (counted from the start) or ``BYWEEKNO`` (a week of one
        year may fall in the year before) that is one rule (no ``RDATE``/``EXDATE``):
        every default (the day, weekday, month, time) comes from the start, which an
        occurrence shares, and intervals step from an occurrence's period."""
        known = self._known
        rule: rrule | rruleset | None = known.get("rule")
        if rule is None:
            rule = known["rule"] = _rrule(self.text, self.anchor)
            _check_dates(self.text, rule)
            known["restarts"] = _single(rule) and not (
                _part(rule, "count") or _part(rule, "byweekno")
            )
        at = known.get("at")
        if not known["restarts"] or at is None or at.timestamp() > now:
            return rule
        return rule.replace(dtstart=at)  # type: ignore[union-attr]  # one rule (restarts)

    def _found(self, occurrence: datetime | None) -> None:
        """Remember ``occurrence`` if it is later than the latest found so far."""
        at = self._known.get("at")
        if occurrence is not None and (at is None or occurrence > at):
            self._known["at"] = occurrence


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _check_dates(text: str, rule: rrule | rruleset) -> None:
    """:raises ScheduleError: the rule's days of the month exist in none of its
    months (``BYMONTH=2;BYMONTHDAY=30``, or ``FREQ=YEARLY;BYMONTH=2`` started on the
    30th, whose day it keeps): dateutil would look for an occurrence until the year
    9999 (tens of seconds a call at a sub-daily frequency)."""
    if not _single(rule):
        return
    days = _part(rule, "bymonthday")
    if not days or _part(rule, "bynmonthday"):  # counting from the end: always exists
        return
    months = _part(rule, "bymonth") or range(1, 13)
    if not any(day <= _MONTH_DAYS[month - 1] for month in months for day in days):
        raise ScheduleError(
            f"RRULE {text!r} never fires: no month it allows has day(s) "
            f"{', '.join(map(str, sorted(days)))}"
        )


def _single(rule: rrule | rruleset) -> bool:
    """One rule (not a set with ``RDATE``, ``EXDATE``, ``EXRULE``)."""
    from dateutil.rrule import rrule as single

    return isinstance(rule, single)


def _part(rule: rrule | rruleset, name: str) -> Any:
    """A part of a parsed rule, as dateutil keeps it (``_count``: it has no getters)."""
    return getattr(rule, f"_{name}", None)


def _kind(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        raise ScheduleError(
            "empty schedule: write an RRULE, a cron expression or 'every N seconds'"
        )
    if stripped.lower().startswith("every "):
        _interval(stripped)
        return "interval"
    if "FREQ=" in stripped.upper():
        return "rrule"
    from croniter import croniter

    if croniter.is_valid(stripped):
        return "cron"
    raise ScheduleError(
        f"cannot read schedule {text!r}: expected an RRULE (e.g. 'FREQ=HOURLY;INTERVAL=2'), "
        "a cron expression (e.g. '*/15 * * * *') or an interval (e.g. 'every 3600 seconds')"
    )


_UNITS = {
    "second": 1,
    "seconds": 1,
    "s": 1,
    "minute": 60,
    "minutes": 60,
    "m": 60,
    "hour": 3600,
    "hours": 3600,
    "h": 3600,
    "day": 86400,
    "days": 86400,
    "d": 86400,
}


def _interval(text: str) -> float:
    parts = text.strip().lower().split()
    try:
        _, amount, unit = parts
        seconds = float(amount) * _UNITS[unit]
    except (ValueError, KeyError):
        raise ScheduleError(
            f"cannot read interval {text!r}: write 'every N seconds|minutes|hours|days'"
        ) from None
    if seconds <= 0:
        raise ScheduleError(f"interval {text!r} must be positive")
    return seconds


def _rrule(text: str, anchor: float) -> rrule | rruleset:
    from dateutil.rrule import rrulestr

    _positive_parts(text)
    try:
        # A rule with its own DTSTART keeps it; otherwise it starts at the anchor.
        if "DTSTART" in text.upper():
            return rrulestr(text)
        return rrulestr(text, dtstart=_dt(anchor))
    except (ValueError, TypeError) as exc:
        raise ScheduleError(f"cannot read RRULE {text!r}: {exc}") from None


_COUNTED_PART = re.compile(r"(?:^|[;:\s])(INTERVAL|COUNT)=([^;\s]*)", re.IGNORECASE)


def _positive_parts(text: str) -> None:
    """:raises ScheduleError: an ``INTERVAL`` or ``COUNT`` below 1 (dateutil reads
    them, then steps forever looking for an occurrence of ``INTERVAL=0``)."""
    for name, value in _COUNTED_PART.findall(text):
        try:
            number = int(value)
        except ValueError:
            continue  # dateutil's own error names it
        if number < 1:
            raise ScheduleError(
                f"cannot read RRULE {text!r}: {name.upper()}={value} must be 1 or more"
            )
