"""Schedules shared by several runtimes on one PostgreSQL schema: each occurrence of a
chore's or a will's schedule is handed over by exactly one process (issue #35 item 4) —
real processes racing on the same keys at the same moment."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

PROCESSES, ROUNDS, KEYS = 4, 12, 10

RACER = """
import json, sys, time
from toolang_core.runtime.recurring import Recurring
from toolang_core.schedule import Schedule
from toolang_store_postgres.store import PostgresStore

dsn, schema, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
rounds, keys = int(sys.argv[4]), int(sys.argv[5])
store = PostgresStore(dsn, schema_name=schema)
recurring = Recurring(store, "race.state", clock=lambda: 1055.0)
schedule = Schedule("every 10 seconds", 1000.0)
fired = []
for r in range(rounds):
    while time.time() < start + r * 0.25:  # the racers meet again at each round
        pass
    for key in (f"r{r}k{i}" for i in range(keys)):
        if recurring.due(key, schedule, since=1000.0) is not None:
            fired.append(key)
store.close()
print(json.dumps(fired))
"""


def test_each_occurrence_is_handed_over_by_one_process(
    toolang_pg_dsn, toolang_pg_schema, toolang_pg_store
):
    toolang_pg_store().close()  # the schema exists before the racers open it
    start = time.time() + 3.0  # every racer has connected by then and starts at once
    racers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RACER,
                toolang_pg_dsn,
                toolang_pg_schema,
                str(start),
                str(ROUNDS),
                str(KEYS),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    fired: Counter[str] = Counter()
    for racer in racers:
        out, _ = racer.communicate(timeout=120)
        assert racer.returncode == 0
        fired.update(json.loads(out))
    assert fired == Counter({f"r{r}k{i}": 1 for r in range(ROUNDS) for i in range(KEYS)})
