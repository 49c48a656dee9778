"""Schedules: RRULE, cron and intervals, anchored to occurrences."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, strategies as st

from toolang_core.schedule import Schedule, ScheduleError

A = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


H = 3600.0


@pytest.mark.parametrize(
    ("text", "kind", "latest", "following"),
    [
        ("FREQ=HOURLY;INTERVAL=2", "rrule", A + 4 * H, A + 6 * H),
        ("*/15 * * * *", "cron", A + 5 * H + 15 * 60, A + 5 * H + 30 * 60),
        ("every 90 minutes", "interval", A + 4.5 * H, A + 6 * H),
    ],
)
def test_latest_and_next_occurrence(text, kind, latest, following):
    schedule = Schedule(text, A)
    now = A + 5 * H + 17 * 60
    assert schedule.kind == kind
    assert schedule.latest(now) == latest
    assert schedule.next_after(now) == following


@pytest.mark.parametrize("text", ["FREQ=HOURLY", "0 * * * *", "every 1 hour"])
def test_an_occurrence_is_its_own_latest(text):
    assert Schedule(text, A).latest(A + 3 * H) == A + 3 * H


@pytest.mark.parametrize("text", ["FREQ=HOURLY", "0 * * * *", "every 1 hour"])
def test_nothing_is_due_before_the_anchor(text):
    assert Schedule(text, A).latest(A - 1) is None


def test_an_rrule_with_its_own_dtstart_uses_it():
    schedule = Schedule("DTSTART:20260101T120000Z\nRRULE:FREQ=DAILY", A)
    assert schedule.latest(A + 36 * H) == A + 36 * H
    assert schedule.next_after(A) == A + 12 * H


def test_a_finite_rrule_ends():
    assert Schedule("FREQ=HOURLY;COUNT=2", A).next_after(A + 5 * H) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty schedule"),
        ("whenever", "cannot read schedule"),
        ("FREQ=SOMETIMES", "cannot read RRULE"),
        ("every 0 seconds", "must be positive"),
        ("every few hours", "cannot read interval"),
        # dateutil reads INTERVAL=0 and then steps forever (a hang at 100 % CPU)
        ("FREQ=SECONDLY;INTERVAL=0", "INTERVAL=0 must be 1 or more"),
        ("DTSTART:20250101T000000Z\nRRULE:FREQ=MINUTELY;interval=0", "INTERVAL=0 must be 1"),
        ("FREQ=DAILY;COUNT=0", "COUNT=0 must be 1 or more"),
        ("0 0 31 2 *", "never fires: no date matches"),  # croniter's 'failed to find prev date'
        # dateutil looks until the year 9999: tens of seconds a call at this frequency
        ("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "never fires: no month it allows has day"),
        ("FREQ=YEARLY;BYMONTH=4,6;BYMONTHDAY=31", "never fires"),
        # the day comes from the start: 30 January, in February
        ("DTSTART:20260130T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2", "day\\(s\\) 30"),
    ],
)
def test_bad_schedules_say_how_to_write_one(text, message):
    with pytest.raises(ScheduleError, match=message):
        Schedule(text, A)


@given(
    text=st.sampled_from(["FREQ=MINUTELY;INTERVAL=7", "*/7 * * * *", "every 420 seconds"]),
    offset=st.floats(min_value=0, max_value=30 * 86400, allow_nan=False),
)
def test_latest_is_at_or_before_now_and_next_is_after(text, offset):
    schedule = Schedule(text, A)
    now = A + offset
    latest, following = schedule.latest(now), schedule.next_after(now)
    assert latest is None or latest <= now
    assert following is not None and following > now
    if latest is not None:
        assert schedule.next_after(latest) > latest


RULES = [
    "FREQ=MINUTELY;INTERVAL=7",
    "FREQ=HOURLY;INTERVAL=5;BYMINUTE=0,30",
    "FREQ=DAILY;BYHOUR=9,17",
    "FREQ=DAILY;INTERVAL=3;BYHOUR=9;BYMINUTE=15",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;BYHOUR=8",
    "FREQ=WEEKLY;WKST=SU;INTERVAL=3;BYDAY=SU,WE",
    "FREQ=MONTHLY;BYDAY=-1FR",
    "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31",
    "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=YEARLY;INTERVAL=2;BYYEARDAY=100,-1",
    "FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO",
    "FREQ=DAILY;COUNT=400",
    "FREQ=HOURLY;UNTIL=20260301T000000Z",
    "DTSTART:20251203T101500Z\nRRULE:FREQ=MINUTELY;INTERVAL=13",
]


@given(
    text=st.sampled_from(RULES),
    # (the reference walks every occurrence from the start: kept to months, and a few)
    offsets=st.lists(st.floats(min_value=-86400, max_value=120 * 86400), min_size=1, max_size=5),
)
def test_an_rrule_answers_as_dateutil_walking_from_its_start(text, offsets):
    """Restarted at the latest occurrence it found (to answer in microseconds, not
    seconds, however old the rule), a schedule gives what dateutil gives walking
    every occurrence from the start, for queries in any order."""
    from dateutil.rrule import rrulestr

    schedule = Schedule(text, A)
    whole = rrulestr(text) if "DTSTART" in text else rrulestr(text, dtstart=_dt(A))
    for offset in offsets:
        now = A + offset
        before = whole.before(_dt(now), inc=True)
        after = whole.after(_dt(now))
        assert schedule.latest(now) == (None if before is None else before.timestamp())
        assert schedule.next_after(now) == (None if after is None else after.timestamp())


def test_an_old_minutely_rrule_walks_from_its_latest_occurrence_not_its_start():
    """A minutely rule started long ago walked every minute since (seconds a call,
    on the event loop); after the one walk, each call starts at the occurrence found
    last (a minute or two back)."""
    schedule = Schedule("DTSTART:20250601T000000Z\nRRULE:FREQ=MINUTELY", A)
    for n in range(50):
        now = A + 86400 + 61 * n
        assert schedule.latest(now) <= now < schedule.next_after(now)
        start = schedule._rule_near(now)._dtstart.timestamp()
        assert now - 120 <= start <= now
