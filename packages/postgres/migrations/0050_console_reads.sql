-- What the web console reads beside what runs need.
--
-- The runs list with a start-time filter reads runs by start time (newest first, then by id), so a time
-- range is an index range instead of a walk through every newer run; and runs of one definition version
-- are read without walking the definition's other versions. On a large table, building an index here holds
-- off run writes while it builds: create them beforehand with CREATE INDEX CONCURRENTLY and the same names,
-- and this migration finds them there.
CREATE INDEX IF NOT EXISTS runs_by_start ON weft.runs (namespace, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS runs_by_version ON weft.runs (namespace, definition_name, definition_version, id DESC);

-- Workers seen asking for tasks. A server remembers the workers that poll it in memory and writes them here
-- every few seconds (one statement for any number of polls), so the poll path costs nothing more. Not run
-- data: on a distributed PostgreSQL this is a small reference table.
CREATE TABLE weft.workers (
  namespace      text        NOT NULL,
  name           text        NOT NULL,
  task_types     text[]      NOT NULL,
  first_seen_at  timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL,
  PRIMARY KEY (namespace, name)
);
CREATE INDEX workers_recent ON weft.workers (namespace, last_seen_at DESC);
