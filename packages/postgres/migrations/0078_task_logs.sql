-- Task logs: lines a handler wrote to its attempt, kept with the run (deleting a run deletes them).
-- One row per attempt that logged: what it has kept so far, against its bounds. A write takes this row's
-- lock (the upsert), so two writes of one attempt count one after the other and the bounds hold.
CREATE TABLE weft.task_log_attempts (
  run_id     uuid    NOT NULL REFERENCES weft.runs (id) ON DELETE CASCADE,
  task_id    uuid    NOT NULL,
  attempt    int     NOT NULL,
  node_id    text    NOT NULL,
  iteration  text    NOT NULL,
  lines      int     NOT NULL DEFAULT 0,
  bytes      bigint  NOT NULL DEFAULT 0,
  truncated  boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, task_id, attempt)
);

-- The lines, in the order they were kept (id); `seq` numbers an attempt's lines from 1.
CREATE TABLE weft.task_logs (
  run_id     uuid        NOT NULL,
  id         bigint      GENERATED ALWAYS AS IDENTITY,
  task_id    uuid        NOT NULL,
  attempt    int         NOT NULL,
  node_id    text        NOT NULL,
  iteration  text        NOT NULL,
  seq        int         NOT NULL,
  at         timestamptz NOT NULL,
  level      text        NOT NULL,
  message    text        NOT NULL,
  fields     jsonb,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, task_id, attempt) REFERENCES weft.task_log_attempts ON DELETE CASCADE
);

-- Reading one node's lines of a run; the cascade from an attempt finds its lines by this index too.
CREATE INDEX task_logs_by_node ON weft.task_logs (run_id, node_id, id);
CREATE INDEX task_logs_by_attempt ON weft.task_logs (run_id, task_id, attempt);
