"""The core's tables in the SQLite store, as ``sqlite_utils.Migrations``.

Never edit an applied migration: add a new one. A database that has applied a
migration this list does not know was written by a newer toolang and is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Final

from sqlite_utils import Database, Migrations

from toolang_core.store import rows

MIGRATION_SET: Final = "toolang-core"

migrations = Migrations(MIGRATION_SET)
_NAMES: list[str] = []


def migration(fn: Callable[[Database], None]) -> Callable[[Database], None]:
    """Register ``fn`` as the next migration of the core's set."""
    _NAMES.append(fn.__name__)
    return migrations()(fn)


def run_script(db: Database, script: str) -> None:
    """Run ``script`` statement by statement (``executescript`` would commit first)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement!r}")


TURN_COLUMNS: Final = rows.TURN_COLUMNS

ACTIVE_SQL: Final = "('running', 'awaiting_approval', 'canceling')"
"""As applied by the first migrations (``status IN ACTIVE_SQL``); queries use :func:`active`."""


def active(alias: str = "") -> str:
    """The condition "is active" of the partial indexes since m005, for a query to repeat.

    Written as comparisons, not ``IN (...)``: SQLite builds a throw-away lookup table for
    an ``IN`` list of three values each time a statement runs, once per partial index
    and per query term — about 4 us on every insert, start and finish of a turn.
    """
    column = f"{alias}.status" if alias else "status"
    return f"({column} = 'running' OR {column} = 'awaiting_approval' OR {column} = 'canceling')"


HEAD_OF_THREAD_SQL: Final = (
    "SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests "
    "WHERE thread_id = NEW.thread_id AND status = 'queued' ORDER BY rank, seq LIMIT 1"
)
"""In a trigger: the best queued request of the changed request's thread."""


@migration
def m001_runtime(db: Database) -> None:
    run_script(
        db,
        f"""
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            version TEXT NOT NULL,
            started_at REAL NOT NULL,
            heartbeat_at REAL NOT NULL,
            stopped_at REAL,
            status TEXT NOT NULL,
            plugins TEXT NOT NULL DEFAULT '[]'
        );
        CREATE TABLE turn_requests (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            thread_group TEXT NOT NULL,
            priority INTEGER NOT NULL,
            rank REAL NOT NULL,
            input TEXT NOT NULL,
            status TEXT NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            sender TEXT NOT NULL DEFAULT 'owner',
            channel TEXT,
            agent TEXT,
            dedupe_key TEXT,
            not_before REAL,
            parent TEXT,
            owner TEXT,
            timeout_seconds REAL,
            meta TEXT NOT NULL DEFAULT '{{}}',
            steer INTEGER NOT NULL DEFAULT 0,
            started_at REAL,
            finished_at REAL,
            lease_owner TEXT,
            lease_expires REAL,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            output TEXT,
            outcome TEXT,
            error TEXT
        );
        -- The database itself forbids a second active turn on a thread.
        CREATE UNIQUE INDEX turn_one_active_per_thread
            ON turn_requests (thread_id) WHERE status IN {ACTIVE_SQL};
        CREATE INDEX turn_queued_in_thread
            ON turn_requests (thread_id, rank, seq) WHERE status = 'queued';
        CREATE INDEX turn_queued_in_group
            ON turn_requests (thread_group, seq) WHERE status = 'queued';
        CREATE INDEX turn_active_lease
            ON turn_requests (lease_owner, lease_expires) WHERE status IN {ACTIVE_SQL};
        CREATE INDEX turn_parent ON turn_requests (parent) WHERE parent IS NOT NULL;
        CREATE INDEX turn_thread_history ON turn_requests (thread_id, seq);

        -- One row per thread: its running turn and its head (best queued request),
        -- so a claim never scans the backlog of busy threads.
        CREATE TABLE threads (
            thread_id TEXT PRIMARY KEY,
            thread_group TEXT NOT NULL,
            running_id TEXT,
            head_id TEXT,
            head_rank REAL,
            head_seq INTEGER,
            head_not_before REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            turns INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX threads_runnable
            ON threads (thread_group, head_rank, head_seq)
            WHERE running_id IS NULL AND head_id IS NOT NULL;
        CREATE INDEX threads_delayed ON threads (head_not_before)
            WHERE running_id IS NULL AND head_id IS NOT NULL AND head_not_before > 0;

        -- Per-group counters: checked and changed inside the claim, never counted there.
        CREATE TABLE thread_groups (
            name TEXT PRIMARY KEY,
            running INTEGER NOT NULL DEFAULT 0,
            queued INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;

        -- The triggers below keep `threads` and `thread_groups` consistent with every
        -- insert and status change of a turn request, whoever makes it.
        CREATE TRIGGER turn_thread_keeps_its_group BEFORE INSERT ON turn_requests
        WHEN EXISTS (SELECT 1 FROM threads
                     WHERE thread_id = NEW.thread_id AND thread_group != NEW.thread_group)
        BEGIN
            SELECT RAISE(ABORT, 'toolang: thread belongs to another group');
        END;

        CREATE TRIGGER turn_queued AFTER INSERT ON turn_requests WHEN NEW.status = 'queued'
        BEGIN
            INSERT INTO threads (thread_id, thread_group, head_id, head_rank, head_seq,
                                 head_not_before, created_at, updated_at)
            VALUES (NEW.thread_id, NEW.thread_group, NEW.id, NEW.rank, NEW.seq,
                    COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
            ON CONFLICT (thread_id) DO UPDATE SET
                head_id = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                               THEN NEW.id ELSE head_id END,
                head_not_before = CASE WHEN head_id IS NULL
                                            OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                       THEN COALESCE(NEW.not_before, 0) ELSE head_not_before END,
                head_seq = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                THEN NEW.seq ELSE head_seq END,
                head_rank = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                 THEN NEW.rank ELSE head_rank END,
                updated_at = NEW.created_at;
            INSERT INTO thread_groups (name, queued) VALUES (NEW.thread_group, 1)
            ON CONFLICT (name) DO UPDATE SET queued = queued + 1;
        END;

        CREATE TRIGGER turn_status_changed AFTER UPDATE OF status ON turn_requests
        WHEN OLD.status != NEW.status
        BEGIN
            UPDATE thread_groups SET
                queued = queued - (OLD.status = 'queued') + (NEW.status = 'queued'),
                running = running - (OLD.status IN {ACTIVE_SQL}) + (NEW.status IN {ACTIVE_SQL})
            WHERE name = NEW.thread_group;
            UPDATE threads SET
                running_id = CASE WHEN NEW.status IN {ACTIVE_SQL} THEN NEW.id
                                  WHEN running_id = NEW.id THEN NULL
                                  ELSE running_id END,
                turns = turns + (OLD.status = 'queued' AND NEW.status IN {ACTIVE_SQL}),
                updated_at = NEW.updated_at,
                (head_id, head_rank, head_seq, head_not_before) = (
                    SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests
                    WHERE thread_id = NEW.thread_id AND status = 'queued'
                    ORDER BY rank, seq LIMIT 1)
            WHERE thread_id = NEW.thread_id;
        END;

        CREATE TABLE turn_steps (
            turn_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL NOT NULL,
            data TEXT NOT NULL DEFAULT '{{}}',
            error TEXT,
            idempotency_key TEXT,
            PRIMARY KEY (turn_id, seq)
        );
        CREATE UNIQUE INDEX turn_steps_idempotency
            ON turn_steps (idempotency_key) WHERE idempotency_key IS NOT NULL;

        CREATE TABLE records (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            revision INTEGER NOT NULL,
            data TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (kind, key)
        );
        """,
    )


@migration
def m002_lean_bookkeeping(db: Database) -> None:
    """Less to write per turn: the hot path was paying for bookkeeping nobody needed.

    * ``threads`` keeps only what a claim cannot find cheaply elsewhere: each thread's
      head. Its active turn is read through ``turn_one_active_per_thread`` (the active
      set is small: at most the running turns), so ``running_id`` is no longer written
      and a finished turn touches no bookkeeping row at all.
    * ``thread_groups`` goes: a group's running turns are counted from the active set
      inside the claim, its queued requests where an overflow rule needs them.
    * Triggers fire only when a request enters or leaves the queue; the group check of
      a new request is part of the insert's upsert instead of a trigger of its own.
    * ``turn_steps`` is keyed by ``(turn_id, seq)`` without a rowid: one B-tree, not two.
    """
    run_script(
        db,
        f"""
        DROP TRIGGER turn_thread_keeps_its_group;
        DROP TRIGGER turn_queued;
        DROP TRIGGER turn_status_changed;
        DROP INDEX threads_runnable;
        DROP INDEX threads_delayed;
        DROP TABLE thread_groups;
        UPDATE threads SET running_id = NULL;

        CREATE INDEX threads_heads ON threads (thread_group, head_rank, head_seq)
            WHERE head_id IS NOT NULL;
        CREATE INDEX threads_delayed_heads ON threads (head_not_before)
            WHERE head_id IS NOT NULL AND head_not_before > 0;

        CREATE TRIGGER turn_queued AFTER INSERT ON turn_requests WHEN NEW.status = 'queued'
        BEGIN
            INSERT INTO threads (thread_id, thread_group, head_id, head_rank, head_seq,
                                 head_not_before, created_at, updated_at)
            VALUES (NEW.thread_id, NEW.thread_group, NEW.id, NEW.rank, NEW.seq,
                    COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
            ON CONFLICT (thread_id) DO UPDATE SET
                thread_group = CASE WHEN thread_group = NEW.thread_group THEN thread_group
                                    ELSE RAISE(ABORT, 'toolang: thread belongs to another group')
                               END,
                head_id = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                               THEN NEW.id ELSE head_id END,
                head_not_before = CASE WHEN head_id IS NULL
                                            OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                       THEN COALESCE(NEW.not_before, 0) ELSE head_not_before END,
                head_seq = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                THEN NEW.seq ELSE head_seq END,
                head_rank = CASE WHEN head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq)
                                 THEN NEW.rank ELSE head_rank END,
                updated_at = NEW.created_at;
        END;

        -- Claimed, canceled, dropped or steered: the thread gets its next head.
        CREATE TRIGGER turn_left_queue AFTER UPDATE OF status ON turn_requests
        WHEN OLD.status = 'queued' AND NEW.status != 'queued'
        BEGIN
            UPDATE threads SET
                turns = turns + (NEW.status IN {ACTIVE_SQL}),
                updated_at = NEW.updated_at,
                (head_id, head_rank, head_seq, head_not_before) = ({HEAD_OF_THREAD_SQL})
            WHERE thread_id = NEW.thread_id;
        END;

        -- Released or recovered: the request may be its thread's head again.
        CREATE TRIGGER turn_requeued AFTER UPDATE OF status ON turn_requests
        WHEN OLD.status != 'queued' AND NEW.status = 'queued'
        BEGIN
            UPDATE threads SET
                updated_at = NEW.updated_at,
                (head_id, head_rank, head_seq, head_not_before) = ({HEAD_OF_THREAD_SQL})
            WHERE thread_id = NEW.thread_id;
        END;

        CREATE TABLE turn_steps_keyed (
            turn_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL NOT NULL,
            data TEXT NOT NULL DEFAULT '{{}}',
            error TEXT,
            idempotency_key TEXT,
            PRIMARY KEY (turn_id, seq)
        ) WITHOUT ROWID;
        INSERT INTO turn_steps_keyed SELECT turn_id, seq, attempt, kind, status, started_at,
            finished_at, data, error, idempotency_key FROM turn_steps;
        DROP TABLE turn_steps;
        ALTER TABLE turn_steps_keyed RENAME TO turn_steps;
        CREATE UNIQUE INDEX turn_steps_idempotency
            ON turn_steps (idempotency_key) WHERE idempotency_key IS NOT NULL;
        """,
    )


@migration
def m003_no_group_queue_index(db: Database) -> None:
    """A group's queued requests are found through its threads' heads and queues.

    ``turn_queued_in_group`` cost an entry on every submit and a removal on every claim
    for the overflow rules and status lines alone, which read it rarely.
    """
    db.execute("DROP INDEX turn_queued_in_group")


@migration
def m004_claim_moves_heads(db: Database) -> None:
    """A claim moves the heads of the threads it started itself after its batch (then
    ``turns.NEXT_HEAD_SQL`` per thread, now ``admission.next_head_sql``): a trigger program
    per row cost more than the work it did. Every other way out of the queue keeps the
    trigger."""
    run_script(
        db,
        f"""
        DROP TRIGGER turn_left_queue;
        CREATE TRIGGER turn_left_queue AFTER UPDATE OF status ON turn_requests
        WHEN OLD.status = 'queued' AND NEW.status NOT IN ('queued', 'running')
        BEGIN
            UPDATE threads SET
                updated_at = NEW.updated_at,
                (head_id, head_rank, head_seq, head_not_before) = ({HEAD_OF_THREAD_SQL})
            WHERE thread_id = NEW.thread_id;
        END;
        """,
    )


@migration
def m005_active_without_in_lists(db: Database) -> None:
    """The two indexes of the active set get the same condition without an ``IN`` list
    (see :func:`active`); the one-active-turn-per-thread constraint is unchanged."""
    run_script(
        db,
        f"""
        DROP INDEX turn_one_active_per_thread;
        CREATE UNIQUE INDEX turn_one_active_per_thread
            ON turn_requests (thread_id) WHERE {active()};
        DROP INDEX turn_active_lease;
        CREATE INDEX turn_active_lease
            ON turn_requests (lease_owner, lease_expires) WHERE {active()};
        """,
    )


@migration
def m006_queue_behind_head_leaves_thread(db: Database) -> None:
    """A request queued behind its thread's head leaves the ``threads`` row alone.

    It changes nothing a claim or a reader of the thread sees (its head stays), yet
    rewriting the row cost every submit to a thread with a backlog a page and an
    index update (about 7 us). The group check still runs on every insert: a request
    of another group turns the update on, and the update raises.
    """
    run_script(
        db,
        """
        DROP TRIGGER turn_queued;
        CREATE TRIGGER turn_queued AFTER INSERT ON turn_requests WHEN NEW.status = 'queued'
        BEGIN
            INSERT INTO threads (thread_id, thread_group, head_id, head_rank, head_seq,
                                 head_not_before, created_at, updated_at)
            VALUES (NEW.thread_id, NEW.thread_group, NEW.id, NEW.rank, NEW.seq,
                    COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
            ON CONFLICT (thread_id) DO UPDATE SET
                thread_group = CASE WHEN thread_group = NEW.thread_group THEN thread_group
                                    ELSE RAISE(ABORT, 'toolang: thread belongs to another group')
                               END,
                head_id = NEW.id,
                head_rank = NEW.rank,
                head_seq = NEW.seq,
                head_not_before = COALESCE(NEW.not_before, 0),
                updated_at = NEW.created_at
            WHERE thread_group != NEW.thread_group
                OR head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq);
        END;
        """,
    )


@migration
def m007_threads_have_owners(db: Database) -> None:
    """A thread belongs to the owner of its first request; a request of another owner
    (``NULL``, the operator's, is an owner of its own) is refused by the insert itself,
    as a request of another group is, so every writer of the store is held to it.

    Existing threads take the owner of their oldest request.
    """
    run_script(
        db,
        """
        ALTER TABLE threads ADD COLUMN owner TEXT;
        UPDATE threads SET owner = (
            SELECT owner FROM turn_requests WHERE turn_requests.thread_id = threads.thread_id
            ORDER BY seq LIMIT 1);
        DROP TRIGGER turn_queued;
        CREATE TRIGGER turn_queued AFTER INSERT ON turn_requests WHEN NEW.status = 'queued'
        BEGIN
            INSERT INTO threads (thread_id, thread_group, owner, head_id, head_rank, head_seq,
                                 head_not_before, created_at, updated_at)
            VALUES (NEW.thread_id, NEW.thread_group, NEW.owner, NEW.id, NEW.rank, NEW.seq,
                    COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
            ON CONFLICT (thread_id) DO UPDATE SET
                thread_group = CASE WHEN thread_group = NEW.thread_group THEN thread_group
                                    ELSE RAISE(ABORT, 'toolang: thread belongs to another group')
                               END,
                owner = CASE WHEN owner IS NEW.owner THEN owner
                             ELSE RAISE(ABORT, 'toolang: thread belongs to another owner')
                        END,
                head_id = NEW.id,
                head_rank = NEW.rank,
                head_seq = NEW.seq,
                head_not_before = COALESCE(NEW.not_before, 0),
                updated_at = NEW.created_at
            WHERE thread_group != NEW.thread_group OR owner IS NOT NEW.owner
                OR head_id IS NULL OR (NEW.rank, NEW.seq) < (head_rank, head_seq);
        END;
        """,
    )


@migration
def m008_steps_in_rowid_order_steer_index(db: Database) -> None:
    """Agent turns write large steps; two changes make each cheaper to store and to ask.

    * ``turn_steps`` becomes a rowid table again (its key ``(turn_id, seq)`` an index):
      a model call's step holds its prompt, often more than the ~1 kB a row of a
      ``WITHOUT ROWID`` table keeps in its page, so each spilled to overflow pages, and
      the steps of concurrent turns went to as many places in the key's order, splitting
      pages. Appended in rowid order, an agent turn's step writes cost about a fifth less
      CPU and the file half the space; an echo turn's one small step pays ~0.4 us more.
    * ``turn_steer_waiting``: the steered requests queued in a thread. A running turn
      asks at every model call whether one waits; through the queued-request index that
      read a row of every request queued behind it in its thread.
    """
    run_script(
        db,
        """
        CREATE TABLE turn_steps_rows (
            turn_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL NOT NULL,
            data TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            idempotency_key TEXT,
            PRIMARY KEY (turn_id, seq)
        );
        INSERT INTO turn_steps_rows SELECT turn_id, seq, attempt, kind, status, started_at,
            finished_at, data, error, idempotency_key FROM turn_steps ORDER BY turn_id, seq;
        DROP TABLE turn_steps;
        ALTER TABLE turn_steps_rows RENAME TO turn_steps;
        CREATE UNIQUE INDEX turn_steps_idempotency
            ON turn_steps (idempotency_key) WHERE idempotency_key IS NOT NULL;
        CREATE INDEX turn_steer_waiting
            ON turn_requests (thread_id, seq) WHERE status = 'queued' AND steer = 1;
        """,
    )


@migration
def m009_parked_hand_backs(db: Database) -> None:
    """``parked_handbacks``: how often the turn was handed back while it waited for a
    person (a shutdown, a crash, a lost lease while ``awaiting_approval``). Each hand-back
    starts a new attempt — attempt numbers tell which run wrote a step — but only the
    attempts that ran count towards ``max_attempts``: a turn waiting days for an approval
    across deploys is not abandoned."""
    db.execute("ALTER TABLE turn_requests ADD COLUMN parked_handbacks INTEGER NOT NULL DEFAULT 0")


def known_names() -> list[str]:
    return list(_NAMES)
