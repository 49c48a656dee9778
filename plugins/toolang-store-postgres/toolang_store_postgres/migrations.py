"""The PostgreSQL store's migrations: SQL templates, in order (see ``schema.py``).

Never edit an applied migration: add a new one at the end of :data:`MIGRATIONS`. SQL
text names the schema as ``{s}``, the active statuses as ``{active}``; literal braces
are doubled.
"""

from __future__ import annotations

from typing import Final

M001_RUNTIME: Final = """
CREATE TABLE {s}.runs (
    id text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    version text NOT NULL,
    started_at double precision NOT NULL,
    heartbeat_at double precision NOT NULL,
    stopped_at double precision,
    status text NOT NULL,
    plugins jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX runs_running ON {s}.runs (heartbeat_at) WHERE status = 'running';
CREATE INDEX runs_started ON {s}.runs (started_at);

CREATE TABLE {s}.turn_requests (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    source text NOT NULL,
    thread_id text NOT NULL,
    thread_group text NOT NULL,
    priority integer NOT NULL,
    rank double precision NOT NULL,
    input text NOT NULL,
    status text NOT NULL CHECK (status IN ('queued', 'running', 'awaiting_approval',
        'canceling', 'completed', 'failed', 'canceled', 'dropped', 'steered')),
    attempt integer NOT NULL DEFAULT 0,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    sender text NOT NULL DEFAULT 'owner',
    channel text,
    agent text,
    dedupe_key text,
    not_before double precision,
    parent text,
    owner text,
    timeout_seconds double precision,
    meta jsonb NOT NULL DEFAULT '{{}}',
    steer boolean NOT NULL DEFAULT false,
    started_at double precision,
    finished_at double precision,
    lease_owner text,
    lease_expires double precision,
    cancel_requested boolean NOT NULL DEFAULT false,
    output text,
    outcome text,
    error text
);
-- The database itself forbids a second active turn on a thread, whatever a claim does.
-- Active turns are few (at most every runtime's max_running), so this index also
-- serves every other lookup among them (by lease owner, expiry, group): one index
-- less to write on every start of a turn.
CREATE UNIQUE INDEX turn_one_active_per_thread
    ON {s}.turn_requests (thread_id) WHERE status IN {active};
CREATE INDEX turn_queued_in_thread
    ON {s}.turn_requests (thread_id, rank, seq) WHERE status = 'queued';
CREATE INDEX turn_queued_in_group
    ON {s}.turn_requests (thread_group, seq) WHERE status = 'queued';
CREATE INDEX turn_parent ON {s}.turn_requests (parent) WHERE parent IS NOT NULL;
CREATE INDEX turn_thread_history ON {s}.turn_requests (thread_id, seq);

-- One row per thread: its active turn and its head (best queued request by rank, seq).
-- A claim locks idle threads' rows with SKIP LOCKED and never scans a busy thread's
-- backlog; every change of a thread's turns locks its row first.
CREATE TABLE {s}.threads (
    thread_id text PRIMARY KEY,
    thread_group text NOT NULL,
    running_id text,
    head_id text,
    head_rank double precision,
    head_seq bigint,
    head_not_before double precision,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    turns integer NOT NULL DEFAULT 0
);
CREATE INDEX threads_runnable ON {s}.threads (head_rank, head_seq)
    WHERE running_id IS NULL AND head_id IS NOT NULL;
CREATE INDEX threads_runnable_in_group ON {s}.threads (thread_group, head_not_before)
    WHERE running_id IS NULL AND head_id IS NOT NULL;
CREATE INDEX threads_delayed ON {s}.threads (head_not_before)
    WHERE running_id IS NULL AND head_id IS NOT NULL AND head_not_before > 0;

-- A new queued request: create its thread or make it the head if it sorts first. A
-- thread keeps its group (SQLSTATE TL001 otherwise, with the group as DETAIL).
CREATE FUNCTION {s}.turn_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.threads AS t (thread_id, thread_group, head_id, head_rank, head_seq,
                                  head_not_before, created_at, updated_at)
    VALUES (NEW.thread_id, NEW.thread_group, NEW.id, NEW.rank, NEW.seq,
            COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
    ON CONFLICT (thread_id) DO UPDATE SET
        head_id = CASE WHEN t.head_id IS NULL
                            OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                       THEN EXCLUDED.head_id ELSE t.head_id END,
        head_rank = CASE WHEN t.head_id IS NULL
                              OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                         THEN EXCLUDED.head_rank ELSE t.head_rank END,
        head_seq = CASE WHEN t.head_id IS NULL
                             OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                        THEN EXCLUDED.head_seq ELSE t.head_seq END,
        head_not_before = CASE WHEN t.head_id IS NULL
                                    OR (EXCLUDED.head_rank, EXCLUDED.head_seq)
                                       < (t.head_rank, t.head_seq)
                               THEN EXCLUDED.head_not_before ELSE t.head_not_before END,
        updated_at = EXCLUDED.updated_at
    WHERE t.thread_group = EXCLUDED.thread_group;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'toolang: thread % belongs to another group', NEW.thread_id
            USING ERRCODE = 'TL001',
                  DETAIL = (SELECT thread_group FROM {s}.threads
                            WHERE thread_id = NEW.thread_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER turn_queued AFTER INSERT ON {s}.turn_requests
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION {s}.turn_queued();

-- A status change that starts, ends or requeues a turn updates its thread's row. The
-- row is locked before the head is recomputed, so the recomputation (a new statement,
-- hence a new snapshot) sees every request a concurrent submitter committed first; a
-- submitter still in flight waits for this lock and then compares against our head.
CREATE FUNCTION {s}.turn_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_queued boolean := OLD.status = 'queued';
    is_queued boolean := NEW.status = 'queued';
    was_active boolean := OLD.status IN {active};
    is_active boolean := NEW.status IN {active};
BEGIN
    IF was_queued = is_queued AND was_active = is_active THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM {s}.threads WHERE thread_id = NEW.thread_id FOR UPDATE;
    IF was_queued = is_queued THEN
        UPDATE {s}.threads SET
            running_id = CASE WHEN is_active THEN NEW.id
                              WHEN running_id = NEW.id THEN NULL
                              ELSE running_id END,
            updated_at = NEW.updated_at
        WHERE thread_id = NEW.thread_id;
    ELSE
        UPDATE {s}.threads SET
            running_id = CASE WHEN is_active THEN NEW.id
                              WHEN running_id = NEW.id THEN NULL
                              ELSE running_id END,
            turns = turns + CASE WHEN was_queued AND is_active THEN 1 ELSE 0 END,
            updated_at = NEW.updated_at,
            (head_id, head_rank, head_seq, head_not_before) = (
                SELECT id, rank, seq, COALESCE(not_before, 0) FROM {s}.turn_requests
                WHERE thread_id = NEW.thread_id AND status = 'queued'
                ORDER BY rank, seq LIMIT 1)
        WHERE thread_id = NEW.thread_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER turn_status_changed AFTER UPDATE OF status ON {s}.turn_requests
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION {s}.turn_status_changed();

-- Admission in one call: see docs/store-postgres.md for the design.
CREATE FUNCTION {s}.claim(
    p_run text, p_limit integer, p_now double precision, p_lease double precision,
    p_cap_groups text[], p_caps integer[], p_only text[]
) RETURNS SETOF {s}.turn_requests LANGUAGE plpgsql AS $$
DECLARE
    v_locked text[] := '{{}}';
    v_budget integer[] := '{{}}';
    v_excluded text[] := '{{}}';
    v_tried text[] := '{{}}';
    v_claimed integer := 0;
    v_found boolean;
    v_group text;
    v_at integer;
    v_running bigint;
    c record;
    r {s}.turn_requests;
BEGIN
    IF p_limit <= 0 THEN
        RETURN;
    END IF;
    -- Group budgets. Counting running turns inside a claim races (two claimers both
    -- see cap - 1), so each capped group with a ready head is locked first, in name
    -- order (claimers never wait on each other in a cycle), and counted after its lock,
    -- in a statement of its own: a fresh snapshot that sees every claim of the group
    -- committed before ours. Only a claim starts turns, and it holds the lock until it
    -- commits; finishing never needs the lock (it only lowers the count).
    FOR v_group IN
        SELECT g FROM unnest(p_cap_groups) AS g
        WHERE EXISTS (SELECT 1 FROM {s}.threads t
                      WHERE t.thread_group = g AND t.running_id IS NULL
                        AND t.head_id IS NOT NULL AND t.head_not_before <= p_now)
        ORDER BY g
    LOOP
        PERFORM pg_advisory_xact_lock({run_key}, hashtext(v_group));
        SELECT count(*) INTO v_running FROM {s}.turn_requests
         WHERE thread_group = v_group AND status IN {active};
        v_at := array_position(p_cap_groups, v_group);
        v_locked := v_locked || v_group;
        v_budget := v_budget || (p_caps[v_at] - v_running)::integer;
        IF p_caps[v_at] - v_running <= 0 THEN
            v_excluded := v_excluded || v_group;
        END IF;
    END LOOP;
    -- A capped group that had no ready head a moment ago waits for the next claim.
    v_excluded := v_excluded
        || ARRAY(SELECT g FROM unnest(p_cap_groups) AS g WHERE g <> ALL (v_locked));
    LOOP
        v_found := false;
        FOR c IN
            SELECT t.thread_id, t.thread_group, t.head_id FROM {s}.threads t
             WHERE t.running_id IS NULL AND t.head_id IS NOT NULL
               AND t.head_not_before <= p_now
               AND t.thread_group <> ALL (v_excluded)
               AND t.thread_id <> ALL (v_tried)
               AND (p_only IS NULL OR t.head_id = ANY (p_only))
             ORDER BY t.head_rank, t.head_seq
             LIMIT p_limit - v_claimed + 8
        LOOP
            v_found := true;
            v_tried := v_tried || c.thread_id;
            CONTINUE WHEN c.thread_group = ANY (v_excluded);
            -- Lock the thread (skipping one another claimer or writer holds) and check
            -- it again on its newest version. The join with the head request matters:
            -- when the row changed after this statement's snapshot, the re-check sees
            -- the new row but the old request rows, so a changed head fails the join
            -- and the thread is skipped instead of being started without its turn.
            PERFORM 1 FROM {s}.threads t
              JOIN {s}.turn_requests j ON j.id = t.head_id AND j.status = 'queued'
             WHERE t.thread_id = c.thread_id AND t.running_id IS NULL
               AND t.head_id = c.head_id AND t.head_not_before <= p_now
               FOR UPDATE OF t SKIP LOCKED;
            CONTINUE WHEN NOT FOUND;
            UPDATE {s}.turn_requests
               SET status = 'running', attempt = attempt + 1, lease_owner = p_run,
                   lease_expires = p_now + p_lease, started_at = p_now, updated_at = p_now
             WHERE id = c.head_id AND status = 'queued'
            RETURNING * INTO r;
            CONTINUE WHEN NOT FOUND;
            RETURN NEXT r;
            v_claimed := v_claimed + 1;
            v_at := array_position(v_locked, c.thread_group);
            IF v_at IS NOT NULL THEN
                v_budget[v_at] := v_budget[v_at] - 1;
                IF v_budget[v_at] <= 0 THEN
                    v_excluded := v_excluded || c.thread_group;
                END IF;
            END IF;
            EXIT WHEN v_claimed >= p_limit;
        END LOOP;
        EXIT WHEN v_claimed >= p_limit OR NOT v_found;
    END LOOP;
END $$;

CREATE TABLE {s}.turn_steps (
    turn_id text NOT NULL,
    seq integer NOT NULL,
    attempt integer NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    started_at double precision NOT NULL,
    finished_at double precision NOT NULL,
    data jsonb NOT NULL DEFAULT '{{}}',
    error text,
    idempotency_key text,
    PRIMARY KEY (turn_id, seq)
);
CREATE UNIQUE INDEX turn_steps_idempotency
    ON {s}.turn_steps (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE {s}.records (
    kind text NOT NULL,
    key text NOT NULL,
    revision integer NOT NULL,
    data jsonb NOT NULL,
    updated_at double precision NOT NULL,
    PRIMARY KEY (kind, key)
);
"""

M002_THREADS_HAVE_OWNERS = """
-- A thread belongs to the owner of its first request (NULL, the operator's, is an owner
-- of its own); a request of another owner is refused by the insert itself (SQLSTATE
-- TL002), as a request of another group is (TL001). Existing threads take the owner of
-- their oldest request.
ALTER TABLE {s}.threads ADD COLUMN owner text;
UPDATE {s}.threads t SET owner = (
    SELECT r.owner FROM {s}.turn_requests r WHERE r.thread_id = t.thread_id
    ORDER BY r.seq LIMIT 1);
CREATE OR REPLACE FUNCTION {s}.turn_queued() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    kept record;
BEGIN
    INSERT INTO {s}.threads AS t (thread_id, thread_group, owner, head_id, head_rank,
                                  head_seq, head_not_before, created_at, updated_at)
    VALUES (NEW.thread_id, NEW.thread_group, NEW.owner, NEW.id, NEW.rank, NEW.seq,
            COALESCE(NEW.not_before, 0), NEW.created_at, NEW.created_at)
    ON CONFLICT (thread_id) DO UPDATE SET
        head_id = CASE WHEN t.head_id IS NULL
                            OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                       THEN EXCLUDED.head_id ELSE t.head_id END,
        head_rank = CASE WHEN t.head_id IS NULL
                              OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                         THEN EXCLUDED.head_rank ELSE t.head_rank END,
        head_seq = CASE WHEN t.head_id IS NULL
                             OR (EXCLUDED.head_rank, EXCLUDED.head_seq) < (t.head_rank, t.head_seq)
                        THEN EXCLUDED.head_seq ELSE t.head_seq END,
        head_not_before = CASE WHEN t.head_id IS NULL
                                    OR (EXCLUDED.head_rank, EXCLUDED.head_seq)
                                       < (t.head_rank, t.head_seq)
                               THEN EXCLUDED.head_not_before ELSE t.head_not_before END,
        updated_at = EXCLUDED.updated_at
    WHERE t.thread_group = EXCLUDED.thread_group AND t.owner IS NOT DISTINCT FROM EXCLUDED.owner;
    IF NOT FOUND THEN
        SELECT thread_group, owner INTO kept FROM {s}.threads WHERE thread_id = NEW.thread_id;
        IF kept.thread_group <> NEW.thread_group THEN
            RAISE EXCEPTION 'toolang: thread % belongs to another group', NEW.thread_id
                USING ERRCODE = 'TL001', DETAIL = kept.thread_group;
        END IF;
        RAISE EXCEPTION 'toolang: thread % belongs to another owner', NEW.thread_id
            USING ERRCODE = 'TL002';
    END IF;
    RETURN NULL;
END $$;
"""

M003_PARKED_TURNS_GIVE_THEIR_SLOT_BACK = """
-- A turn awaiting a person's decision holds no slot of its group's max_running: the
-- claim counts running and canceling turns only (its thread stays busy: running_id).
-- A parked turn takes a slot again through resume_parked, under the same group lock.
CREATE OR REPLACE FUNCTION {s}.claim(
    p_run text, p_limit integer, p_now double precision, p_lease double precision,
    p_cap_groups text[], p_caps integer[], p_only text[]
) RETURNS SETOF {s}.turn_requests LANGUAGE plpgsql AS $$
DECLARE
    v_locked text[] := '{{}}';
    v_budget integer[] := '{{}}';
    v_excluded text[] := '{{}}';
    v_tried text[] := '{{}}';
    v_claimed integer := 0;
    v_found boolean;
    v_group text;
    v_at integer;
    v_running bigint;
    c record;
    r {s}.turn_requests;
BEGIN
    IF p_limit <= 0 THEN
        RETURN;
    END IF;
    -- Group budgets. Counting running turns inside a claim races (two claimers both
    -- see cap - 1), so each capped group with a ready head is locked first, in name
    -- order (claimers never wait on each other in a cycle), and counted after its lock,
    -- in a statement of its own: a fresh snapshot that sees every claim of the group
    -- committed before ours. Only a claim starts turns, and it holds the lock until it
    -- commits; finishing never needs the lock (it only lowers the count).
    FOR v_group IN
        SELECT g FROM unnest(p_cap_groups) AS g
        WHERE EXISTS (SELECT 1 FROM {s}.threads t
                      WHERE t.thread_group = g AND t.running_id IS NULL
                        AND t.head_id IS NOT NULL AND t.head_not_before <= p_now)
        ORDER BY g
    LOOP
        PERFORM pg_advisory_xact_lock({run_key}, hashtext(v_group));
        SELECT count(*) INTO v_running FROM {s}.turn_requests
         WHERE thread_group = v_group AND status IN ('running', 'canceling');
        v_at := array_position(p_cap_groups, v_group);
        v_locked := v_locked || v_group;
        v_budget := v_budget || (p_caps[v_at] - v_running)::integer;
        IF p_caps[v_at] - v_running <= 0 THEN
            v_excluded := v_excluded || v_group;
        END IF;
    END LOOP;
    -- A capped group that had no ready head a moment ago waits for the next claim.
    v_excluded := v_excluded
        || ARRAY(SELECT g FROM unnest(p_cap_groups) AS g WHERE g <> ALL (v_locked));
    LOOP
        v_found := false;
        FOR c IN
            SELECT t.thread_id, t.thread_group, t.head_id FROM {s}.threads t
             WHERE t.running_id IS NULL AND t.head_id IS NOT NULL
               AND t.head_not_before <= p_now
               AND t.thread_group <> ALL (v_excluded)
               AND t.thread_id <> ALL (v_tried)
               AND (p_only IS NULL OR t.head_id = ANY (p_only))
             ORDER BY t.head_rank, t.head_seq
             LIMIT p_limit - v_claimed + 8
        LOOP
            v_found := true;
            v_tried := v_tried || c.thread_id;
            CONTINUE WHEN c.thread_group = ANY (v_excluded);
            -- Lock the thread (skipping one another claimer or writer holds) and check
            -- it again on its newest version. The join with the head request matters:
            -- when the row changed after this statement's snapshot, the re-check sees
            -- the new row but the old request rows, so a changed head fails the join
            -- and the thread is skipped instead of being started without its turn.
            PERFORM 1 FROM {s}.threads t
              JOIN {s}.turn_requests j ON j.id = t.head_id AND j.status = 'queued'
             WHERE t.thread_id = c.thread_id AND t.running_id IS NULL
               AND t.head_id = c.head_id AND t.head_not_before <= p_now
               FOR UPDATE OF t SKIP LOCKED;
            CONTINUE WHEN NOT FOUND;
            UPDATE {s}.turn_requests
               SET status = 'running', attempt = attempt + 1, lease_owner = p_run,
                   lease_expires = p_now + p_lease, started_at = p_now, updated_at = p_now
             WHERE id = c.head_id AND status = 'queued'
            RETURNING * INTO r;
            CONTINUE WHEN NOT FOUND;
            RETURN NEXT r;
            v_claimed := v_claimed + 1;
            v_at := array_position(v_locked, c.thread_group);
            IF v_at IS NOT NULL THEN
                v_budget[v_at] := v_budget[v_at] - 1;
                IF v_budget[v_at] <= 0 THEN
                    v_excluded := v_excluded || c.thread_group;
                END IF;
            END IF;
            EXIT WHEN v_claimed >= p_limit;
        END LOOP;
        EXIT WHEN v_claimed >= p_limit OR NOT v_found;
    END LOOP;
END $$;
"""

M004_PARKED_HAND_BACKS = """
-- How often the turn was handed back while it waited for a person (a shutdown, a
-- crash, a lost lease while awaiting_approval): each hand-back starts a new attempt,
-- but only the attempts that ran count towards max_attempts.
ALTER TABLE {s}.turn_requests ADD COLUMN parked_handbacks integer NOT NULL DEFAULT 0;
"""

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    ("m001_runtime", M001_RUNTIME),
    ("m002_threads_have_owners", M002_THREADS_HAVE_OWNERS),
    ("m003_parked_turns_give_their_slot_back", M003_PARKED_TURNS_GIVE_THEIR_SLOT_BACK),
    ("m004_parked_hand_backs", M004_PARKED_HAND_BACKS),
)
"""``(name, SQL template)`` in order."""
