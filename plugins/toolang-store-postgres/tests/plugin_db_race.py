"""One process of the migration race: wait for ``go`` on stdin, then open the plugin
database ``race-plugin`` on the PostgreSQL server of argv[1], store schema argv[2].

Its one migration records which process ran it, after waiting (polling, with a
deadline) until another session waits on the migration lock — so the two processes
are proven to have migrated at the same time.
"""

from __future__ import annotations

import os
import sys
import time

import psycopg

from toolang_core import PluginDatabase, PluginMigrations
from toolang_store_postgres.plugin_tables import PostgresPluginDatabases

DSN, STORE_SCHEMA = sys.argv[1], sys.argv[2]
MIGRATIONS = PluginMigrations("race-plugin")


def someone_waits() -> bool:
    with psycopg.connect(DSN, autocommit=True) as conn:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            waiting = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
            if waiting and waiting[0]:
                return True
            time.sleep(0.01)
    return False


@MIGRATIONS()
def m001_applied(db: PluginDatabase) -> None:
    db.execute("CREATE TABLE applied (pid integer NOT NULL, saw_waiter boolean NOT NULL)")
    db.execute("INSERT INTO applied VALUES (?, ?)", [os.getpid(), someone_waits()])


print("ready", flush=True)
sys.stdin.readline()
db = PostgresPluginDatabases(DSN, store_schema=STORE_SCHEMA).open("race-plugin", MIGRATIONS)
print("opened", db.execute("SELECT count(*) FROM applied").fetchone()[0], flush=True)
db.close()
