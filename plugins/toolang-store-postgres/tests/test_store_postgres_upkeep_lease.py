"""The upkeep lease on a shared store (issue #35 item 4): one runtime at a time sweeps
approvals and task runs and pings remote agents; another takes over when the holder
stops renewing, at once when it stops cleanly — and never two at once, however many
reach for it together (real processes)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import toolang_store_postgres
from toolang_core import hookimpl
from toolang_core.runtime.upkeep_lease import UpkeepLease

LEASE = 30.0


def test_one_holder_renews_and_another_takes_over_when_it_lapses(toolang_pg_store):
    a = UpkeepLease(toolang_pg_store(), "run-a", LEASE)
    b = UpkeepLease(toolang_pg_store(), "run-b", LEASE)
    assert a.take(1000.0)
    assert not b.take(1001.0)  # held
    assert a.take(1010.0)  # renewed until 1040
    assert not b.take(1035.0)
    assert b.holder(1035.0) == "run-a"
    assert b.take(1041.0)  # lapsed: a died or stalled
    assert not a.take(1042.0)
    assert a.holder(1042.0) == "run-b"


def test_a_runtime_stopping_gives_the_lease_up_at_once(toolang_pg_store):
    a = UpkeepLease(toolang_pg_store(), "run-a", LEASE)
    b = UpkeepLease(toolang_pg_store(), "run-b", LEASE)
    assert a.take(1000.0)
    b.release(1001.0)  # not b's to give
    assert not b.take(1002.0)
    a.release(1003.0)
    assert b.holder(1003.0) is None
    assert b.take(1004.0)


RACER = """
import json, sys, time
import toolang_store_postgres
from toolang_core import hookimpl
from toolang_core.runtime.upkeep_lease import UpkeepLease
from toolang_store_postgres.store import PostgresStore

dsn, schema, start, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
store = PostgresStore(dsn, schema_name=schema)
lease = UpkeepLease(store, name, 30.0)
taken = []
for r in range(10):
    while time.time() < start + r * 0.25:  # the racers meet again at each round
        pass
    if lease.take(1000.0 + r * 100):  # each round, the previous holder's lease has lapsed
        taken.append(r)
store.close()
print(json.dumps(taken))
"""


def test_runtimes_reaching_for_a_lapsed_lease_at_once_get_one_holder(
    toolang_pg_dsn, toolang_pg_schema, toolang_pg_store
):
    toolang_pg_store().close()  # the schema exists before the racers open it
    start = time.time() + 3.0
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, toolang_pg_dsn, toolang_pg_schema, str(start), f"r{i}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    holders: dict[int, list[int]] = {r: [] for r in range(10)}
    for i, racer in enumerate(racers):
        out, _ = racer.communicate(timeout=120)
        assert racer.returncode == 0
        for r in json.loads(out):
            holders[r].append(i)
    assert all(len(won) == 1 for won in holders.values()), holders


class Upkeep:
    """A plugin's upkeep, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def toolang_upkeep(self, runtime: object) -> None:
        self.calls += 1


def test_a_runtime_does_no_upkeep_while_another_holds_the_lease(
    toolang_runtime, toolang_pg_dsn, toolang_pg_schema, toolang_pg_store
):
    config = (
        f'[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\ndsn = "{toolang_pg_dsn}"\n'
        f'schema = "{toolang_pg_schema}"\n\n[runtime]\nexecutor = "echo"\n'
        "poll_seconds = 0.05\nshutdown_grace_seconds = 0\n"
    )
    other = UpkeepLease(toolang_pg_store(), "another-node", LEASE)
    assert other.take(time.time())
    upkeep = Upkeep()
    runtime = toolang_runtime(
        config, plugins={"store-postgres": toolang_store_postgres, "upkeep": upkeep}
    )
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert upkeep.calls == 0  # the other node holds the lease

    other.release(time.time())
    runtime = toolang_runtime(
        config, plugins={"store-postgres": toolang_store_postgres, "upkeep": upkeep}
    )
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert upkeep.calls >= 1
    assert other.holder(time.time()) is None  # given up when the runtime stopped
