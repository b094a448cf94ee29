import type { DispatchTask } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * Queued attempts of running or compensating runs (a compensation is a task like any other: test "sends a
 * compensation whose message was lost between commit and enqueue again") that have no row on the table
 * queue, queued at least `olderThanMs` ago (or, with `runIds`, every such attempt of those runs): with a
 * dispatcher that enqueues after commit, these may have lost their message to a crash between commit and
 * enqueue, and are sent again. Live runs are found through their partial index, so the scan is bounded by
 * live work, not by history. A retry's `retry_at` is its not-before time. Advisory: no locks (a duplicate
 * message is harmless).
 */
export async function undispatchedTasks(
  sql: Db,
  filter: { readonly olderThanMs: number; readonly limit: number; readonly runIds?: readonly string[] },
): Promise<DispatchTask[]> {
  const rows = await sql<
    {
      taskId: string;
      runId: string;
      attempt: number;
      namespace: string;
      taskType: string;
      priority: number;
      notBefore: Date | null;
    }[]
  >`
    SELECT t.id AS task_id, t.run_id, t.attempt, r.namespace, t.task_type, t.priority,
           CASE WHEN t.retry_at > now() THEN t.retry_at END AS not_before
      FROM weft.runs r
      JOIN weft.tasks t ON t.run_id = r.id
     WHERE r.status IN ('running', 'compensating')
       AND (${filter.runIds ? [...filter.runIds] : null}::uuid[] IS NULL OR r.id = ANY(${filter.runIds ? [...filter.runIds] : null}::uuid[]))
       AND t.status = 'queued' AND t.task_type IS NOT NULL
       AND coalesce(t.retry_at, t.created_at) <= now() - ${filter.olderThanMs}::int * interval '1 millisecond'
       AND NOT EXISTS (SELECT 1 FROM weft.queue q WHERE q.run_id = t.run_id AND q.task_id = t.id)
     ORDER BY t.created_at
     LIMIT ${filter.limit}::int`.execute();
  return rows.map((r) => ({ ...r, notBefore: r.notBefore ?? null }));
}
