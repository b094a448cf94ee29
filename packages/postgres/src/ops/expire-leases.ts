import { type ExpiredTask, RUNS_DESTINATION } from '@weft/engine';
import type { Db } from '../db.js';

/** Running tasks whose lease or deadline has passed, oldest first. Advisory: no locks are taken. */
export async function expiredLeases(sql: Db, limit: number): Promise<{ taskId: string; runId: string }[]> {
  return sql<{ taskId: string; runId: string }[]>`
    SELECT id AS task_id, run_id FROM weft.tasks
     WHERE status = 'running' AND lease_expires_at <= now() ORDER BY lease_expires_at LIMIT ${limit}::int`.execute();
}

/**
 * Ends attempts whose lease ran out: `timed_out`, with an error that says whether the attempt passed its
 * own timeout or the worker stopped heartbeating. Rows another transaction holds (a report landing right
 * now) are skipped; the status check repeats under the row lock, so a task that just finished is left alone.
 */
export async function expireLeases(
  sql: Db,
  tasks: readonly { runId: string; taskId: string }[],
): Promise<ExpiredTask[]> {
  if (tasks.length === 0) return [];
  return sql<ExpiredTask[]>`
    WITH doomed AS (
      SELECT t.run_id, t.id FROM weft.tasks t
        JOIN unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[]) AS k(run_id, id)
          ON t.run_id = k.run_id AND t.id = k.id
       WHERE t.status = 'running' AND t.lease_expires_at <= now()
       FOR UPDATE OF t SKIP LOCKED
    ), expired AS (
    UPDATE weft.tasks t
       SET status = 'timed_out', finished_at = now(),
           error = CASE WHEN t.deadline_at <= now()
             THEN jsonb_build_object('reason', 'timeout', 'retryable', true,
                    'message', format('the attempt ran longer than its timeout of %s ms', t.timeout_ms))
             ELSE jsonb_build_object('reason', 'lease_expired', 'retryable', true,
                    'message', format('worker %s stopped renewing its lease', coalesce(t.worker, '(unknown)')))
           END
      FROM doomed d
     WHERE t.run_id = d.run_id AND t.id = d.id
    RETURNING t.run_id, t.id AS task_id, t.node_id, t.iteration, t.attempt, t.worker,
              coalesce(t.deadline_at <= now(), false) AS timed_out, t.child_run_id
    ), cascade AS (
      -- An attempt that timed out waiting for its child run cancels that child (through the outbox).
      INSERT INTO weft.outbox (run_id, namespace, destination, kind, message_id, payload)
      SELECT e.run_id, r.namespace, ${RUNS_DESTINATION}, 'cancel_run', 'cancel:' || e.child_run_id,
             jsonb_build_object('kind', 'cancel_run', 'runId', e.child_run_id, 'by', 'parent run ' || e.run_id,
                                'reason', 'the parent attempt timed out')
        FROM expired e JOIN weft.runs r ON r.id = e.run_id
       WHERE e.child_run_id IS NOT NULL
    )
    SELECT run_id, task_id, node_id, iteration, attempt, worker, timed_out FROM expired`.execute();
}
