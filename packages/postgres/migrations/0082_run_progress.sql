-- A run's progress, kept on its row by the statement that appends the history it is counted from (see
-- progressDeltas in the engine): steps known so far, completed, failed for good, and running. Runs that
-- exist already start from what their tasks say, once.
ALTER TABLE weft.runs
  ADD COLUMN steps_known     int NOT NULL DEFAULT 0,
  ADD COLUMN steps_completed int NOT NULL DEFAULT 0,
  ADD COLUMN steps_failed    int NOT NULL DEFAULT 0,
  ADD COLUMN steps_running   int NOT NULL DEFAULT 0;

UPDATE weft.runs r SET
  steps_known = s.known, steps_completed = s.completed, steps_failed = s.failed,
  steps_running = CASE WHEN r.finished_at IS NULL THEN s.running ELSE 0 END
  FROM (SELECT t.run_id,
               count(DISTINCT (t.node_id, t.iteration))::int AS known,
               count(*) FILTER (WHERE t.status = 'completed')::int AS completed,
               count(*) FILTER (WHERE t.status = 'failed'
                 AND NOT EXISTS (SELECT 1 FROM weft.tasks n WHERE n.run_id = t.run_id AND n.node_id = t.node_id
                                   AND n.iteration = t.iteration AND n.attempt > t.attempt))::int AS failed,
               count(*) FILTER (WHERE t.status IN ('queued', 'running'))::int AS running
          FROM weft.tasks t WHERE t.task_type IS NOT NULL GROUP BY t.run_id) s
 WHERE r.id = s.run_id;
