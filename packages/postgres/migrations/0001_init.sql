-- Weft's schema. Everything that belongs to a run is keyed by run_id first, so the tables can be
-- distributed by run on a distributed PostgreSQL without changing a query.

CREATE TABLE weft.definitions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  namespace   text        NOT NULL,
  name        text        NOT NULL,
  version     int         NOT NULL,
  hash        text        NOT NULL,
  source      text        NOT NULL,
  definition  jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace, name, version),
  UNIQUE (namespace, name, hash)
);

CREATE TABLE weft.runs (
  id                 uuid        PRIMARY KEY,
  namespace          text        NOT NULL,
  definition_id      bigint      NOT NULL REFERENCES weft.definitions (id),
  definition_name    text        NOT NULL,
  definition_version int         NOT NULL,
  status             text        NOT NULL,
  input              jsonb       NOT NULL,
  output             jsonb,
  error              jsonb,
  vars               jsonb       NOT NULL DEFAULT '{}',
  sinks_done         int         NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz
);
-- Run ids are time-ordered (UUIDv7), so "newest first" is "highest id first".
CREATE INDEX runs_by_namespace ON weft.runs (namespace, id DESC);
CREATE INDEX runs_by_status ON weft.runs (namespace, status, id DESC);
CREATE INDEX runs_by_definition ON weft.runs (namespace, definition_name, id DESC);

-- One row per attempt of a node instance. The unique key is the task identity (invariant 10): run, node,
-- iteration, attempt. A retry is a new attempt, never an overwrite.
CREATE TABLE weft.tasks (
  run_id            uuid        NOT NULL,
  id                uuid        NOT NULL,
  node_id           text        NOT NULL,
  iteration         text        NOT NULL DEFAULT '',
  attempt           int         NOT NULL,
  status            text        NOT NULL,
  task_type         text,
  priority          int         NOT NULL DEFAULT 0,
  timeout_ms        int,
  input             jsonb,
  output            jsonb,
  error             jsonb,
  arrivals          jsonb,
  worker            text,
  lease_token       uuid,
  lease_expires_at  timestamptz,
  deadline_at       timestamptz,
  retry_at          timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  PRIMARY KEY (run_id, id),
  CONSTRAINT tasks_identity UNIQUE (run_id, node_id, iteration, attempt)
);
-- The lease reaper scans only running attempts, by expiry.
CREATE INDEX tasks_running_by_expiry ON weft.tasks (lease_expires_at) WHERE status = 'running';

-- The default dispatcher: queued tasks waiting for a worker, written in the same transaction as the task.
-- A row is a wake-up, not the truth: leasing checks the task row, so a stale row is harmless.
CREATE TABLE weft.queue (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id       uuid        NOT NULL,
  run_id        uuid        NOT NULL,
  namespace     text        NOT NULL,
  task_type     text        NOT NULL,
  priority      int         NOT NULL DEFAULT 0,
  available_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queue_pick ON weft.queue (namespace, task_type, priority DESC, id);

-- Runs awaiting a decision. The primary key is the dedupe: a burst of events collapses into one pass.
CREATE TABLE weft.decide_queue (
  run_id       uuid        PRIMARY KEY,
  reason       text        NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now(),
  not_before   timestamptz NOT NULL DEFAULT now(),
  failures     int         NOT NULL DEFAULT 0,
  last_error   text
);
CREATE INDEX decide_queue_due ON weft.decide_queue (not_before);

-- Events that reached a run while another transaction held its lock; the next decision consumes them.
CREATE TABLE weft.inbox (
  run_id      uuid        NOT NULL,
  id          bigint      GENERATED ALWAYS AS IDENTITY,
  event       jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, id)
);

-- Durable timers: a two-day wait is one row here.
CREATE TABLE weft.timers (
  run_id   uuid        NOT NULL,
  id       uuid        NOT NULL,
  due_at   timestamptz NOT NULL,
  purpose  jsonb       NOT NULL,
  PRIMARY KEY (run_id, id)
);
CREATE INDEX timers_due ON weft.timers (due_at);

-- Every event of a run. seq is gap-free per run: only a transaction holding the run's row lock appends,
-- and the primary key turns any mistake there into an error instead of a silent duplicate.
CREATE TABLE weft.history (
  run_id     uuid        NOT NULL,
  seq        int         NOT NULL,
  type       text        NOT NULL,
  node_id    text,
  iteration  text,
  attempt    int,
  data       jsonb       NOT NULL,
  at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);
