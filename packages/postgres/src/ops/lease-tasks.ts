import type { Json } from '@weft/core';
import { ANY_NAMESPACE, type LeasedTask, type LeaseRequest, TASKS_DESTINATION } from '@weft/engine';
import type { Db } from '../db.js';

interface LeasedJson {
  id: string;
  run_id: string;
  node_id: string;
  iteration: string;
  attempt: number;
  task_type: string;
  input: Json | null;
  lease_token: string;
  lease_expires_at: string;
  deadline_at: string | null;
  definition_name: string;
}

const fromJson = (t: LeasedJson): LeasedTask => ({
  id: t.id,
  runId: t.run_id,
  nodeId: t.node_id,
  iteration: t.iteration,
  attempt: t.attempt,
  taskType: t.task_type,
  input: t.input,
  leaseToken: t.lease_token,
  leaseExpiresAt: new Date(t.lease_expires_at),
  deadlineAt: t.deadline_at ? new Date(t.deadline_at) : null,
  definitionName: t.definition_name,
});

/**
 * Leases queued tasks: takes queue rows (SKIP LOCKED, so pollers never wait on each other) and marks their
 * tasks running with a fresh random lease token, in one statement, so the queue and the task can never
 * disagree about who holds it (seed 001, invariant 7). A queue row whose task is no longer queued (the run
 * was cancelled) is deleted and skipped. So is one of a paused run: pause stops new work from starting,
 * and resume puts the run's queued tasks back on the queue (test: "a paused run's queued task is not
 * leased until resume"). Returns the leased tasks and how many queue rows were taken.
 */
export async function leaseTasks(
  sql: Db,
  request: LeaseRequest,
): Promise<{ tasks: LeasedTask[]; taken: number }> {
  // The server's own system-task runner polls every namespace; its statement is a separate one, so the
  // plans of workers' polls (by namespace) are not affected.
  const pick =
    request.namespace === ANY_NAMESPACE
      ? sql`SELECT id FROM weft.queue
             WHERE task_type = ANY(${[...request.taskTypes]}::text[]) AND available_at <= now()
             ORDER BY priority DESC, id LIMIT ${request.max}::int FOR UPDATE SKIP LOCKED`
      : sql`SELECT id FROM weft.queue
             WHERE namespace = ${request.namespace} AND task_type = ANY(${[...request.taskTypes]}::text[])
               AND available_at <= now()
             ORDER BY priority DESC, id LIMIT ${request.max}::int FOR UPDATE SKIP LOCKED`;
  const [row] = await sql<{ taken: number; tasks: LeasedJson[] }[]>`
    WITH picked AS (
      DELETE FROM weft.queue q WHERE q.id IN (${pick})
      RETURNING q.task_id, q.run_id
    ), leased AS (
      UPDATE weft.tasks t
         SET status = 'running', worker = ${request.worker}, lease_token = gen_random_uuid(), started_at = now(),
             deadline_at = now() + t.timeout_ms * interval '1 millisecond',
             lease_expires_at = least(now() + ${request.leaseMs}::int * interval '1 millisecond',
                                      coalesce(now() + t.timeout_ms * interval '1 millisecond', 'infinity'))
        FROM picked p
       WHERE t.run_id = p.run_id AND t.id = p.task_id AND t.status = 'queued'
         AND NOT EXISTS (SELECT 1 FROM weft.runs r WHERE r.id = t.run_id AND r.status = 'paused')
      RETURNING t.id, t.run_id, t.node_id, t.iteration, t.attempt, t.task_type, t.input, t.lease_token,
                t.lease_expires_at, t.deadline_at
    )
    SELECT (SELECT count(*)::int FROM picked) AS taken,
           coalesce((SELECT json_agg(json_build_object(
              'id', l.id, 'run_id', l.run_id, 'node_id', l.node_id, 'iteration', l.iteration, 'attempt', l.attempt,
              'task_type', l.task_type, 'input', l.input, 'lease_token', l.lease_token,
              'lease_expires_at', l.lease_expires_at, 'deadline_at', l.deadline_at,
              'definition_name', r.definition_name))
             FROM leased l JOIN weft.runs r ON r.id = l.run_id), '[]'::json) AS tasks`.execute();
  return { tasks: row!.tasks.map(fromJson), taken: row!.taken };
}

/**
 * Leases named tasks (their ids came in a message from outside PostgreSQL, such as a Redis stream). Only
 * tasks still queued at the named attempt are leased, so a duplicate or stale message leases nothing.
 */
export async function leaseTasksById(
  sql: Db,
  request: LeaseRequest,
  tasks: readonly { runId: string; taskId: string; attempt: number }[],
): Promise<LeasedTask[]> {
  if (tasks.length === 0) return [];
  const [row] = await sql<{ tasks: LeasedJson[] }[]>`
    WITH leased AS (
      UPDATE weft.tasks t
         SET status = 'running', worker = ${request.worker}, lease_token = gen_random_uuid(), started_at = now(),
             deadline_at = now() + t.timeout_ms * interval '1 millisecond',
             lease_expires_at = least(now() + ${request.leaseMs}::int * interval '1 millisecond',
                                      coalesce(now() + t.timeout_ms * interval '1 millisecond', 'infinity'))
        FROM unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[], ${tasks.map((t) => t.attempt)}::int[])
             AS k(run_id, id, attempt)
       WHERE t.run_id = k.run_id AND t.id = k.id AND t.attempt = k.attempt AND t.status = 'queued'
         AND t.task_type = ANY(${[...request.taskTypes]}::text[])
         AND NOT EXISTS (SELECT 1 FROM weft.runs r WHERE r.id = t.run_id AND r.status = 'paused')
         AND (${request.namespace}::text = ${ANY_NAMESPACE}::text
              OR EXISTS (SELECT 1 FROM weft.runs r WHERE r.id = t.run_id AND r.namespace = ${request.namespace}::text))
      RETURNING t.id, t.run_id, t.node_id, t.iteration, t.attempt, t.task_type, t.input, t.lease_token,
                t.lease_expires_at, t.deadline_at
    ), announced AS (
      -- The leased tasks' messages need no more announcing. A row the relay holds right now is skipped,
      -- not waited for: the relay drops it itself once it sees the task is no longer queued.
      DELETE FROM weft.outbox o
       WHERE (o.run_id, o.id) IN (
             SELECT x.run_id, x.id FROM weft.outbox x JOIN leased l ON x.run_id = l.run_id AND x.task_id = l.id
              WHERE x.destination = ${TASKS_DESTINATION} AND x.status = 'pending'
                FOR UPDATE OF x SKIP LOCKED)
    )
    SELECT coalesce((SELECT json_agg(json_build_object(
              'id', l.id, 'run_id', l.run_id, 'node_id', l.node_id, 'iteration', l.iteration, 'attempt', l.attempt,
              'task_type', l.task_type, 'input', l.input, 'lease_token', l.lease_token,
              'lease_expires_at', l.lease_expires_at, 'deadline_at', l.deadline_at,
              'definition_name', r.definition_name))
             FROM leased l JOIN weft.runs r ON r.id = l.run_id), '[]'::json) AS tasks`.execute();
  return row!.tasks.map(fromJson);
}

/**
 * Extends leases held by their holders: attempt, token and running status must all match. A lease never
 * outlives the attempt's deadline. Returns the ids still held.
 */
export async function renewLeases(
  sql: Db,
  tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
  leaseMs: number,
): Promise<string[]> {
  if (tasks.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    UPDATE weft.tasks t
       SET lease_expires_at = least(now() + ${leaseMs}::int * interval '1 millisecond', coalesce(t.deadline_at, 'infinity'))
      FROM unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[],
                  ${tasks.map((t) => t.attempt)}::int[], ${tasks.map((t) => t.leaseToken)}::uuid[]) AS k(run_id, id, attempt, token)
     WHERE t.run_id = k.run_id AND t.id = k.id AND t.attempt = k.attempt AND t.lease_token = k.token AND t.status = 'running'
    RETURNING t.id`.execute();
  return rows.map((r) => r.id);
}
