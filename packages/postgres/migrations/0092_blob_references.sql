-- Which runs reference which large-payload blobs: one row per (run, blob key), written by the transaction
-- that first stores a reference to the blob in one of the run's rows, deleted with the run by the purge. The
-- blob deleter deletes a listed blob only when no row here names it (decision 0165, invariant 30). Only
-- values over the offload threshold write here: small payloads never touch this table.
CREATE TABLE weft.blob_refs (
  run_id  uuid NOT NULL,
  key     text NOT NULL,
  PRIMARY KEY (run_id, key)
);
-- The deleter's check: is any run still referencing this blob?
CREATE INDEX blob_refs_by_key ON weft.blob_refs (key);

-- References already stored before this table existed, found where the purge finds them.
INSERT INTO weft.blob_refs (run_id, key)
SELECT DISTINCT v.run_id, k.key #>> '{}'
  FROM (SELECT id AS run_id, input AS v FROM weft.runs UNION ALL SELECT id, output FROM weft.runs
        UNION ALL SELECT run_id, input FROM weft.tasks UNION ALL SELECT run_id, output FROM weft.tasks
        UNION ALL SELECT run_id, data FROM weft.history UNION ALL SELECT run_id, event FROM weft.inbox
        UNION ALL SELECT run_id, buffered FROM weft.mailboxes UNION ALL SELECT run_id, data FROM weft.human_tasks
       ) AS v(run_id, v),
       jsonb_path_query(v.v, '$.**."$weft_blob"') AS k(key)
 WHERE v.v IS NOT NULL AND jsonb_typeof(k.key) = 'string'
ON CONFLICT DO NOTHING;

-- A listed blob whose deletion failed waits until not_before (backoff) before the deleter tries it again.
ALTER TABLE weft.blob_deletions ADD COLUMN not_before timestamptz NOT NULL DEFAULT now();
CREATE INDEX blob_deletions_due ON weft.blob_deletions (not_before);
