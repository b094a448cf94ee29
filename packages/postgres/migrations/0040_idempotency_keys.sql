-- Idempotent starts. One row per (namespace, key), naming the run the key started. Not keyed by run: a
-- key is looked up before its run exists, so on a distributed PostgreSQL this table stays unpartitioned.
-- The primary key is the claim: a second start with the key waits on the first one's insert and, once it
-- commits, finds the conflict and takes the existing run instead of starting another.
CREATE TABLE weft.idempotency_keys (
  namespace        text        NOT NULL,
  key              text        NOT NULL,
  run_id           uuid        NOT NULL,
  definition_name  text        NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, key)
);
