"""toolang-source-chore, alone (time is passed explicitly; nothing sleeps)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import toolang_source_chore as plugin
from toolang_core.runtime.inbox import Inbox
from toolang_core.store.types import TurnFilter, TurnStatus
from toolang_source_chore.chores import ChoreBoard
from toolang_source_chore.settings import ChoreSettings, ChoreSpec

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()
ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-chore"}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def setup(toolang_runtime, tmp_path, clock):
    runtime = toolang_runtime(ECHO, plugins={"source-chore": plugin})
    store = runtime.open_store()
    inbox = Inbox(store, runtime.policy, clock=clock)

    def board(*specs: ChoreSpec, directory: Path | None = None) -> ChoreBoard:
        settings = ChoreSettings(chores=specs, dir=directory or tmp_path / "none")
        b = ChoreBoard(settings, tmp_path, store, clock=clock)
        b.reload()
        return b

    return board, inbox, store


def turns(store, key):
    return store.list_turns(TurnFilter(thread_id=f"chore:{key}"))


def test_a_new_chore_fires_at_its_next_occurrence_not_at_once(setup, clock):
    board, inbox, store = setup
    b = board(ChoreSpec("sweep", "FREQ=HOURLY", "Sweep."))
    assert b.submit_due(inbox) == []
    clock.now += 1800
    assert b.submit_due(inbox) == []
    clock.now += 1800
    assert b.submit_due(inbox) == ["sweep"]
    (turn,) = turns(store, "sweep")
    assert (turn.source, turn.input, turn.sender) == ("chore", "Sweep.", "self")
    assert turn.meta["chore"]["occurrence"] == T0 + 3600


def test_missed_occurrences_collapse_into_one_catch_up(setup, clock):
    board, inbox, store = setup
    b = board(ChoreSpec("sweep", "FREQ=HOURLY", "Sweep."))
    b.submit_due(inbox)
    clock.now += 5 * 3600 + 60  # the runtime was down for five occurrences
    assert b.submit_due(inbox) == ["sweep"]
    assert b.submit_due(inbox) == []
    (turn,) = turns(store, "sweep")
    assert turn.meta["chore"]["occurrence"] == T0 + 5 * 3600


def test_at_most_one_turn_per_chore_is_pending(setup, clock):
    board, inbox, store = setup
    b = board(ChoreSpec("sweep", "*/10 * * * *", "Sweep."))
    b.submit_due(inbox)
    for _ in range(3):
        clock.now += 600
        b.submit_due(inbox)
    (pending,) = turns(store, "sweep")
    assert pending.status is TurnStatus.QUEUED
    assert pending.meta["chore"]["occurrence"] == T0 + 1800  # the latest occurrence won


def test_the_schedule_follows_occurrences_not_completions(setup, clock):
    board, inbox, store = setup
    b = board(ChoreSpec("sweep", "FREQ=HOURLY", "Sweep."))
    b.submit_due(inbox)
    clock.now += 3600
    b.submit_due(inbox)
    (turn,) = store.claim(run_id="r", limit=1, now=clock.now, lease_seconds=30, caps={})
    clock.now += 3000  # a long turn
    store.finish(turn.id, run_id="r", attempt=1, status=TurnStatus.COMPLETED, now=clock.now)
    assert b.next_due(clock.now) == T0 + 2 * 3600


def test_chore_files_are_read_and_a_bad_one_never_drops_the_others(setup, tmp_path):
    board, _inbox, _store = setup
    chores = tmp_path / "chores"
    chores.mkdir()
    (chores / "good.md").write_text("---\nschedule: FREQ=DAILY\nagent: librarian\n---\nRead.\n")
    (chores / "bad-yaml.md").write_text("---\nschedule: [unclosed\n---\nx\n")
    (chores / "bad-schedule.md").write_text("---\nschedule: whenever\n---\nx\n")
    (chores / "no-schedule.md").write_text("---\nagent: x\n---\nx\n")
    b = board(directory=chores)
    assert [(c.key, c.agent, c.input) for c in b.chores] == [("good", "librarian", "Read.")]
    problems = "\n".join(b.problems)
    # The unclosed bracket is noticed at the closing delimiter, line 3 of the file.
    assert f"{chores / 'bad-yaml.md'}:3: invalid front matter" in problems
    assert "bad-schedule.md: cannot read schedule 'whenever'" in problems
    assert "no-schedule.md: front matter needs `schedule:`" in problems


def test_paused_chores_do_not_fire(setup, clock):
    board, inbox, _store = setup
    b = board(ChoreSpec("later", "FREQ=HOURLY", paused=True))
    b.submit_due(inbox)
    clock.now += 7200
    assert b.submit_due(inbox) == []


def test_an_explicit_start_anchors_the_schedule(setup, clock):
    board, _inbox, _store = setup
    b = board(ChoreSpec("half", "every 1 hours", start="2026-03-02T08:30:00Z"))
    assert b.next_due(clock.now) == T0 + 1800


def test_commands_list_and_run(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    toolang_home.write_config(
        ECHO + '[plugins.source-chore]\nchores = [{ key = "sweep", schedule = "FREQ=HOURLY", '
        'input = "Sweep." }]\n'
    )
    listed = toolang_cli("chores", "list", env=ENV)
    assert listed.returncode == 0, listed.stderr
    assert "sweep" in listed.stdout and "FREQ=HOURLY" in listed.stdout
    turn_id = toolang_cli("chores", "run", "sweep", env=ENV).stdout.strip()
    again = toolang_cli("chores", "run", "sweep", env=ENV).stdout.strip()
    assert turn_id == again  # coalesced into the pending one
    missing = toolang_cli("chores", "run", "nope", env=ENV)
    assert (missing.returncode, "no chore 'nope'" in missing.stderr) == (2, True)


def test_an_invalid_chore_in_config_is_a_configuration_error(toolang_cli, toolang_home):
    toolang_home.write_config(
        ECHO + '[plugins.source-chore]\nchores = [{ key = "x", schedule = "never" }]\n'
    )
    result = toolang_cli("chores", "list", env=ENV)
    assert result.returncode == 2
    assert "plugins.source-chore: chores[0] ('x'): schedule: cannot read schedule 'never'" in (
        result.stderr
    )


def test_a_chore_stored_as_a_record_fires_for_its_owner_and_pauses(setup, clock):
    board, inbox, store = setup
    store.put_record(
        "chore",
        "cron.abc",
        {"schedule": "every 60 seconds", "input": "Tick.", "owner": "alice", "name": "tick"},
        now=clock(),
    )
    b = board()
    assert [(c.key, c.origin, c.owner) for c in b.chores] == [
        ("cron.abc", "store (by alice)", "alice")
    ]
    assert b.submit_due(inbox) == []
    clock.now += 60
    assert b.submit_due(inbox) == ["cron.abc"]
    (turn,) = turns(store, "cron.abc")
    assert (turn.owner, turn.input, turn.source) == ("alice", "Tick.", "chore")
    store.put_record(
        "chore",
        "cron.abc",
        {"schedule": "every 60 seconds", "input": "Tick.", "owner": "alice", "paused": True},
        now=clock(),
    )
    b.reload()
    clock.now += 60
    assert b.submit_due(inbox) == []


def test_a_malformed_stored_chore_is_reported_and_the_others_load(setup, clock):
    board, _, store = setup
    store.put_record("chore", "bad", {"schedule": "every banana"}, now=clock())
    store.put_record("chore", "odd", {"schedule": 5}, now=clock())
    store.put_record("chore", "good", {"schedule": "every 5 minutes", "colour": "red"}, now=clock())
    b = board()
    assert [c.key for c in b.chores] == ["good"]  # a key of the writer's own is ignored
    assert len(b.problems) == 2
    assert any("stored chore 'bad'" in p and "every banana" in p for p in b.problems)
    assert any("stored chore 'odd'" in p and "must be a string" in p for p in b.problems)


# -- chores added at run time ----------------------------------------------------------


def add_record(store, key, schedule, *, start, **extra):
    data = {"schedule": schedule, "input": "Tick.", "start": start, **extra}
    store.put_record("chore", key, data, now=start)


def test_a_stored_chore_counts_its_occurrences_from_when_it_was_added(setup, clock):
    """Added at T0, first seen ten seconds later: its occurrences since the add come
    due at once (as one, like any missed ones), not from when the source saw it."""
    board, inbox, store = setup
    add_record(store, "cron.late", "every 3 seconds", start=T0)
    clock.now = T0 + 10
    b = board()
    assert b.submit_due(inbox) == ["cron.late"]
    (turn,) = turns(store, "cron.late")
    assert turn.meta["chore"]["occurrence"] == T0 + 9
    assert turn.meta["chore"]["previous"] == T0  # counted from the add
    clock.now = T0 + 12
    assert b.submit_due(inbox) == ["cron.late"]
    assert max(t.meta["chore"]["occurrence"] for t in turns(store, "cron.late")) == T0 + 12


def test_a_stored_chore_seen_before_its_first_occurrence_fires_at_it(setup, clock):
    board, inbox, store = setup
    add_record(store, "cron.soon", "every 3 seconds", start=T0)
    clock.now = T0 + 1
    b = board()
    assert b.submit_due(inbox) == []
    assert b.next_due(clock.now) == T0 + 3
    clock.now = T0 + 3
    assert b.submit_due(inbox) == ["cron.soon"]
    (turn,) = turns(store, "cron.soon")
    assert (turn.meta["chore"]["occurrence"], turn.meta["chore"]["previous"]) == (T0 + 3, T0)


def test_a_configured_chore_still_waits_for_its_next_occurrence(setup, clock):
    """Only a chore that says when it was added counts from then: one in the
    configuration, first seen now, fires at its next occurrence (its start may be long
    past)."""
    board, inbox, store = setup
    clock.now = T0 + 10
    b = board(ChoreSpec("sweep", "every 3 seconds", "Sweep.", start="2026-03-02T09:00:00Z"))
    assert b.submit_due(inbox) == []
    assert turns(store, "sweep") == []


def test_the_running_source_reads_a_chore_added_at_run_time_when_woken(toolang_runtime, tmp_path):
    """With an hour between two looks at the chores, a wake-up (``Runtime.wake_source``,
    what ``cron_add`` calls) makes the running source read a new chore at once."""
    import asyncio

    runtime = toolang_runtime(
        ECHO + "[plugins.source-chore]\npoll_seconds = 3600\n",
        plugins={"source-chore": plugin},
    )

    async def scenario() -> dict:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=["chore"]))
        try:
            await until(lambda: runtime.admitting)
            store = runtime.store
            add_record(store, "cron.new", "every 3600 seconds", start=runtime.clock())
            assert runtime.wake_source("chore") is True
            state = await until(lambda: store.get_record("source-chore.state", "cron.new"))
            return dict(state.data)
        finally:
            stop.set()
            await serving

    async def until(predicate, timeout=60.0):
        deadline = asyncio.get_running_loop().time() + timeout
        while not (found := predicate()):
            assert asyncio.get_running_loop().time() < deadline, "the source never read it"
            await asyncio.sleep(0.02)
        return found

    state = asyncio.run(scenario())
    assert state["last_occurrence"] is not None  # seen, and counted from its start
    assert runtime.wake_source("chore") is False  # not running any more
