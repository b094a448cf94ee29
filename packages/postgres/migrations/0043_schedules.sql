-- Schedules: a cron expression in a time zone that starts runs of a definition. `next_at` is the next due
-- time; a replica fires a due schedule under its row lock (SKIP LOCKED) and starts the run with an
-- idempotency key made of the schedule and the due time, so each due start happens once across replicas
-- even if a replica dies between starting the run and moving `next_at` on.
CREATE TABLE weft.schedules (
  namespace     text        NOT NULL,
  name          text        NOT NULL,
  definition    text        NOT NULL,
  version       int,
  cron          text        NOT NULL,
  timezone      text        NOT NULL DEFAULT 'UTC',
  input         jsonb       NOT NULL DEFAULT '{}',
  overlap       text        NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'allow', 'buffer_one')),
  paused        boolean     NOT NULL DEFAULT false,
  next_at       timestamptz,
  buffered_at   timestamptz,
  last_at       timestamptz,
  last_run_id   uuid,
  last_outcome  text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, name)
);
CREATE INDEX schedules_due ON weft.schedules (next_at) WHERE NOT paused;
