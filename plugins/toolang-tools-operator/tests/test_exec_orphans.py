"""An `exec_run` command does not outlive a SIGKILLed runtime: its shell dies with the
runtime (PR_SET_PDEATHSIG), and what the shell started in the background — which that
does not reach — is killed by the next start of the runtime, which finds the command's
process group written down in its home. The call is in doubt, and its trace says the
command was killed. Real `toolang run`, real shell, real signals (Linux) — with the sandbox
off ([tools] sandbox = "off"): a sandbox dies whole with the runtime, and the ledger's
sweep of one is tests/test_sandbox_process.py's."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from operator_kit import UNSANDBOXED, ServedHome, install_scripted_model, live_members, wait_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG, /proc")

BEAT = "while :; do date +%s%N >> beat; sleep 0.05; done"
# The shell itself beats: killing the shell stops the heartbeat.
IN_THE_SHELL = f"echo $$ > pgid; {BEAT}"
# A subshell beats: a forked child, which PR_SET_PDEATHSIG does not follow.
IN_THE_BACKGROUND = f"echo $$ > pgid; ({BEAT}) & wait"


def script(command: str) -> list[dict[str, Any]]:
    params = {"command": command, "timeout_seconds": 300}
    return [{"tool_calls": [{"id": "c1", "name": "exec_run", "params": params}]}, {"text": "done"}]


@pytest.fixture
def make_home(tmp_path: Path) -> Iterator[Any]:
    site = tmp_path / "site"
    install_scripted_model(site)
    homes: list[ServedHome] = []

    def make(command: str) -> ServedHome:
        home = ServedHome(tmp_path / "home", site, script(command), config=UNSANDBOXED)
        homes.append(home)
        return home

    yield make
    for home in homes:
        if home.proc is not None and home.proc.poll() is None:
            home.proc.kill()
            home.proc.wait(timeout=30)
        if (home.workspace / "pgid").exists():  # whatever a failed test left beating
            for pid in live_members(int((home.workspace / "pgid").read_text())):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def beats(home: ServedHome) -> int:
    beat = home.workspace / "beat"
    return len(beat.read_text().splitlines()) if beat.exists() else 0


def still(home: ServedHome) -> bool:
    """No beat for 0.3 s (one is written every 50 ms while the command runs)."""
    beat = home.workspace / "beat"
    return time.time() - beat.stat().st_mtime > 0.3


def start_beating(home: ServedHome) -> tuple[str, int]:
    home.start()
    turn_id = home.submit("beat", "--thread", "chat:orphan")
    wait_for("the heartbeat", lambda: beats(home) >= 3)
    return turn_id, int((home.workspace / "pgid").read_text())


def kill_runtime(home: ServedHome) -> None:
    assert home.proc is not None
    home.proc.send_signal(signal.SIGKILL)
    home.proc.wait(timeout=30)
    home.proc = None


def in_doubt_step(home: ServedHome, turn_id: str) -> dict[str, Any]:
    shown = home.wait_until_ended(turn_id)
    assert (shown["turn"]["status"], shown["turn"]["output"]) == ("completed", "done")
    (step,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    assert step["data"]["in_doubt"]["decision"] == "told_model"
    return dict(step)


def test_the_command_dies_with_a_sigkilled_runtime(make_home):
    home = make_home(IN_THE_SHELL)
    turn_id, pgid = start_beating(home)

    kill_runtime(home)
    # Left alone, the command would beat for its 300 s: it stops because it died (the
    # waits end when it has, however long a busy machine takes to get there).
    wait_for("the heartbeat to stop", lambda: still(home))
    wait_for("the group to be gone", lambda: not live_members(pgid))

    home.start()  # the call is in doubt: not run again, the model is told
    step = in_doubt_step(home, turn_id)
    assert "may already have run" in step["data"]["result"]["error"]
    assert "note" not in step["data"]["in_doubt"]  # nothing was left to kill
    assert still(home)  # and it was not run again
    home.stop()


def test_the_next_start_kills_what_the_command_left_running(make_home):
    home = make_home(IN_THE_BACKGROUND)
    turn_id, pgid = start_beating(home)

    kill_runtime(home)
    # The shell died with the runtime; its subshell, which PDEATHSIG does not reach,
    # still beats: an orphan performing the call's effect.
    wait_for("the shell to die", lambda: pgid not in live_members(pgid))
    now = beats(home)
    wait_for("the orphan to beat on", lambda: beats(home) >= now + 5)
    assert live_members(pgid)

    home.start()  # returns once the runtime serves: its sweep ran before
    wait_for("the orphan to be killed", lambda: not live_members(pgid))
    wait_for("the heartbeat to stop", lambda: still(home))

    step = in_doubt_step(home, turn_id)
    note = step["data"]["in_doubt"]["note"]
    assert f"process group {pgid}) was still running" in note and "killed" in note
    told = step["data"]["result"]["error"]
    assert "may already have run" in told and note in told
    trace = home.cli("turns", "trace", turn_id)
    assert trace.returncode == 0, trace.stderr
    assert f"IN DOUBT: {note}" in trace.stdout
    err = home.stop()
    assert "tool.process_orphaned" in err and "killed" in err
