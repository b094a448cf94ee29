import type { LockedRun, NewRun } from '@weft/engine';
import type { Db } from '../db.js';
import { bools, jsonText } from '../db.js';
import { RUN_COLUMNS } from './runs.js';

/**
 * Inserts runs started by other runs' nodes (each in its parent's trace), deduplicated on their start keys (the starting attempt's
 * identity, attempt included). A start delivered twice (the relay redelivers after a crash; an operator
 * replays a dead letter) finds its key taken: ON CONFLICT DO NOTHING absorbs it, and only the runs whose key
 * this statement inserted are inserted and come back, locked by this transaction, to be decided (invariant
 * 10; tests: "a retried sub-workflow node starts a new child", "a start delivered twice starts one child").
 * Two transactions inserting one key at once: the second waits on the key's unique index until the first
 * ends, then inserts nothing.
 */
export async function insertChildRuns(sql: Db, runs: readonly NewRun[]): Promise<LockedRun[]> {
  if (runs.length === 0) return [];
  return sql<LockedRun[]>`
    WITH won AS (
      INSERT INTO weft.start_keys (key, run_id)
      SELECT key, run_id FROM unnest(${runs.map((r) => r.startKey ?? r.id)}::text[], ${runs.map((r) => r.id)}::uuid[])
          AS k(key, run_id)
      ON CONFLICT (key) DO NOTHING
      RETURNING run_id
    )
    INSERT INTO weft.runs AS r (id, namespace, definition_id, definition_name, definition_version, status, input,
                                parent_run_id, parent_node_id, parent_iteration, parent_attempt, detached, trace_context)
    SELECT id, namespace, definition_id, definition_name, definition_version, 'running', input::jsonb,
           parent_run_id, parent_node_id, parent_iteration, parent_attempt, detached,
           -- A child stays in its parent's trace: one key lookup, no lock (the row is only read).
           (SELECT p.trace_context FROM weft.runs p WHERE p.id = n.parent_run_id)
      FROM won JOIN unnest(${runs.map((r) => r.id)}::uuid[], ${runs.map((r) => r.namespace)}::text[], ${runs.map((r) => r.definitionId)}::bigint[],
                  ${runs.map((r) => r.definitionName)}::text[], ${runs.map((r) => r.definitionVersion)}::int[],
                  ${runs.map((r) => jsonText(r.input) ?? 'null')}::text[],
                  ${runs.map((r) => r.parent?.runId ?? null)}::uuid[], ${runs.map((r) => r.parent?.nodeId ?? null)}::text[],
                  ${runs.map((r) => r.parent?.iteration ?? null)}::text[], ${runs.map((r) => r.parent?.attempt ?? null)}::int[],
                  ${bools(runs.map((r) => r.parent?.detached ?? false))}::text[]::bool[])
        AS n(id, namespace, definition_id, definition_name, definition_version, input,
             parent_run_id, parent_node_id, parent_iteration, parent_attempt, detached) ON n.id = won.run_id
    ON CONFLICT (id) DO NOTHING
    RETURNING ${sql.unsafe(RUN_COLUMNS)}, 0 AS last_seq, now() AS now`.execute();
}

/**
 * Locks the attempts that asked for children (FOR SHARE, in key order) and says which still run. Ending
 * an attempt (a cancel, a failed run, the lease reaper's timeout) updates its row, so it waits for a
 * start holding this lock, and a start waits for an end in progress: the two are serialised. The reaper
 * takes its rows with SKIP LOCKED and simply comes back next round (test: "a cancel racing a child start
 * leaves no orphan").
 */
export async function lockParentTasks(
  sql: Db,
  attempts: readonly { runId: string; nodeId: string; iteration: string; attempt: number }[],
): Promise<{ runId: string; nodeId: string; iteration: string; attempt: number; running: boolean }[]> {
  if (attempts.length === 0) return [];
  return sql<{ runId: string; nodeId: string; iteration: string; attempt: number; running: boolean }[]>`
    SELECT t.run_id, t.node_id, t.iteration, t.attempt, t.status = 'running' AS running
      FROM unnest(${attempts.map((a) => a.runId)}::uuid[], ${attempts.map((a) => a.nodeId)}::text[],
                  ${attempts.map((a) => a.iteration)}::text[], ${attempts.map((a) => a.attempt)}::int[])
           AS k(run_id, node_id, iteration, attempt)
      JOIN weft.tasks t ON t.run_id = k.run_id AND t.node_id = k.node_id AND t.iteration = k.iteration
                       AND t.attempt = k.attempt
     ORDER BY t.run_id, t.id
       FOR SHARE OF t`.execute();
}

/** Which of these runs exist. */
export async function existingRuns(sql: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT r.id FROM unnest(${[...new Set(ids)]}::uuid[]) AS k(id) JOIN weft.runs r ON r.id = k.id`.execute();
  return rows.map((r) => r.id);
}
