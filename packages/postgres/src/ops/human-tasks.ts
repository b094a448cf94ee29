import type { Json } from '@weft/core';
import type { HumanTaskRecord, HumanTaskState, InboxFilter, NewHumanTaskRow } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

// A task counts as open only while its attempt is running: an attempt ended otherwise (its run cancelled,
// or an operator finishing the task by hand) leaves the row behind, and the inbox must not show it as
// open (the sweeper's housekeeping marks such rows).
const COLUMNS = `h.run_id, h.task_id, h.namespace, h.definition, h.node_id, h.iteration, h.attempt, h.title,
  h.description, h.assignees, h.form,
  CASE WHEN h.state <> 'open' OR t.status = 'running' THEN h.state
       WHEN t.status = 'completed' THEN 'completed' ELSE 'cancelled' END AS state,
  t.input, h.claimed_by, h.claimed_at, h.deadline_at, h.completed_by, h.completed_at, h.data, h.created_at`;

/** Puts human tasks in the inbox, with the attempts they belong to. */
export async function insertHumanTasks(sql: Db, rows: readonly NewHumanTaskRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.human_tasks (run_id, task_id, namespace, definition, node_id, iteration, attempt, title,
                                  description, assignees, form, deadline_at)
    SELECT run_id, task_id, namespace, definition, node_id, iteration, attempt, title, description,
           ARRAY(SELECT jsonb_array_elements_text(assignees::jsonb)), form::jsonb, deadline_at
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.taskId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => r.definition)}::text[], ${rows.map((r) => r.nodeId)}::text[], ${rows.map((r) => r.iteration)}::text[],
                  ${rows.map((r) => r.attempt)}::int[], ${rows.map((r) => r.title)}::text[], ${rows.map((r) => r.description)}::text[],
                  ${rows.map((r) => JSON.stringify(r.assignees))}::text[],
                  ${rows.map((r) => jsonText(r.form))}::text[],
                  ${rows.map((r) => r.deadlineAt?.toISOString() ?? null)}::timestamptz[])
        AS h(run_id, task_id, namespace, definition, node_id, iteration, attempt, title, description, assignees, form, deadline_at)
    ON CONFLICT (run_id, task_id) DO NOTHING`.execute();
}

/** Takes human tasks out of the inbox (expired, cancelled). */
export async function closeHumanTasks(
  sql: Db,
  rows: readonly { runId: string; taskId: string; state: HumanTaskState }[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE weft.human_tasks h SET state = c.state
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.taskId)}::uuid[], ${rows.map((r) => r.state)}::text[])
           AS c(run_id, task_id, state)
     WHERE h.run_id = c.run_id AND h.task_id = c.task_id AND h.state = 'open'`.execute();
}

/** The inbox of a namespace, oldest first. */
export async function listHumanTasks(sql: Db, f: InboxFilter): Promise<HumanTaskRecord[]> {
  const state = f.state ?? 'open';
  return sql<HumanTaskRecord[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.human_tasks h
      LEFT JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id
     WHERE h.namespace = ${f.namespace}
       AND CASE WHEN ${state} = 'open' THEN h.state = 'open' AND t.status = 'running'
                WHEN ${state} = 'cancelled' THEN h.state = 'cancelled' OR (h.state = 'open' AND t.status IS DISTINCT FROM 'running' AND t.status IS DISTINCT FROM 'completed')
                WHEN ${state} = 'completed' THEN h.state = 'completed' OR (h.state = 'open' AND t.status = 'completed')
                ELSE h.state = ${state} END
       AND (${f.assignee ?? null}::text IS NULL OR cardinality(h.assignees) = 0 OR ${f.assignee ?? null}::text = ANY(h.assignees))
       AND (${f.claimedBy ?? null}::text IS NULL OR h.claimed_by = ${f.claimedBy ?? null}::text)
       AND (${f.runId ?? null}::uuid IS NULL OR h.run_id = ${f.runId ?? null}::uuid)
     ORDER BY h.created_at, h.task_id LIMIT ${f.limit}::int`.execute();
}

/** One human task by its task id. */
export async function getHumanTask(sql: Db, taskId: string): Promise<HumanTaskRecord | null> {
  const [row] = await sql<HumanTaskRecord[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.human_tasks h
      LEFT JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id
     WHERE h.task_id = ${taskId}::uuid`.execute();
  return row ?? null;
}

/**
 * Claims an open task: a single conditional UPDATE. Two people claiming at once both reach the row; the
 * second waits on the first's row lock, then re-checks `claimed_by IS NULL` against the committed row and
 * matches nothing. Whether claims collide never depends on timing (invariant 19; test: "ten simultaneous
 * claims on ten connections: exactly one wins").
 */
export async function claimHumanTask(
  sql: Db,
  namespace: string,
  taskId: string,
  user: string,
): Promise<HumanTaskRecord | null> {
  const [row] = await sql<{ taskId: string }[]>`
    UPDATE weft.human_tasks h SET claimed_by = ${user}, claimed_at = now()
     WHERE h.task_id = ${taskId}::uuid AND h.namespace = ${namespace} AND h.state = 'open' AND h.claimed_by IS NULL
       AND EXISTS (SELECT 1 FROM weft.tasks t WHERE t.run_id = h.run_id AND t.id = h.task_id AND t.status = 'running')
    RETURNING h.task_id`.execute();
  return row ? getHumanTask(sql, taskId) : null;
}

/** Releases a claim held by `user`. */
export async function releaseHumanTask(
  sql: Db,
  namespace: string,
  taskId: string,
  user: string,
): Promise<HumanTaskRecord | null> {
  const [row] = await sql<{ taskId: string }[]>`
    UPDATE weft.human_tasks h SET claimed_by = NULL, claimed_at = NULL
     WHERE h.task_id = ${taskId}::uuid AND h.namespace = ${namespace} AND h.state = 'open' AND h.claimed_by = ${user}
    RETURNING h.task_id`.execute();
  return row ? getHumanTask(sql, taskId) : null;
}

/**
 * Answers an open task claimed by `user` (or by nobody), in one statement: the attempt completes with the
 * data as its output (only while it is still running: a finished attempt stays finished) and the inbox
 * row records who answered. The caller holds the run's lock and decides `node_completed` next.
 */
export async function completeHumanTask(
  sql: Db,
  namespace: string,
  taskId: string,
  user: string,
  data: Json,
): Promise<{ nodeId: string; iteration: string; attempt: number } | null> {
  const [row] = await sql<{ nodeId: string; iteration: string; attempt: number }[]>`
    WITH h AS (
      SELECT h.run_id, h.task_id, h.attempt FROM weft.human_tasks h
       WHERE h.task_id = ${taskId}::uuid AND h.namespace = ${namespace} AND h.state = 'open'
         AND (h.claimed_by IS NULL OR h.claimed_by = ${user})
         FOR UPDATE
    ), t AS (
      UPDATE weft.tasks t SET status = 'completed', output = ${jsonText(data) ?? 'null'}::text::jsonb, finished_at = now(),
             worker = ${user}
        FROM h WHERE t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt AND t.status = 'running'
      RETURNING t.run_id, t.id, t.node_id, t.iteration, t.attempt
    ), done AS (
      UPDATE weft.human_tasks x
         SET state = 'completed', completed_by = ${user}, completed_at = now(), data = ${jsonText(data) ?? 'null'}::text::jsonb,
             claimed_by = coalesce(x.claimed_by, ${user}), claimed_at = coalesce(x.claimed_at, now())
        FROM t WHERE x.run_id = t.run_id AND x.task_id = t.id
    )
    SELECT node_id, iteration, attempt FROM t`.execute();
  return row ?? null;
}

/** Marks inbox rows whose attempt ended without an answer (its run was cancelled or ended) as cancelled. */
export async function tidyHumanTasks(sql: Db, limit: number): Promise<number> {
  const rows = await sql`
    UPDATE weft.human_tasks h SET state = CASE WHEN s.status = 'completed' THEN 'completed' ELSE 'cancelled' END
      FROM (SELECT x.run_id, x.task_id, t.status FROM weft.human_tasks x
              JOIN weft.tasks t ON t.run_id = x.run_id AND t.id = x.task_id
             WHERE x.state = 'open' AND t.status <> 'running' LIMIT ${limit}::int) s
     WHERE h.run_id = s.run_id AND h.task_id = s.task_id AND h.state = 'open'
    RETURNING 1`.execute();
  return rows.length;
}
