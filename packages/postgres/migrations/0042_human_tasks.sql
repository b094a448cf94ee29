-- Human tasks: what a person sees and does for a `human` node's attempt. The attempt itself is the task
-- row (status running while it is open); this row adds the title, the form (a JSON Schema for the data),
-- who may take it, the claim and the answer. A claim is a single conditional UPDATE on this row.
CREATE TABLE weft.human_tasks (
  run_id        uuid        NOT NULL,
  task_id       uuid        NOT NULL,
  namespace     text        NOT NULL,
  definition    text        NOT NULL,
  node_id       text        NOT NULL,
  iteration     text        NOT NULL DEFAULT '',
  attempt       int         NOT NULL,
  title         text        NOT NULL,
  description   text,
  assignees     text[]      NOT NULL DEFAULT '{}',
  form          jsonb,
  state         text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'completed', 'expired', 'cancelled')),
  claimed_by    text,
  claimed_at    timestamptz,
  deadline_at   timestamptz,
  completed_by  text,
  completed_at  timestamptz,
  data          jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, task_id)
);
CREATE UNIQUE INDEX human_tasks_by_id ON weft.human_tasks (task_id);
CREATE INDEX human_tasks_open ON weft.human_tasks (namespace, created_at) WHERE state = 'open';
