import { ANY_NAMESPACE, type QueueRow } from '@weft/engine';
import type { Db } from '../db.js';

/** Puts tasks on the queue table, in the transaction that made them queued (no outbox needed). */
export async function enqueueTasks(sql: Db, rows: readonly QueueRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.queue (task_id, run_id, namespace, task_type, priority, available_at, gates)
    SELECT task_id, run_id, namespace, task_type, priority, now() + delay_ms * interval '1 millisecond', gates::jsonb
      FROM unnest(${rows.map((r) => r.taskId)}::uuid[], ${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => r.taskType)}::text[], ${rows.map((r) => r.priority)}::int[], ${rows.map((r) => r.delayMs)}::int[],
                  ${rows.map((r) => (r.gates ? JSON.stringify(r.gates) : null))}::text[])
        AS q(task_id, run_id, namespace, task_type, priority, delay_ms, gates)`.execute();
}

/**
 * The highest priority among available queued tasks of each type: one index probe per type (the queue's
 * pick indexes are ordered by priority, highest first). For `ANY_NAMESPACE` (the server's own runner),
 * across every namespace (see queuedPrioritiesEverywhere).
 */
export async function queuedPriorities(
  sql: Db,
  namespace: string,
  taskTypes: readonly string[],
): Promise<Map<string, number>> {
  if (taskTypes.length === 0) return new Map();
  if (namespace === ANY_NAMESPACE) return queuedPrioritiesEverywhere(sql, taskTypes);
  const rows = await sql<{ taskType: string; priority: number | null }[]>`
    SELECT k.t AS task_type,
           greatest((SELECT q.priority FROM weft.queue q
                      WHERE q.namespace = ${namespace} AND q.task_type = k.t AND q.gates IS NULL AND q.available_at <= now()
                      ORDER BY q.priority DESC, q.id LIMIT 1),
                    (SELECT q.priority FROM weft.queue q
                      WHERE q.namespace = ${namespace} AND q.task_type = k.t AND q.gates IS NOT NULL AND q.available_at <= now()
                      ORDER BY q.priority DESC, q.id LIMIT 1)) AS priority
      FROM unnest(${[...taskTypes]}::text[]) AS k(t)`.execute();
  return new Map(rows.filter((r) => r.priority !== null).map((r) => [r.taskType, r.priority!]));
}

/**
 * The highest available queued priority of each type in any namespace: the system-task runner's poll orders
 * its types' rows of every namespace by priority, so a task handed to it by a report must not pass any of
 * them. It reads the type's rows of every namespace, as that poll does (`TRUE` in place of the namespace
 * test); system task types are few and their queue short.
 */
async function queuedPrioritiesEverywhere(
  sql: Db,
  taskTypes: readonly string[],
): Promise<Map<string, number>> {
  const rows = await sql<{ taskType: string; priority: number | null }[]>`
    SELECT k.t AS task_type,
           (SELECT max(q.priority) FROM weft.queue q WHERE q.task_type = k.t AND q.available_at <= now()) AS priority
      FROM unnest(${[...taskTypes]}::text[]) AS k(t)`.execute();
  return new Map(rows.filter((r) => r.priority !== null).map((r) => [r.taskType, r.priority!]));
}
