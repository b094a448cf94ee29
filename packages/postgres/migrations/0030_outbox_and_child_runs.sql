-- The transactional outbox, and runs started by other runs.

-- A run started by a node of another run: which attempt started it. A detached run (start_workflow) does
-- not report back; an attached one (sub_workflow) puts its outcome in the parent's inbox when it ends.
ALTER TABLE weft.runs
  ADD COLUMN parent_run_id    uuid,
  ADD COLUMN parent_node_id   text,
  ADD COLUMN parent_iteration text,
  ADD COLUMN parent_attempt   int,
  ADD COLUMN detached         boolean NOT NULL DEFAULT false;

-- The child an attempt started: what cancelling or timing out the attempt cascades to.
ALTER TABLE weft.tasks ADD COLUMN child_run_id uuid;

-- Every effect that leaves a run, written in the transaction of the change it describes and delivered
-- after commit by a relay (at least once: claim, deliver and mark share one transaction). Delivered rows
-- are deleted; failing rows back off; past the limit they become dead letters, kept until replayed.
CREATE TABLE weft.outbox (
  run_id           uuid        NOT NULL,
  id               bigint      GENERATED ALWAYS AS IDENTITY,
  namespace        text        NOT NULL,
  task_id          uuid,
  destination      text        NOT NULL,
  kind             text        NOT NULL,
  message_id       text        NOT NULL,
  payload          jsonb       NOT NULL,
  status           text        NOT NULL DEFAULT 'pending',
  attempts         int         NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  dead_at          timestamptz,
  PRIMARY KEY (run_id, id),
  CONSTRAINT outbox_status CHECK (status IN ('pending', 'dead'))
);
-- The relay's hot path: due rows of one destination. Dead letters leave it, so it stays small.
CREATE INDEX outbox_due ON weft.outbox (destination, next_attempt_at) WHERE status = 'pending';
-- Listing dead letters, newest first, and replaying them by id.
CREATE INDEX outbox_dead ON weft.outbox (namespace, id DESC) WHERE status = 'dead';
CREATE INDEX outbox_by_id ON weft.outbox (id);

-- Idempotent starts of runs by nodes: one key per starting attempt (invariant 10). The attempt is part of the
-- key, so a retried node starts a new child while a redelivered start of the same attempt is absorbed.
-- Unpartitioned on purpose: a key must be unique across every run, which a table distributed by run id could
-- not enforce.
CREATE TABLE weft.start_keys (
  key         text        PRIMARY KEY,
  run_id      uuid        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
