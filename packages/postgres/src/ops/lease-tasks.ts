import { type Json, taskIdempotencyKey } from '@weft/core';
import { ANY_NAMESPACE, type FastLease, type LeasedTask, type LeaseRequest } from '@weft/engine';
import type { Db } from '../db.js';

export interface LeasedJson {
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
  /** Seconds since the task became due, and since its row was created (see LeaseWait). */
  queued_seconds: number;
  created_seconds: number;
  trace_context: string | null;
}

/** A leased task as the lease statements return it (JSON built in SQL). */
export const fromJson = (t: LeasedJson): LeasedTask => ({
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
  idempotencyKey: taskIdempotencyKey(t.run_id, t.node_id, t.iteration),
  waited: {
    queueSeconds: Math.max(0, t.queued_seconds),
    stepSeconds: t.attempt === 1 ? Math.max(0, t.created_seconds) : null,
  },
  traceContext: t.trace_context,
});

/**
 * What every lease path sets on the queued attempt it takes (the table `t`): running, held by the worker
 * under a fresh random token, its attempt deadline, and a lease that ends at that deadline at the latest.
 */
export const leaseSet = (sql: Db, request: Pick<LeaseRequest, 'worker' | 'leaseMs'>) => sql`
  status = 'running', worker = ${request.worker}, lease_token = gen_random_uuid(), started_at = now(),
  deadline_at = now() + t.timeout_ms * interval '1 millisecond',
  lease_expires_at = least(now() + ${request.leaseMs}::int * interval '1 millisecond',
                           coalesce(now() + t.timeout_ms * interval '1 millisecond', 'infinity'))`;

/** The columns of a leased attempt (the table `t`) that `fromJson` reads, but for the definition's name. */
export const leasedColumns = (sql: Db) =>
  sql`t.id, t.run_id, t.node_id, t.iteration, t.attempt, t.task_type, t.input, t.lease_token,
      t.lease_expires_at, t.deadline_at, t.created_at, t.retry_at`;

/**
 * How long a leased attempt (`l`, a row of leasedColumns) waited, for metrics: since `due` (the queue row's
 * available time) and since the row was created. Read from the columns the lease returns, no other read.
 */
export const waitedFields = (sql: Db, due: ReturnType<Db>) =>
  sql`'queued_seconds', extract(epoch FROM now() - ${due})::float8,
      'created_seconds', extract(epoch FROM now() - l.created_at)::float8`;

/**
 * Leases queued tasks: takes queue rows (SKIP LOCKED, so pollers never wait on each other) and marks their
 * tasks running with a fresh random lease token, in one statement, so the queue and the task can never
 * disagree about who holds it (invariant 13). A queue row whose task is no longer queued (the run was
 * cancelled) is deleted and skipped. So is one of a paused run: pause stops new work from starting, and
 * resume puts the run's queued tasks back on the queue (invariant 5; test: "does not lease a task of a paused
 * run"). Returns the leased tasks and how many queue rows were taken.
 *
 * This is the fast path: it takes only rows under no limit (no gates, a task type with no concurrency
 * cap), takes no lock and reads no usage. When rows under a limit wait for these task types it takes
 * nothing and says `gated`: the caller then leases through the gated path, which orders every candidate
 * by priority and counts each limit under its lock.
 */
export async function leaseTasks(sql: Db, request: LeaseRequest): Promise<FastLease> {
  const types = [...request.taskTypes];
  // A worker polls one namespace; the server's system-task runner polls every namespace, with statements
  // of their own (`TRUE` in place of the namespace test), so the plans of workers' polls are not affected.
  // Either way a cap counts in the namespace that set it: the runner's rows are matched on (namespace, type).
  const any = request.namespace === ANY_NAMESPACE;
  const inNs = (alias: 'l' | 'g' | 'w') =>
    any
      ? sql`TRUE`
      : alias === 'l'
        ? sql`l.namespace = ${request.namespace}`
        : alias === 'g'
          ? sql`g.namespace = ${request.namespace}`
          : sql`w.namespace = ${request.namespace}`;
  const [row] = await sql<{ taken: number; tasks: LeasedJson[]; gated: boolean; nextAt: Date | null }[]>`
    WITH capped AS (
      SELECT l.namespace, l.name FROM weft.limits l
       WHERE ${inNs('l')} AND l.kind = 'concurrency' AND l.name = ANY(${types}::text[])
    ), gated AS (
      -- Every read of the queue here goes type by type, from the head of that type's index range (see
      -- picked).
      SELECT EXISTS (SELECT 1 FROM unnest(${types}::text[]) AS ty(t)
                      CROSS JOIN LATERAL (SELECT 1 FROM weft.queue g
                                           WHERE ${inNs('g')} AND g.task_type = ty.t
                                             AND g.gates IS NOT NULL AND g.available_at <= now() LIMIT 1) x)
          OR EXISTS (SELECT 1 FROM capped c
                      CROSS JOIN LATERAL (SELECT 1 FROM weft.queue g
                                           WHERE g.namespace = c.namespace AND g.task_type = c.name
                                             AND g.gates IS NULL AND g.available_at <= now() LIMIT 1) x) AS waiting
    ), picked AS (
      -- Type by type, each read from the head of its own index range, and the rows deleted by the
      -- versions locked (ctid): tested as one list, or joined to the table, the planner may read every
      -- queued row of the namespace, whatever its type, on each poll (test: "the statements of a step
      -- read the rows of their own runs"). A type may lock up to \`max\` rows that another type's higher
      -- priorities then leave; they stay queued for the next poll. A row changed after this statement
      -- began is locked at a version the DELETE cannot see, and also stays for the next poll: harmless, and
      -- rows of this path (no gates) are never updated.
      DELETE FROM weft.queue q
       WHERE q.ctid = ANY(ARRAY(
               SELECT w.tid FROM unnest(${types}::text[]) AS ty(t)
                CROSS JOIN LATERAL (SELECT w.ctid AS tid, w.id, w.priority FROM weft.queue w
                                     WHERE ${inNs('w')} AND w.task_type = ty.t
                                       AND w.gates IS NULL AND w.available_at <= now()
                                       AND NOT (SELECT waiting FROM gated)
                                     ORDER BY w.priority DESC, w.id LIMIT ${request.max}::int
                                       FOR UPDATE SKIP LOCKED) w
                ORDER BY w.priority DESC, w.id LIMIT ${request.max}::int))
      RETURNING q.task_id, q.run_id, q.priority, q.id, q.available_at
    ), leased AS (
      UPDATE weft.tasks t
         SET ${leaseSet(sql, request)}
        FROM picked p
       WHERE t.run_id = p.run_id AND t.id = p.task_id AND t.status = 'queued'
         -- A scalar subquery, one key lookup per task (an anti-join may scan every run: test "the
         -- statements of a step read the rows of their own runs").
         AND (SELECT r.status FROM weft.runs r WHERE r.id = t.run_id) IS DISTINCT FROM 'paused'
      RETURNING ${leasedColumns(sql)}
    )
    SELECT (SELECT count(*)::int FROM picked) AS taken, (SELECT waiting FROM gated) AS gated,
           -- When a task held back by a rate limit becomes available (only rows under limits are held back).
           (SELECT min(x.at) FROM unnest(${types}::text[]) AS ty(t)
             CROSS JOIN LATERAL (SELECT min(g.available_at) AS at FROM weft.queue g
                                  WHERE ${inNs('g')} AND g.task_type = ty.t
                                    AND g.gates IS NOT NULL AND g.available_at > now()) x) AS next_at,
           coalesce((SELECT json_agg(json_build_object(
              'id', l.id, 'run_id', l.run_id, 'node_id', l.node_id, 'iteration', l.iteration, 'attempt', l.attempt,
              'task_type', l.task_type, 'input', l.input, 'lease_token', l.lease_token,
              'lease_expires_at', l.lease_expires_at, 'deadline_at', l.deadline_at,
              'definition_name', r.definition_name, 'trace_context', r.trace_context, ${waitedFields(sql, sql`p.available_at`)})
              ORDER BY p.priority DESC, p.id)
             FROM leased l JOIN picked p ON p.task_id = l.id JOIN weft.runs r ON r.id = l.run_id), '[]'::json) AS tasks`.execute();
  return { tasks: row!.tasks.map(fromJson), taken: row!.taken, gated: row!.gated, nextAt: row!.nextAt };
}

/**
 * Extends leases held by their holders: attempt, token and running status must all match. A lease never
 * outlives the attempt's deadline. Returns the ids still held.
 */
export async function renewLeases(
  sql: Db,
  tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
  leaseMs: number,
  namespace?: string,
): Promise<string[]> {
  if (tasks.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    UPDATE weft.tasks t
       SET lease_expires_at = least(now() + ${leaseMs}::int * interval '1 millisecond', coalesce(t.deadline_at, 'infinity'))
      FROM unnest(${tasks.map((t) => t.runId)}::uuid[], ${tasks.map((t) => t.taskId)}::uuid[],
                  ${tasks.map((t) => t.attempt)}::int[], ${tasks.map((t) => t.leaseToken)}::uuid[]) AS k(run_id, id, attempt, token)
     -- Primary-key lookups only, namespace included (see finishTasks for why the tests are written so).
     WHERE t.run_id = k.run_id AND t.id = k.id AND t.attempt + 0 = k.attempt AND t.lease_token = k.token
       AND coalesce(t.status, '') = 'running'
       AND (${namespace ?? null}::text IS NULL
            OR (SELECT r.namespace FROM weft.runs r WHERE r.id = t.run_id) = ${namespace ?? null}::text)
    RETURNING t.id`.execute();
  return rows.map((r) => r.id);
}
