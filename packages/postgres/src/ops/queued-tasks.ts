import type { Db } from '../db.js';

/**
 * Which of these attempts are still queued: the relay sends a task message (again) only for those, and
 * drops the message of a task that was leased, cancelled or moved on.
 */
export async function queuedTasks(
  sql: Db,
  tasks: readonly { runId: string; taskId: string; attempt: number }[],
): Promise<{ runId: string; taskId: string; attempt: number }[]> {
  if (tasks.length === 0) return [];
  return sql<{ runId: string; taskId: string; attempt: number }[]>`
    SELECT t.run_id, t.id AS task_id, t.attempt
      FROM unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[], ${tasks.map((t) => t.attempt)}::int[])
           AS k(run_id, id, attempt)
      JOIN weft.tasks t ON t.run_id = k.run_id AND t.id = k.id AND t.attempt = k.attempt
     WHERE t.status = 'queued'`.execute();
}
