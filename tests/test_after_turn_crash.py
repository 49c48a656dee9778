"""A real runtime process SIGKILLed after a turn's after-turn stages ran (memory write,
events, delivery) and before its after-record (``toolang.turn.after``) was committed:
the record waits for another turn's commit while that turn runs (docs/runtime.md,
"After a turn"). On restart the stages are not run again (they ran, each once), the
turn's state, prompt trace and memory write stay, and the after-record stays as it was
committed with the turn's state: stages 3-5 named unfinished (shown as not recorded,
never as having had nothing to do)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolang_core.runtime.after_turn import AFTER_KIND, PROMPT_TRACE_KIND, STAGES
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import wait_serving
from toolang_core.turn.timeline import UNRECORDED, after_lines

pytestmark = pytest.mark.slow  # a real runtime process killed and started again

CHILD = '''
import asyncio
import sys
from pathlib import Path

import toolang_core.runtime.commits as commits
from toolang_core import hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import MemoryConfig, RuntimeConfig
from toolang_core.execution.seam import AfterTurn, TurnOutcome
from toolang_core.memory.types import MemoryEntry, MemoryWriteBatch
from toolang_core.runtime import Runtime
from toolang_core.testing.list_memory import ListMemory, Shelf

HOME, MODE = Path(sys.argv[1]), sys.argv[2]
# The window made deterministic: the after-records wait for the next terminal state's
# commit as long as a turn runs (not for at most a second).
commits.HOLD_SECONDS = 3600.0


def note(name, turn_id):
    with open(HOME / name, "a", encoding="utf-8") as f:
        f.write(turn_id + "\\n")


class Executor:
    """Answers with the input; the turn "hold" runs until the file "release" exists."""

    async def execute(self, ctx):
        turn = ctx.turn
        if turn.input == "hold":
            note("started.txt", turn.id)
            while not (HOME / "release").exists():
                await asyncio.sleep(0.02)
        batch = MemoryWriteBatch(
            agent_uri="agent://a",
            agent_id="a",
            entries=(MemoryEntry(text=f"said {turn.input}"),),
            thread_id=turn.thread_id,
            turn_id=turn.id,
        )
        after = AfterTurn(prompt_trace={"input": turn.input}, memory=batch)
        return TurnOutcome.completed(turn.input, after=after)


class Remembering(ListMemory):
    async def remember(self, batch):
        note("memory.txt", batch.turn_id)
        return await super().remember(batch)


class Watchers:
    @hookimpl
    def toolang_register_memory(self, register):
        register("test", lambda context: Remembering(Shelf()))

    @hookimpl
    def toolang_on_event(self, event, runtime):
        if event.kind.startswith("turn."):
            note("events.txt", event.turn_id)

    @hookimpl
    def toolang_deliver_turn(self, turn, runtime):
        note("delivered.txt", turn.id)


config = ToolangConfig(
    base_dir=HOME,
    home=HOME / ".toolang",
    runtime=RuntimeConfig(poll_seconds=0.05, shutdown_grace_seconds=0, lease_seconds=5.0),
    memory=MemoryConfig(plugin="test"),
)
runtime = Runtime.with_plugins(config, [("watchers", Watchers())], env={})
runtime.make_executor = Executor
asyncio.run(runtime.serve(asyncio.Event(), sources=(), until_idle=MODE == "idle"))
'''


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def start(home: Path, mode: str, log: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env["TOOLANG_LOAD_PLUGINS"] = ""
    with log.open("w", encoding="utf-8") as out:
        return subprocess.Popen(
            [sys.executable, str(home / "child.py"), str(home), mode],
            cwd=home,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            text=True,
        )


def begun(store: SQLiteStore, turn_id: str) -> dict[str, object]:
    """The after-record committed with the turn's state (its times as stored)."""
    record = store.get_record(AFTER_KIND, turn_id)
    assert record is not None
    stages = record.data["stages"]
    assert [s["stage"] for s in stages] == ["turn_state", "prompt_trace"]
    assert all(s["ok"] for s in stages)
    assert stages[0]["detail"] == {"status": "completed"}
    return {"stages": stages, "unfinished": ["memory_write", "events", "delivery"]}


def submit(store: SQLiteStore, thread: str, text: str) -> str:
    request = NewTurnRequest(source="chat", thread_id=thread, input=text)
    return store.submit(request, SubmitRules("chat", 40), now=time.time()).id


def test_a_kill_before_the_after_record_is_committed_runs_nothing_again(tmp_path):
    home = tmp_path
    (home / "child.py").write_text(CHILD, encoding="utf-8")
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    try:
        hold = submit(store, "chat:hold", "hold")
        first = start(home, "serve", home / "first.log")
        try:
            # "hold" runs (and will not end): a turn that keeps the records waiting.
            wait_serving(first, home / "first.log", lambda: lines(home / "started.txt"), 120)
            quick = submit(store, "chat:quick", "quick")
            wait_serving(
                first, home / "first.log", lambda: quick in lines(home / "delivered.txt"), 120
            )
            # Delivered, its state, prompt trace and memory write committed before;
            # its after-record waits for hold's commit, which cannot come.
            turn = store.get(quick)
            assert turn is not None and turn.status is TurnStatus.COMPLETED
            assert turn.output == "quick"
            assert store.get_record(PROMPT_TRACE_KIND, quick) is not None
            assert lines(home / "memory.txt") == [quick]
            assert lines(home / "events.txt") == [quick]
            assert store.get_record(AFTER_KIND, quick).data == begun(store, quick)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=60)

        (home / "release").touch()
        second = start(home, "idle", home / "second.log")
        second.wait(timeout=300)
        assert second.returncode == 0, (home / "second.log").read_text()

        # quick: done once, not run again at the restart (nothing re-reads its stages);
        # its after-record says its stages 3-5 began and were never recorded.
        turn = store.get(quick)
        assert turn is not None and turn.status is TurnStatus.COMPLETED
        assert turn.attempt == 1
        after = store.get_record(AFTER_KIND, quick).data
        assert after == begun(store, quick)
        shown = after_lines(after, turn.created_at)
        assert [line.split()[0] for line in shown[-3:]] == list(STAGES[2:])
        assert all(UNRECORDED in line for line in shown[-3:])
        assert store.get_record(PROMPT_TRACE_KIND, quick) is not None
        # hold: lost with the killed run, run again from the start, its stages once.
        held = store.get(hold)
        assert held is not None and held.status is TurnStatus.COMPLETED
        assert held.attempt == 2
        after = store.get_record(AFTER_KIND, hold)
        assert after is not None
        assert [s["stage"] for s in after.data["stages"]] == list(STAGES)
        assert all(s["ok"] for s in after.data["stages"])
        assert "unfinished" not in after.data
        for effect in ("memory.txt", "events.txt", "delivered.txt"):
            assert sorted(lines(home / effect)) == sorted([quick, hold]), effect
        assert lines(home / "started.txt") == [hold, hold]
    finally:
        store.close()


def test_the_wait_is_bounded_without_a_kill(tmp_path):
    """Without the hold's patch the record waits at most about a second while the other
    turn runs on: it is there well before that turn ends."""
    home = tmp_path
    (home / "child.py").write_text(
        CHILD.replace("commits.HOLD_SECONDS = 3600.0", ""), encoding="utf-8"
    )
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    first = start(home, "serve", home / "first.log")
    try:
        hold = submit(store, "chat:hold", "hold")
        wait_serving(first, home / "first.log", lambda: lines(home / "started.txt"), 120)
        quick = submit(store, "chat:quick", "quick")

        def stages_recorded() -> bool:
            record = store.get_record(AFTER_KIND, quick)
            return record is not None and "unfinished" not in record.data

        wait_serving(first, home / "first.log", stages_recorded, 120, "quick's after-record as run")
        held = store.get(hold)  # still running (it never ends): the wait had a bound
        assert held is not None and held.status is TurnStatus.RUNNING
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
        store.close()
