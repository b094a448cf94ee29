import type { FittedLine, HeldAttempt, StoredTaskLogLine, TaskLogQuery, TaskLogUsage } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/** An attempt that may log, with what it has kept so far. */
export interface HeldTaskLog extends TaskLogUsage {
  readonly nodeId: string;
  readonly iteration: string;
}

/**
 * Takes the attempt's log row for a write, if the attempt holds the lease: attempt, token, running and
 * before its deadline, as a report is checked (invariant 13; test "refuses a log write from an attempt whose
 * lease was lost; the next attempt writes"). The fence reads the task in this statement's snapshot and locks
 * nothing of it: a write that starts after the lease was lost is refused. Locking the task row here would
 * take it before the run's key (for the foreign key), the reverse of a decision's order (invariant 6). The
 * upsert locks the attempt's log row until commit and returns its latest counts, so the writes of one
 * attempt count their bounds one after the other (invariant 19; test "concurrent writes of one attempt keep
 * its bounds"). Null when the attempt does not hold the lease.
 */
export async function holdTaskLog(
  sql: Db,
  held: HeldAttempt,
  namespace: string | null,
): Promise<HeldTaskLog | null> {
  const rows = await sql<HeldTaskLog[]>`
    INSERT INTO weft.task_log_attempts AS a (run_id, task_id, attempt, node_id, iteration)
    SELECT t.run_id, t.id, t.attempt, t.node_id, t.iteration FROM weft.tasks t
     WHERE t.run_id = ${held.runId}::uuid AND t.id = ${held.taskId}::uuid AND t.attempt + 0 = ${held.attempt}::int
       AND t.lease_token = ${held.leaseToken}::uuid
       AND coalesce(t.status, '') = 'running' AND (t.deadline_at IS NULL OR t.deadline_at > now())
       AND (${namespace}::text IS NULL
            OR (SELECT r.namespace FROM weft.runs r WHERE r.id = t.run_id) = ${namespace}::text)
    ON CONFLICT (run_id, task_id, attempt) DO UPDATE SET lines = a.lines
    RETURNING a.node_id, a.iteration, a.lines, a.bytes::int AS bytes, a.truncated`.execute();
  return rows[0] ?? null;
}

/** Writes fitted lines after what the attempt has kept (`before`), and its new usage, in one statement. */
export async function writeTaskLogLines(
  sql: Db,
  held: HeldAttempt & { readonly nodeId: string; readonly iteration: string },
  before: TaskLogUsage,
  rows: readonly FittedLine[],
  after: TaskLogUsage,
): Promise<void> {
  await sql`
    -- A data-modifying WITH runs to completion whether or not the UPDATE reads it.
    WITH kept AS (
      INSERT INTO weft.task_logs (run_id, task_id, attempt, node_id, iteration, seq, at, level, message, fields)
      SELECT ${held.runId}::uuid, ${held.taskId}::uuid, ${held.attempt}::int, ${held.nodeId}, ${held.iteration},
             ${before.lines}::int + l.ord::int, coalesce(l.at, now()), l.level, l.message, l.fields::jsonb
        FROM unnest(${rows.map((r) => r.at?.toISOString() ?? null)}::timestamptz[],
                    ${rows.map((r) => r.level)}::text[], ${rows.map((r) => r.message)}::text[],
                    ${rows.map((r) => jsonText(r.fields))}::text[]) WITH ORDINALITY AS l(at, level, message, fields, ord)
      RETURNING 1)
    UPDATE weft.task_log_attempts
       SET lines = ${after.lines}::int, bytes = ${after.bytes}::bigint, truncated = ${after.truncated}::boolean
     WHERE run_id = ${held.runId}::uuid AND task_id = ${held.taskId}::uuid AND attempt = ${held.attempt}::int`.execute();
}

/** A page of a run's log lines in the order they were kept, by node and attempt when asked. */
export async function listTaskLogs(sql: Db, q: TaskLogQuery): Promise<StoredTaskLogLine[]> {
  // Ordered by the bigint column, not the text it is answered as (where "1000" would sort before "999").
  return sql<StoredTaskLogLine[]>`
    SELECT l.id::text AS id, l.task_id, l.node_id, l.iteration, l.attempt, l.at, l.level, l.message, l.fields
      FROM weft.task_logs l
     WHERE l.run_id = ${q.runId}::uuid AND l.id > ${q.after ?? '0'}::bigint
       AND (${q.nodeId ?? null}::text IS NULL OR l.node_id = ${q.nodeId ?? null}::text)
       AND (${q.attempt ?? null}::int IS NULL OR l.attempt = ${q.attempt ?? null}::int)
     ORDER BY l.id LIMIT ${q.limit}::int`.execute();
}
