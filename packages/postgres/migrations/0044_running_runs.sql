-- The stuck-run sweeper looks only at running runs, across namespaces.
CREATE INDEX runs_running ON weft.runs (id) WHERE status = 'running';
