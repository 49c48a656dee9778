"""Task runs survive a killed runtime: real `toolang run` processes and SIGKILL.

Three runs are spawned into a store whose task group runs one at a time. The first
runtime is killed while one run is running (its tool call done, its answer pending)
and two are queued. A waiter in another process is already waiting for all three. The
second runtime recovers the interrupted run — requeued, not failed (tRPC marks such
runs "interrupted by previous runtime restart"; toolang resumes them), its tool call
replayed from the store instead of run again — and runs the queued ones; every run
reaches a terminal state and the waiter sees the results.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kill_helpers import install_kit, kit_environment, start_kit_runtime, write_script

from toolang_core import SpawnRequest, TaskRunController, TurnStatus
from toolang_core.config import load_config
from toolang_core.runtime import Runtime
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG, kill_when

pytestmark = pytest.mark.slow  # real processes killed mid-run and restarted

CONFIG = (
    KILL_AND_RESUME_CONFIG
    + """
[scheduler.groups.task]
max_running = 1
"""
)

WAITER = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from toolang_core import TaskRunController
    from toolang_core.config import load_config
    from toolang_core.runtime import Runtime

    async def main(ids):
        runtime = Runtime.from_config(load_config(Path("toolang.toml").resolve(), env={}), env={},
                                      load_entrypoints=False)
        store = runtime.open_store(read_only=True)
        controller = TaskRunController(store, runtime)
        print("waiting", flush=True)
        runs = [await controller.wait(i, owner="ada", timeout=120) for i in ids]
        print(json.dumps([[r.id, r.status.value, r.result, r.attempt] for r in runs]))

    asyncio.run(main(sys.argv[1:]))
    """
)


def spawn_runs(home: Path) -> list[str]:
    runtime = Runtime.from_config(
        load_config(home / "toolang.toml", env={}), env={}, load_entrypoints=False
    )
    store = runtime.open_store()
    controller = TaskRunController(store, runtime)
    ids = [
        asyncio.run(
            controller.spawn(
                SpawnRequest(owner="ada", parent_thread_id="chat:boss", task=f"visit {n}")
            )
        ).id
        for n in range(3)
    ]
    store.close()
    return ids


def test_runs_interrupted_by_a_killed_runtime_are_recovered_and_waiters_see_them(tmp_path):
    site = tmp_path / "site"
    install_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    write_script(home / "script.json", final_delay=120)  # the first runtime never answers
    env = kit_environment(home, site)
    first_id, *queued_ids = ids = spawn_runs(home)
    store = SQLiteStore(home / ".toolang" / "toolang.db")

    first = start_kit_runtime(home, env)
    kill_when(
        first,
        lambda: any(s.kind == "tool_call" and s.status != "intent" for s in store.steps(first_id)),
        60,
        "the first run's tool call to be recorded",
    )
    assert store.get(first_id).status is TurnStatus.RUNNING  # as the dead process left it
    assert [store.get(i).status for i in queued_ids] == [TurnStatus.QUEUED] * 2
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]

    waiter = subprocess.Popen(
        [sys.executable, "-c", WAITER, *ids],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiter.stdout is not None
    ready = waiter.stdout.readline().strip()
    if ready != "waiting":
        raise AssertionError(f"the waiter did not start: {ready!r} {waiter.communicate()[1]}")

    write_script(home / "script.json", final_delay=0)
    second = start_kit_runtime(home, env, "--until-idle")
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    seen, waiter_err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, waiter_err

    assert json.loads(seen) == [
        [first_id, "completed", "the visit is done", 2],
        *([run_id, "completed", "the visit is done", 1] for run_id in queued_ids),
    ]
    # The interrupted run resumed: its tool call was replayed, not run again.
    visits = (home / "counter.txt").read_text().splitlines()
    assert visits == ["side-effect"] * 3
    assert [s.kind for s in store.steps(first_id)].count("tool_call") == 1
    assert store.list_records("toolang.taskrun.open") == []
    store.close()
