import { type NewTaskRow, RUNS_DESTINATION, type TaskRecord, type TaskUpdateRow } from '@weft/engine';
import type { Db } from '../db.js';
import { bools, jsonText } from '../db.js';

const FINAL = ['completed', 'failed', 'timed_out', 'cancelled', 'skipped'];

/**
 * Inserts new attempts. An attempt whose identity (run, node, iteration, attempt) exists already is absorbed
 * by ON CONFLICT DO NOTHING, and in the same statement its run gets a decide-queue request: the decision that
 * wanted the insert saw stale state, and one more pass sees the true state (invariant 4). The caller holds
 * those runs' locks, so the upsert waits on no one. Returns the absorbed rows. A row with `lease` starts
 * running for that worker.
 */
export async function insertTasks(sql: Db, rows: readonly NewTaskRow[]): Promise<NewTaskRow[]> {
  if (rows.length === 0) return [];
  const absorbed = await sql<{ id: string }[]>`
    WITH input AS (
      SELECT * FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.nodeId)}::text[],
                  ${rows.map((r) => r.iteration)}::text[], ${rows.map((r) => r.attempt)}::int[], ${rows.map((r) => r.status)}::text[],
                  ${rows.map((r) => r.taskType)}::text[], ${rows.map((r) => r.priority)}::int[], ${rows.map((r) => r.timeoutMs)}::int[],
                  ${rows.map((r) => jsonText(r.input))}::text[], ${rows.map((r) => jsonText(r.output))}::text[],
                  ${rows.map((r) => jsonText(r.error))}::text[],
                  ${rows.map((r) => (r.arrivals.length > 0 ? JSON.stringify(r.arrivals) : null))}::text[],
                  ${rows.map((r) => r.lease?.worker ?? null)}::text[], ${rows.map((r) => r.lease?.token ?? null)}::uuid[],
                  ${rows.map((r) => r.lease?.leaseMs ?? null)}::int[], ${rows.map((r) => r.childRunId ?? null)}::uuid[],
                  ${rows.map((r) => r.delayMs ?? null)}::int[])
        AS r(run_id, id, node_id, iteration, attempt, status, task_type, priority, timeout_ms, input, output, error,
             arrivals, worker, token, lease_ms, child_run_id, delay_ms)
    ), inserted AS (
      INSERT INTO weft.tasks (run_id, id, node_id, iteration, attempt, status, task_type, priority, timeout_ms,
                              input, output, error, arrivals, worker, lease_token, started_at, deadline_at,
                              lease_expires_at, finished_at, child_run_id, retry_at)
      SELECT r.run_id, r.id, r.node_id, r.iteration, r.attempt, r.status, r.task_type, r.priority, r.timeout_ms,
             r.input::jsonb, r.output::jsonb, r.error::jsonb, r.arrivals::jsonb, r.worker, r.token,
             CASE WHEN r.token IS NOT NULL OR r.status = 'running' THEN now() END,
             CASE WHEN r.token IS NOT NULL OR r.status = 'running' THEN now() + r.timeout_ms * interval '1 millisecond' END,
             -- A running attempt with no worker (a sub-workflow waiting for its child) expires at its timeout.
             CASE WHEN r.token IS NOT NULL THEN least(now() + r.lease_ms * interval '1 millisecond',
                                                      coalesce(now() + r.timeout_ms * interval '1 millisecond', 'infinity'))
                  WHEN r.status = 'running' THEN now() + r.timeout_ms * interval '1 millisecond' END,
             CASE WHEN r.status = ANY(${FINAL}::text[]) THEN now() END,
             r.child_run_id,
             now() + r.delay_ms * interval '1 millisecond'
        FROM input r
      ON CONFLICT ON CONSTRAINT tasks_identity DO NOTHING
      RETURNING run_id, id
    ), absorbed AS (
      -- A set difference, not an anti-join: with hash joins off, NOT EXISTS over the inserted rows is a nested
      -- loop, rows x rows (a map's 5,000 items took 5.7 s to insert); EXCEPT ALL hashes or sorts both sides once
      -- (test: "handles a number of rows per item that does not grow with the items (500 and 5,000)").
      SELECT run_id, id FROM input EXCEPT ALL SELECT run_id, id FROM inserted
    ), requested AS (
      INSERT INTO weft.decide_queue AS d (run_id, reason, not_before)
      SELECT DISTINCT run_id, 'absorbed duplicate', now() FROM absorbed ORDER BY run_id
      ON CONFLICT (run_id) DO UPDATE SET reason = EXCLUDED.reason, requested_at = now(), not_before = least(d.not_before, EXCLUDED.not_before)
    )
    SELECT id FROM absorbed`.execute();
  if (absorbed.length === 0) return [];
  const gone = new Set(absorbed.map((r) => r.id));
  return rows.filter((r) => gone.has(r.id));
}

/**
 * Changes attempts that are still in the expected status (a join row moving from waiting to queued, say).
 * Only the run's lock holder writes such changes, so the expectation holds unless the engine has a bug;
 * the guard keeps a bug from overwriting a finished attempt.
 */
export async function updateTasks(sql: Db, rows: readonly TaskUpdateRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE weft.tasks t SET
      status = u.status,
      input = CASE WHEN u.set_input THEN u.input::jsonb ELSE t.input END,
      output = CASE WHEN u.set_output THEN u.output::jsonb ELSE t.output END,
      error = CASE WHEN u.set_error THEN u.error::jsonb ELSE t.error END,
      arrivals = CASE WHEN u.arrivals IS NOT NULL THEN u.arrivals::jsonb ELSE t.arrivals END,
      task_type = coalesce(u.task_type, t.task_type),
      priority = coalesce(u.priority, t.priority),
      timeout_ms = CASE WHEN u.task_type IS NOT NULL THEN u.timeout_ms ELSE t.timeout_ms END,
      worker = coalesce(u.worker, t.worker),
      lease_token = coalesce(u.token, t.lease_token),
      started_at = CASE WHEN u.token IS NOT NULL OR (u.status = 'running' AND t.status <> 'running') THEN now()
        ELSE t.started_at END,
      deadline_at = CASE WHEN u.token IS NOT NULL OR (u.status = 'running' AND t.status <> 'running')
        THEN now() + u.timeout_ms * interval '1 millisecond' ELSE t.deadline_at END,
      lease_expires_at = CASE WHEN u.token IS NOT NULL
        THEN least(now() + u.lease_ms * interval '1 millisecond', coalesce(now() + u.timeout_ms * interval '1 millisecond', 'infinity'))
        WHEN u.status = 'running' AND t.status <> 'running' THEN now() + u.timeout_ms * interval '1 millisecond'
        ELSE t.lease_expires_at END,
      finished_at = CASE WHEN u.status = ANY(${FINAL}::text[]) THEN now() ELSE t.finished_at END,
      child_run_id = coalesce(u.child_run_id, t.child_run_id)
    FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.nodeId)}::text[], ${rows.map((r) => r.iteration)}::text[],
                ${rows.map((r) => r.attempt)}::int[], ${rows.map((r) => r.expect)}::text[], ${rows.map((r) => r.status)}::text[],
                ${bools(rows.map((r) => r.input !== undefined))}::text[]::bool[], ${rows.map((r) => jsonText(r.input))}::text[],
                ${bools(rows.map((r) => r.output !== undefined))}::text[]::bool[], ${rows.map((r) => jsonText(r.output))}::text[],
                ${bools(rows.map((r) => r.error !== undefined))}::text[]::bool[], ${rows.map((r) => jsonText(r.error))}::text[],
                ${rows.map((r) => (r.arrivals ? JSON.stringify(r.arrivals) : null))}::text[],
                ${rows.map((r) => r.taskType ?? null)}::text[], ${rows.map((r) => r.priority ?? null)}::int[],
                ${rows.map((r) => r.timeoutMs ?? null)}::int[], ${rows.map((r) => r.lease?.worker ?? null)}::text[],
                ${rows.map((r) => r.lease?.token ?? null)}::uuid[], ${rows.map((r) => r.lease?.leaseMs ?? null)}::int[],
                ${rows.map((r) => r.childRunId ?? null)}::uuid[])
      AS u(run_id, node_id, iteration, attempt, expect, status, set_input, input, set_output, output, set_error, error,
           arrivals, task_type, priority, timeout_ms, worker, token, lease_ms, child_run_id)
    WHERE t.run_id = u.run_id AND t.node_id = u.node_id AND t.iteration = u.iteration AND t.attempt = u.attempt
      AND t.status = u.expect`.execute();
}

/**
 * Cancels every unfinished attempt of the given runs and deletes their timers and signal mailboxes.
 * Queue rows are left: a queue row is only a wake-up, and leasing skips (and deletes) rows whose task is
 * no longer queued. A worker still running a cancelled attempt has its reports refused, because the
 * status is no longer running.
 * What the attempts started (child runs) is stopped by the engine's cascader, in the same transaction.
 */
export async function cancelOpenWork(
  sql: Db,
  runs: readonly { runId: string; reason: string }[],
): Promise<void> {
  if (runs.length === 0) return;
  const ids = runs.map((r) => r.runId);
  // The statements are sent before any is awaited: within a write set, everything goes out in one
  // pipeline ahead of the COMMIT.
  // Each run's open attempts are found and locked by a key lookup, then updated by their primary key. FOR
  // UPDATE waits for a concurrent change and rechecks the status on the newest version, so an attempt that
  // finished meanwhile stays finished. That newest version may have committed after this statement's
  // snapshot (a heartbeat renewing the lease): matched by its row version (ctid), the update would not see
  // it and the attempt would stay running; matched by key, the update follows it to the version locked
  // (invariant 27; test "cancel the attempt when a heartbeat commits while the cancel waits for it, and
  // refuse its report"). The statement reads only its runs' rows (test: "the statements of a step read the
  // rows of their own runs").
  const tasks = sql`
    UPDATE weft.tasks t SET status = 'cancelled', finished_at = now(),
           error = jsonb_build_object('reason', 'cancelled', 'retryable', false, 'message', o.reason)
      FROM (SELECT x.run_id, x.id, c.reason
              FROM unnest(${ids}::uuid[], ${runs.map((r) => r.reason)}::text[]) AS c(run_id, reason)
              CROSS JOIN LATERAL (SELECT s.run_id, s.id FROM weft.tasks s
                                   WHERE s.run_id = c.run_id AND s.status IN ('waiting', 'queued', 'running')
                                     FOR UPDATE) x) o
     WHERE t.run_id = o.run_id AND t.id = o.id`.execute();
  const timers =
    sql`DELETE FROM weft.timers t USING unnest(${ids}::uuid[]) AS k(id) WHERE t.run_id = k.id`.execute();
  // Signals kept for a run that has ended are of no more use, and its waiters wait no more.
  const mailboxes =
    sql`DELETE FROM weft.mailboxes m USING unnest(${ids}::uuid[]) AS k(id) WHERE m.run_id = k.id`.execute();
  await Promise.all([tasks, timers, mailboxes]);
}

/**
 * Writes a `cancel_run` outbox row for the child run of each unfinished attempt of these runs: how a stopped
 * run stops its children (the engine's cascader asks for it). Sent in the write set after the task inserts
 * and updates and before `cancelOpenWork`, so it sees the attempts as this transaction leaves them, still
 * unfinished. It only inserts: the children stop in their own transactions, through the relay.
 */
export async function stopChildren(
  sql: Db,
  runs: readonly { runId: string; reason: string; mode: 'cancel' | 'terminate' }[],
): Promise<void> {
  if (runs.length === 0) return;
  await sql`
    INSERT INTO weft.outbox (run_id, namespace, destination, kind, message_id, payload)
    SELECT t.run_id, (SELECT r.namespace FROM weft.runs r WHERE r.id = k.run_id), ${RUNS_DESTINATION},
           'cancel_run', k.mode || ':' || t.child_run_id,
           jsonb_build_object('kind', 'cancel_run', 'runId', t.child_run_id, 'by', 'parent run ' || t.run_id,
                              'reason', k.reason, 'mode', k.mode)
      FROM unnest(${runs.map((r) => r.runId)}::uuid[], ${runs.map((r) => r.reason)}::text[],
                  ${runs.map((r) => r.mode)}::text[]) AS k(run_id, reason, mode)
      -- Run by run, as in cancelOpenWork; the run's namespace by key.
      CROSS JOIN LATERAL (SELECT s.run_id, s.child_run_id FROM weft.tasks s
                           WHERE s.run_id = k.run_id AND s.child_run_id IS NOT NULL
                             AND s.status IN ('waiting', 'queued', 'running') OFFSET 0) t`.execute();
}

/** Every attempt of a run, in creation order, for the API. */
export async function listTasks(sql: Db, runId: string): Promise<TaskRecord[]> {
  const rows = await sql<(TaskRecord & { arrivals: TaskRecord['arrivals'] | null })[]>`
    SELECT id, run_id, node_id, iteration, attempt, status, task_type, priority, timeout_ms, input, output, error,
           arrivals, worker, lease_expires_at, deadline_at, created_at, started_at, finished_at, child_run_id
      FROM weft.tasks WHERE run_id = ${runId}::uuid ORDER BY created_at, node_id, iteration, attempt`.execute();
  return rows.map((r) => ({ ...r, arrivals: r.arrivals ?? [] }));
}
