"""Plugin records on PostgreSQL: one row per ``(kind, key)`` with a revision, written
one at a time (compare-and-set on the revision) or in batches (one statement for a batch
of distinct keys).

Each function takes the store's :class:`~toolang_store_postgres.connection.Database`
(and opens its own statement), except :func:`put`, which writes inside the caller's
transaction (a batch of finishes writes its turns' records with them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from toolang_core.store import Record
from toolang_core.store.backend import RECORD_COLUMNS, record_from_row
from toolang_store_postgres.connection import Conn, Database
from toolang_store_postgres.schema import Names

RecordRow = tuple[str, str, dict[str, Any], float]
"""``(kind, key, data, now)``: one record to store."""


def get(db: Database, kind: str, key: str) -> Record | None:
    row = db.one(
        f"SELECT {RECORD_COLUMNS} FROM {{s}}.records WHERE kind = %s AND key = %s", (kind, key)
    )
    return None if row is None else record_from_row(row)


def write(
    db: Database, kind: str, key: str, data: dict[str, Any], *, now: float, expect: int | None
) -> int | None:
    """One statement per case, so concurrent writers never lose an update."""
    payload = Jsonb(data)
    if expect is None:
        row = db.one(
            "INSERT INTO {s}.records AS r (kind, key, revision, data, updated_at) "
            "VALUES (%s, %s, 1, %s, %s) ON CONFLICT (kind, key) DO UPDATE SET "
            "revision = r.revision + 1, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at "
            "RETURNING revision",
            (kind, key, payload, now),
        )
    elif expect == 0:
        row = db.one(
            "INSERT INTO {s}.records (kind, key, revision, data, updated_at) "
            "VALUES (%s, %s, 1, %s, %s) ON CONFLICT (kind, key) DO NOTHING RETURNING revision",
            (kind, key, payload, now),
        )
    else:
        row = db.one(
            "UPDATE {s}.records SET revision = revision + 1, data = %s, updated_at = %s "
            "WHERE kind = %s AND key = %s AND revision = %s RETURNING revision",
            (payload, now, kind, key, expect),
        )
    return None if row is None else int(row[0])


PUT_RECORD_SQL = (
    "INSERT INTO {s}.records AS r (kind, key, revision, data, updated_at) "
    "VALUES (%s, %s, 1, %s, %s) ON CONFLICT (kind, key) DO UPDATE SET "
    "revision = r.revision + 1, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at"
)

PUT_RECORDS_SQL = (
    "INSERT INTO {s}.records AS r (kind, key, revision, data, updated_at) "
    "SELECT kind, key, 1, data, now FROM unnest(%s::text[], %s::text[], %s::jsonb[], "
    "%s::float8[]) AS i(kind, key, data, now) ON CONFLICT (kind, key) DO UPDATE SET "
    "revision = r.revision + 1, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at"
)
"""``PUT_RECORD_SQL`` for a batch of distinct keys in one statement (an upsert may
not touch a row twice in one statement: a batch that repeats a key goes row by row)."""


def put(c: Conn, names: Names, rows: Sequence[RecordRow]) -> None:
    """Store ``rows`` inside the caller's transaction on ``c``."""
    if not rows:
        return
    if len({(kind, key) for kind, key, _, _ in rows}) == len(rows):
        columns = [list(column) for column in zip(*rows, strict=True)]
        columns[2] = [Jsonb(data) for data in columns[2]]
        c.execute(names(PUT_RECORDS_SQL), columns)
        return
    params = [(kind, key, Jsonb(data), now) for kind, key, data, now in rows]
    c.cursor().executemany(names(PUT_RECORD_SQL), params)


def of_kind(db: Database, kind: str) -> list[Record]:
    rows = db.all(
        f"SELECT {RECORD_COLUMNS} FROM {{s}}.records WHERE kind = %s ORDER BY key", (kind,)
    )
    return [record_from_row(r) for r in rows]


def delete(db: Database, kind: str, key: str) -> bool:
    deleted = db.rowcount("DELETE FROM {s}.records WHERE kind = %s AND key = %s", (kind, key))
    return deleted > 0
