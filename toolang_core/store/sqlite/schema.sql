-- The SQLite execution store's schema (migration set 'toolang-core'), as its
-- migrations build it. Generated: refresh with
--   python -m toolang_core.store.sqlite.snapshot --write
-- Migrations: m001_runtime, m002_lean_bookkeeping, m003_no_group_queue_index, m004_claim_moves_heads, m005_active_without_in_lists, m006_queue_behind_head_leaves_thread, m007_threads_have_owners, m008_steps_in_rowid_order_steer_index, m009_parked_hand_backs

CREATE TABLE "_sqlite_migrations" (
   "id" INTEGER PRIMARY KEY,
   "migration_set" TEXT,
   "name" TEXT,
   "applied_at" TEXT
);

CREATE TABLE records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    revision INTEGER NOT NULL,
    data TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (kind, key)
);

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
, owner TEXT) WITHOUT ROWID;

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
    meta TEXT NOT NULL DEFAULT '{}',
    steer INTEGER NOT NULL DEFAULT 0,
    started_at REAL,
    finished_at REAL,
    lease_owner TEXT,
    lease_expires REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    output TEXT,
    outcome TEXT,
    error TEXT
, parked_handbacks INTEGER NOT NULL DEFAULT 0);

CREATE TABLE "turn_steps" (
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

CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
ON "_sqlite_migrations" ("migration_set", "name");

CREATE INDEX threads_delayed_heads ON threads (head_not_before)
WHERE head_id IS NOT NULL AND head_not_before > 0;

CREATE INDEX threads_heads ON threads (thread_group, head_rank, head_seq)
WHERE head_id IS NOT NULL;

CREATE INDEX turn_active_lease
ON turn_requests (lease_owner, lease_expires) WHERE (status = 'running' OR status = 'awaiting_approval' OR status = 'canceling');

CREATE UNIQUE INDEX turn_one_active_per_thread
ON turn_requests (thread_id) WHERE (status = 'running' OR status = 'awaiting_approval' OR status = 'canceling');

CREATE INDEX turn_parent ON turn_requests (parent) WHERE parent IS NOT NULL;

CREATE INDEX turn_queued_in_thread
ON turn_requests (thread_id, rank, seq) WHERE status = 'queued';

CREATE INDEX turn_steer_waiting
ON turn_requests (thread_id, seq) WHERE status = 'queued' AND steer = 1;

CREATE UNIQUE INDEX turn_steps_idempotency
ON turn_steps (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE INDEX turn_thread_history ON turn_requests (thread_id, seq);

CREATE TRIGGER turn_left_queue AFTER UPDATE OF status ON turn_requests
WHEN OLD.status = 'queued' AND NEW.status NOT IN ('queued', 'running')
BEGIN
    UPDATE threads SET
        updated_at = NEW.updated_at,
        (head_id, head_rank, head_seq, head_not_before) = (SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests WHERE thread_id = NEW.thread_id AND status = 'queued' ORDER BY rank, seq LIMIT 1)
    WHERE thread_id = NEW.thread_id;
END;

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

CREATE TRIGGER turn_requeued AFTER UPDATE OF status ON turn_requests
WHEN OLD.status != 'queued' AND NEW.status = 'queued'
BEGIN
    UPDATE threads SET
        updated_at = NEW.updated_at,
        (head_id, head_rank, head_seq, head_not_before) = (SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests WHERE thread_id = NEW.thread_id AND status = 'queued' ORDER BY rank, seq LIMIT 1)
    WHERE thread_id = NEW.thread_id;
END;

