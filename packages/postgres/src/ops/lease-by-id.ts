import { ANY_NAMESPACE, type LeasedTask, type LeaseRequest, TASKS_DESTINATION } from '@weft/engine';
import type { Db } from '../db.js';
import { fromJson, type LeasedJson, leasedColumns, leaseSet, waitedFields } from './lease-tasks.js';

/**
 * Leases named tasks (their ids came in a message from outside PostgreSQL, such as a Redis stream). Only
 * tasks still queued at the named attempt, of the request's namespace (any, for the server's own runner),
 * are leased, so a duplicate or stale message leases nothing.
 *
 * Limits are counted only by the gated path of the table queue, so a dispatcher puts every task with gates
 * (semaphores, a rate limit) or of a capped task type on the table queue, never in a message, and a task
 * with a queue row is never leased here, whatever names it (its gates are on that row). A message can
 * still name a task of a capped type: the cap was set after the task was announced (the dispatcher decides
 * by the server's limit book, which lags a change by up to a few seconds). Such a task is not leased here
 * but moved to the table queue, where the gated path counts it against the cap (test: "a task announced
 * before its type was capped is moved to the table queue and leased under the cap").
 *
 * The move is a check-then-write across transactions (is there a queue row yet?), serialised on the task row:
 * the first statement locks the rows of the tasks to move (waiting, in key order), and the insert is a second
 * statement, whose snapshot is taken once the locks are held, so it sees a move committed by a concurrent
 * lease and inserts nothing (test: "tasks of a type capped since they were announced are moved to the table
 * once each, then capped"). Returns the leased tasks, and the task types moved, by namespace.
 */
export async function leaseTasksById(
  sql: Db,
  request: LeaseRequest,
  tasks: readonly { runId: string; taskId: string; attempt: number }[],
): Promise<{ tasks: LeasedTask[]; moved: { namespace: string; taskType: string }[] }> {
  if (tasks.length === 0) return { tasks: [], moved: [] };
  const [row] = await sql<{ tasks: LeasedJson[]; movable: { runId: string; id: string }[] }[]>`
    WITH named AS (
      SELECT t.run_id, t.id, t.task_type, r.namespace,
             EXISTS (SELECT 1 FROM weft.limits l WHERE l.namespace = r.namespace
                        AND l.kind = 'concurrency' AND l.name = t.task_type) AS capped,
             EXISTS (SELECT 1 FROM weft.queue q WHERE q.namespace = r.namespace AND q.task_type = t.task_type
                        AND q.run_id = t.run_id AND q.task_id = t.id) AS on_table
        FROM unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[], ${tasks.map((t) => t.attempt)}::int[])
             AS k(run_id, id, attempt)
        JOIN weft.tasks t ON t.run_id = k.run_id AND t.id = k.id AND t.attempt = k.attempt
        JOIN weft.runs r ON r.id = t.run_id
       WHERE t.status = 'queued' AND t.task_type = ANY(${[...request.taskTypes]}::text[]) AND r.status <> 'paused'
         AND (${request.namespace}::text = ${ANY_NAMESPACE}::text OR r.namespace = ${request.namespace}::text)
    ), leased AS (
      UPDATE weft.tasks t
         SET ${leaseSet(sql, request)}
        FROM named n
       WHERE t.run_id = n.run_id AND t.id = n.id AND NOT n.capped AND NOT n.on_table AND t.status = 'queued'
      RETURNING ${leasedColumns(sql)}
    ), movable AS (
      -- Capped since it was announced: locked here, moved by the next statement.
      SELECT t.run_id, t.id FROM weft.tasks t JOIN named n ON t.run_id = n.run_id AND t.id = n.id
       WHERE n.capped AND NOT n.on_table
       ORDER BY t.run_id, t.id
         FOR UPDATE OF t
    ), announced AS (
      -- Messages of the leased and moved tasks need no more announcing. A row the relay holds right now is
      -- skipped, not waited for: the relay drops it itself once it sees the task is no longer queued.
      DELETE FROM weft.outbox o
       WHERE (o.run_id, o.id) IN (
             SELECT x.run_id, x.id FROM weft.outbox x
               JOIN (SELECT run_id, id FROM leased UNION ALL SELECT run_id, id FROM movable) l
                 ON x.run_id = l.run_id AND x.task_id = l.id
              WHERE x.destination = ${TASKS_DESTINATION} AND x.status = 'pending'
                FOR UPDATE OF x SKIP LOCKED)
    )
    SELECT coalesce((SELECT json_agg(json_build_object(
              'id', l.id, 'run_id', l.run_id, 'node_id', l.node_id, 'iteration', l.iteration, 'attempt', l.attempt,
              'task_type', l.task_type, 'input', l.input, 'lease_token', l.lease_token,
              'lease_expires_at', l.lease_expires_at, 'deadline_at', l.deadline_at,
              'definition_name', r.definition_name, 'trace_context', r.trace_context,
              -- No queue row: a task is due from its creation, or a retry from its not-before time.
              ${waitedFields(sql, sql`coalesce(l.retry_at, l.created_at)`)}))
             FROM leased l JOIN weft.runs r ON r.id = l.run_id), '[]'::json) AS tasks,
           coalesce((SELECT json_agg(json_build_object('runId', m.run_id, 'id', m.id)) FROM movable m),
                    '[]'::json) AS movable`.execute();
  const movable = row!.movable;
  if (movable.length === 0) return { tasks: row!.tasks.map(fromJson), moved: [] };
  // A fresh snapshot, with the task rows locked: a task moved (or leased from the table) meanwhile is left.
  const moved = await sql<{ namespace: string; taskType: string }[]>`
    INSERT INTO weft.queue (task_id, run_id, namespace, task_type, priority)
    SELECT t.id, t.run_id, r.namespace, t.task_type, t.priority
      FROM unnest(${movable.map((m) => m.runId)}::uuid[], ${movable.map((m) => m.id)}::uuid[]) AS k(run_id, id)
      JOIN weft.tasks t ON t.run_id = k.run_id AND t.id = k.id
      JOIN weft.runs r ON r.id = t.run_id
     WHERE t.status = 'queued'
       AND NOT EXISTS (SELECT 1 FROM weft.queue q WHERE q.namespace = r.namespace AND q.task_type = t.task_type
                          AND q.run_id = t.run_id AND q.task_id = t.id)
    RETURNING namespace, task_type`.execute();
  const types = new Map(moved.map((m) => [`${m.namespace}:${m.taskType}`, m]));
  return { tasks: row!.tasks.map(fromJson), moved: [...types.values()] };
}
