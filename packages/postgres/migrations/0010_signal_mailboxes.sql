-- Signal mailboxes. One row per run, signal name and correlation key ('' when none) that has signals
-- kept until a node waits for them, or wait_for_event node instances waiting for one. Rows are read and
-- written only under the run's row lock, by decisions; an emptied mailbox is deleted. Keyed by run_id
-- first, like every run-scoped table.
CREATE TABLE weft.mailboxes (
  run_id       uuid        NOT NULL,
  name         text        NOT NULL,
  correlation  text        NOT NULL DEFAULT '',
  buffered     jsonb       NOT NULL DEFAULT '[]',
  waiters      jsonb       NOT NULL DEFAULT '[]',
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, name, correlation)
);
