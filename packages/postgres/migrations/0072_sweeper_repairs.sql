-- The stuck-run sweeper's audit: one row per repair, written in the repair's own transaction, under the
-- run's lock. What was found (the run's status, how long it had been idle, its last event before the
-- repair), what the repair changed (the history it wrote, the attempts it started, the run's new status),
-- and, filled by a later round, whether the run moved after it. Keyed by run first, like every run's rows.
CREATE TABLE weft.sweeper_repairs (
  run_id       uuid        NOT NULL,
  id           bigint      GENERATED ALWAYS AS IDENTITY,
  namespace    text        NOT NULL,
  definition   text        NOT NULL,
  repaired_at  timestamptz NOT NULL DEFAULT now(),
  status       text        NOT NULL,
  idle_ms      bigint      NOT NULL,
  last_event   jsonb,
  changed      jsonb       NOT NULL,
  -- The history sequence numbers the repair wrote, first and last: the run moved if it wrote beyond them.
  first_seq    int         NOT NULL,
  last_seq     int         NOT NULL,
  moved        boolean,
  checked_at   timestamptz,
  PRIMARY KEY (run_id, id)
);
-- Listing a namespace's repairs, newest first.
CREATE INDEX sweeper_repairs_by_namespace ON weft.sweeper_repairs (namespace, id DESC);
-- The repairs a later round has yet to check.
CREATE INDEX sweeper_repairs_unchecked ON weft.sweeper_repairs (repaired_at) WHERE moved IS NULL;
