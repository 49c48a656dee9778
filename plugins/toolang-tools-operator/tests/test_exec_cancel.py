"""A canceled turn stops its `exec_run` command: the whole process group is gone
(SIGTERM, then SIGKILL after the grace) before the command's 30 s of work are done, so
its later effect never happens, and the trace says the call was canceled. Real
`toolang run`, real shell, real signals — with the sandbox off ([tools] sandbox =
"off"), where the process group is all there is; a sandbox's whole PID namespace is
stopped the same way (tests/integration/test_sandbox_e2e.py). The bound is that work,
not seconds: a busy machine may take its time to stop the group, never 30 s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from operator_kit import (
    UNSANDBOXED,
    ServedHome,
    exec_step,
    install_scripted_model,
    live_members,
    wait_for,
)

# Writes its process group id (the shell is the group's leader), then works for 30 s.
SLOW = "if [ -e pgid ]; then echo second turn; else echo $$ > pgid; sleep 30; touch marker; fi"
# The same, with a shell that ignores SIGTERM: only the SIGKILL after the grace stops it.
STUBBORN = "trap '' TERM; echo $$ > pgid; sleep 30; touch marker"


@pytest.fixture
def home(tmp_path: Path) -> Iterator[ServedHome]:
    site = tmp_path / "site"
    install_scripted_model(site)
    served = ServedHome(
        tmp_path / "home", site, [exec_step(SLOW), {"text": "done"}], config=UNSANDBOXED
    )
    yield served
    served.stop()


def started_group(home: ServedHome) -> int:
    pgid_file = home.workspace / "pgid"
    wait_for("the command to start", lambda: pgid_file.exists() and pgid_file.read_text())
    pgid = int(pgid_file.read_text())
    assert live_members(pgid), "the command should be running"
    return pgid


def assert_group_stopped_before_its_work_was_done(home: ServedHome, pgid: int) -> None:
    wait_for(f"process group {pgid} to be gone", lambda: not live_members(pgid))
    assert not (home.workspace / "marker").exists(), "the command ran to its end"


def assert_canceled_in_trace(home: ServedHome, turn_id: str) -> None:
    shown = home.wait_until_ended(turn_id)
    assert shown["turn"]["status"] == "canceled"
    calls = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    assert len(calls) == 1, calls  # the canceled call, and no result of it
    assert calls[0]["data"]["result"]["error_type"] == "canceled"
    assert calls[0]["data"]["call"]["name"] == "exec_run"
    trace = home.cli("turns", "trace", turn_id)
    assert trace.returncode == 0, trace.stderr
    assert "canceled" in trace.stdout


def test_toolang_cancel_kills_the_commands_process_group(home):
    home.start()
    turn_id = home.submit("run the slow thing", "--thread", "chat:cancel")
    pgid = started_group(home)

    canceled = home.cli("cancel", turn_id)
    assert canceled.returncode == 0, canceled.stderr

    assert_group_stopped_before_its_work_was_done(home, pgid)
    assert_canceled_in_trace(home, turn_id)


def test_an_interrupting_request_kills_the_running_command(home):
    home.start()
    first = home.submit("run the slow thing", "--thread", "chat:interrupt")
    pgid = started_group(home)

    second = home.submit("never mind", "--thread", "chat:interrupt", "--strategy", "interrupt")

    assert_group_stopped_before_its_work_was_done(home, pgid)
    assert_canceled_in_trace(home, first)
    assert home.wait_until_ended(second)["turn"]["status"] == "completed"


def test_a_command_ignoring_sigterm_is_killed_after_the_grace(tmp_path):
    site = tmp_path / "site"
    install_scripted_model(site)
    home = ServedHome(
        tmp_path / "home", site, [exec_step(STUBBORN), {"text": "done"}], config=UNSANDBOXED
    )
    home.start()
    try:
        turn_id = home.submit("run the stubborn thing", "--thread", "chat:stubborn")
        pgid = started_group(home)
        assert home.cli("cancel", turn_id).returncode == 0
        # Only the SIGKILL after the grace (kill_grace_seconds = 1 by default) stops it
        # before its 30 s: its shell and its sleep ignore SIGTERM.
        assert_group_stopped_before_its_work_was_done(home, pgid)
        assert home.wait_until_ended(turn_id)["turn"]["status"] == "canceled"
    finally:
        home.stop()
