-- Retention: how long finished runs are kept, per namespace (definition_name '') with a per-definition
-- override, and whether a run is archived to the blob store before it is deleted. Not run data: on a
-- distributed PostgreSQL this is a small reference table.
CREATE TABLE weft.retention (
  namespace        text        NOT NULL,
  definition_name  text        NOT NULL DEFAULT '',
  keep_ms          bigint      NOT NULL CHECK (keep_ms > 0),
  archive          boolean     NOT NULL DEFAULT false,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, definition_name)
);

-- Finished runs of a namespace, oldest first: what a purge takes, a batch at a time. Partial, so running runs
-- (the hot rows) never enter it; a run enters it once, when it finishes.
CREATE INDEX IF NOT EXISTS runs_finished ON weft.runs (namespace, finished_at) WHERE finished_at IS NOT NULL;

-- A purge deletes the idempotency key of each run it deletes: a key lives as long as its run.
CREATE INDEX IF NOT EXISTS idempotency_keys_by_run ON weft.idempotency_keys (run_id);

-- Blobs referenced by purged runs, written in the purge's transaction: the durable list of blobs to delete
-- from the blob store once the rows are gone (kept until deleted; a failed delete is retried).
CREATE TABLE weft.blob_deletions (
  key         text        PRIMARY KEY,
  listed_at   timestamptz NOT NULL DEFAULT now(),
  attempts    int         NOT NULL DEFAULT 0,
  last_error  text
);
