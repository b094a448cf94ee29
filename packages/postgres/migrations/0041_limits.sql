-- Limits, per namespace: a concurrency cap per task type, named semaphores, rate limits per key and a
-- quota of running runs. A missing row means no limit.
CREATE TABLE weft.limits (
  namespace   text        NOT NULL,
  kind        text        NOT NULL CHECK (kind IN ('concurrency', 'semaphore', 'rate', 'quota')),
  name        text        NOT NULL,
  max         int         NOT NULL CHECK (max >= 0),
  window_ms   int         CHECK (window_ms IS NULL OR window_ms > 0),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, kind, name)
);

-- What a leased task takes from a limit ("gate"): a concurrency slot, semaphore permits or a rate-limit
-- start. A concurrency or semaphore hold counts only while its attempt is running, so it is released in
-- the very statement that ends the attempt (a report, an expired lease, a cancel): nothing can leak. A
-- rate hold counts while it is inside its window. Stale rows are deleted under the gate's lock.
CREATE TABLE weft.holds (
  gate      text        NOT NULL,
  run_id    uuid        NOT NULL,
  task_id   uuid        NOT NULL,
  attempt   int         NOT NULL,
  amount    int         NOT NULL,
  taken_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (gate, run_id, task_id, attempt)
);

-- A queue row's gates beyond its task type: {"semaphore:stripe": 2, "rate:mail": 1}; null for none. Rows
-- without gates are leased by the fast path, which never looks at limits rows or takes a lock; the two
-- kinds of row live in two partial indexes so that neither path scans the other's rows.
ALTER TABLE weft.queue ADD COLUMN gates jsonb;
CREATE INDEX queue_pick_free ON weft.queue (namespace, task_type, priority DESC, id) WHERE gates IS NULL;
CREATE INDEX queue_pick_gated ON weft.queue (namespace, task_type, priority DESC, id) WHERE gates IS NOT NULL;
DROP INDEX weft.queue_pick;
