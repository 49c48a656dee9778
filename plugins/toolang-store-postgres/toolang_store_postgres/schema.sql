-- The PostgreSQL execution store's schema (migration set 'toolang-store-postgres'),
-- as its migrations build it. Generated: refresh with
--   TOOLANG_PG_DSN=postgresql://… python -m toolang_store_postgres.snapshot --write
-- Migrations: m001_runtime, m002_threads_have_owners, m003_parked_turns_give_their_slot_back, m004_parked_hand_backs

CREATE TABLE records (
    kind text NOT NULL,
    key text NOT NULL,
    revision integer NOT NULL,
    data jsonb NOT NULL,
    updated_at double precision NOT NULL,
    CONSTRAINT records_pkey PRIMARY KEY (kind, key)
);

CREATE TABLE runs (
    id text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    version text NOT NULL,
    started_at double precision NOT NULL,
    heartbeat_at double precision NOT NULL,
    stopped_at double precision,
    status text NOT NULL,
    plugins jsonb NOT NULL DEFAULT '[]'::jsonb,
    CONSTRAINT runs_pkey PRIMARY KEY (id)
);

CREATE TABLE threads (
    thread_id text NOT NULL,
    thread_group text NOT NULL,
    running_id text,
    head_id text,
    head_rank double precision,
    head_seq bigint,
    head_not_before double precision,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    turns integer NOT NULL DEFAULT 0,
    owner text,
    CONSTRAINT threads_pkey PRIMARY KEY (thread_id)
);

CREATE TABLE toolang_migrations (
    migration_set text NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT toolang_migrations_pkey PRIMARY KEY (migration_set, name)
);

CREATE TABLE turn_requests (
    seq bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    id text NOT NULL,
    source text NOT NULL,
    thread_id text NOT NULL,
    thread_group text NOT NULL,
    priority integer NOT NULL,
    rank double precision NOT NULL,
    input text NOT NULL,
    status text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    sender text NOT NULL DEFAULT 'owner'::text,
    channel text,
    agent text,
    dedupe_key text,
    not_before double precision,
    parent text,
    owner text,
    timeout_seconds double precision,
    meta jsonb NOT NULL DEFAULT '{}'::jsonb,
    steer boolean NOT NULL DEFAULT false,
    started_at double precision,
    finished_at double precision,
    lease_owner text,
    lease_expires double precision,
    cancel_requested boolean NOT NULL DEFAULT false,
    output text,
    outcome text,
    error text,
    parked_handbacks integer NOT NULL DEFAULT 0,
    CONSTRAINT turn_requests_id_key UNIQUE (id),
    CONSTRAINT turn_requests_pkey PRIMARY KEY (seq),
    CONSTRAINT turn_requests_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'awaiting_approval'::text, 'canceling'::text, 'completed'::text, 'failed'::text, 'canceled'::text, 'dropped'::text, 'steered'::text])))
);

CREATE TABLE turn_steps (
    turn_id text NOT NULL,
    seq integer NOT NULL,
    attempt integer NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    started_at double precision NOT NULL,
    finished_at double precision NOT NULL,
    data jsonb NOT NULL DEFAULT '{}'::jsonb,
    error text,
    idempotency_key text,
    CONSTRAINT turn_steps_pkey PRIMARY KEY (turn_id, seq)
);

CREATE UNIQUE INDEX records_pkey ON toolang.records USING btree (kind, key);

CREATE UNIQUE INDEX runs_pkey ON toolang.runs USING btree (id);

CREATE INDEX runs_running ON toolang.runs USING btree (heartbeat_at) WHERE (status = 'running'::text);

CREATE INDEX runs_started ON toolang.runs USING btree (started_at);

CREATE INDEX threads_delayed ON toolang.threads USING btree (head_not_before) WHERE ((running_id IS NULL) AND (head_id IS NOT NULL) AND (head_not_before > (0)::double precision));

CREATE UNIQUE INDEX threads_pkey ON toolang.threads USING btree (thread_id);

CREATE INDEX threads_runnable ON toolang.threads USING btree (head_rank, head_seq) WHERE ((running_id IS NULL) AND (head_id IS NOT NULL));

CREATE INDEX threads_runnable_in_group ON toolang.threads USING btree (thread_group, head_not_before) WHERE ((running_id IS NULL) AND (head_id IS NOT NULL));

CREATE UNIQUE INDEX toolang_migrations_pkey ON toolang.toolang_migrations USING btree (migration_set, name);

CREATE UNIQUE INDEX turn_one_active_per_thread ON toolang.turn_requests USING btree (thread_id) WHERE (status = ANY (ARRAY['running'::text, 'awaiting_approval'::text, 'canceling'::text]));

CREATE INDEX turn_parent ON toolang.turn_requests USING btree (parent) WHERE (parent IS NOT NULL);

CREATE INDEX turn_queued_in_group ON toolang.turn_requests USING btree (thread_group, seq) WHERE (status = 'queued'::text);

CREATE INDEX turn_queued_in_thread ON toolang.turn_requests USING btree (thread_id, rank, seq) WHERE (status = 'queued'::text);

CREATE UNIQUE INDEX turn_requests_id_key ON toolang.turn_requests USING btree (id);

CREATE UNIQUE INDEX turn_requests_pkey ON toolang.turn_requests USING btree (seq);

CREATE INDEX turn_thread_history ON toolang.turn_requests USING btree (thread_id, seq);

CREATE UNIQUE INDEX turn_steps_idempotency ON toolang.turn_steps USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);

CREATE UNIQUE INDEX turn_steps_pkey ON toolang.turn_steps USING btree (turn_id, seq);

CREATE OR REPLACE FUNCTION toolang.claim(p_run text, p_limit integer, p_now double precision, p_lease double precision, p_cap_groups text[], p_caps integer[], p_only text[])
 RETURNS SETOF toolang.turn_requests
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_locked text[] := '{}';
    v_budget integer[] := '{}';
    v_excluded text[] := '{}';
    v_tried text[] := '{}';
    v_claimed integer := 0;
    v_found boolean;
    v_group text;
    v_at integer;
    v_running bigint;
    c record;
    r toolang.turn_requests;
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
        WHERE EXISTS (SELECT 1 FROM toolang.threads t
                      WHERE t.thread_group = g AND t.running_id IS NULL
                        AND t.head_id IS NOT NULL AND t.head_not_before <= p_now)
        ORDER BY g
    LOOP
        PERFORM pg_advisory_xact_lock({run_key}, hashtext(v_group));
        SELECT count(*) INTO v_running FROM toolang.turn_requests
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
            SELECT t.thread_id, t.thread_group, t.head_id FROM toolang.threads t
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
            PERFORM 1 FROM toolang.threads t
              JOIN toolang.turn_requests j ON j.id = t.head_id AND j.status = 'queued'
             WHERE t.thread_id = c.thread_id AND t.running_id IS NULL
               AND t.head_id = c.head_id AND t.head_not_before <= p_now
               FOR UPDATE OF t SKIP LOCKED;
            CONTINUE WHEN NOT FOUND;
            UPDATE toolang.turn_requests
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
END $function$;

CREATE OR REPLACE FUNCTION toolang.turn_queued()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    kept record;
BEGIN
    INSERT INTO toolang.threads AS t (thread_id, thread_group, owner, head_id, head_rank,
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
        SELECT thread_group, owner INTO kept FROM toolang.threads WHERE thread_id = NEW.thread_id;
        IF kept.thread_group <> NEW.thread_group THEN
            RAISE EXCEPTION 'toolang: thread % belongs to another group', NEW.thread_id
                USING ERRCODE = 'TL001', DETAIL = kept.thread_group;
        END IF;
        RAISE EXCEPTION 'toolang: thread % belongs to another owner', NEW.thread_id
            USING ERRCODE = 'TL002';
    END IF;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION toolang.turn_status_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    was_queued boolean := OLD.status = 'queued';
    is_queued boolean := NEW.status = 'queued';
    was_active boolean := OLD.status IN ('running', 'awaiting_approval', 'canceling');
    is_active boolean := NEW.status IN ('running', 'awaiting_approval', 'canceling');
BEGIN
    IF was_queued = is_queued AND was_active = is_active THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM toolang.threads WHERE thread_id = NEW.thread_id FOR UPDATE;
    IF was_queued = is_queued THEN
        UPDATE toolang.threads SET
            running_id = CASE WHEN is_active THEN NEW.id
                              WHEN running_id = NEW.id THEN NULL
                              ELSE running_id END,
            updated_at = NEW.updated_at
        WHERE thread_id = NEW.thread_id;
    ELSE
        UPDATE toolang.threads SET
            running_id = CASE WHEN is_active THEN NEW.id
                              WHEN running_id = NEW.id THEN NULL
                              ELSE running_id END,
            turns = turns + CASE WHEN was_queued AND is_active THEN 1 ELSE 0 END,
            updated_at = NEW.updated_at,
            (head_id, head_rank, head_seq, head_not_before) = (
                SELECT id, rank, seq, COALESCE(not_before, 0) FROM toolang.turn_requests
                WHERE thread_id = NEW.thread_id AND status = 'queued'
                ORDER BY rank, seq LIMIT 1)
        WHERE thread_id = NEW.thread_id;
    END IF;
    RETURN NULL;
END $function$;

CREATE TRIGGER turn_queued AFTER INSERT ON toolang.turn_requests FOR EACH ROW WHEN ((new.status = 'queued'::text)) EXECUTE FUNCTION toolang.turn_queued();

CREATE TRIGGER turn_status_changed AFTER UPDATE OF status ON toolang.turn_requests FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION toolang.turn_status_changed();

