-- Forks: a run started from another run, reusing the outputs of its finished nodes up to a chosen node. One
-- row per forked run, written in the transaction that inserts it; the source's forks are found by the index.
CREATE TABLE weft.run_forks (
  run_id       uuid        PRIMARY KEY,
  forked_from  uuid        NOT NULL,
  up_to_node   text,
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX run_forks_by_source ON weft.run_forks (forked_from, run_id);
