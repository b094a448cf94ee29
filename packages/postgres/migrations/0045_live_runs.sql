-- The stuck-run sweeper and the dispatch repair look at every run that still has work to do: running
-- runs and compensating ones (whose compensations are ordinary tasks). The index covers both.
CREATE INDEX runs_live ON weft.runs (id) WHERE status IN ('running', 'compensating');
DROP INDEX weft.runs_running;
