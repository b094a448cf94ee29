import type { LoadedTask, StateKey } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * The latest attempt of each requested node instance, across runs: what a batch of decisions reads. One
 * index lookup per instance (the LATERAL ... LIMIT 1 reads the task identity index backwards), so the
 * cost follows the number of instances asked for (the frontier), not the size of the runs.
 */
export async function loadTasks(sql: Db, keys: readonly StateKey[]): Promise<LoadedTask[]> {
  if (keys.length === 0) return [];
  const rows = await sql<(LoadedTask & { arrivals: LoadedTask['arrivals'] | null })[]>`
    SELECT t.id, k.run_id, k.node_id, k.iteration, t.attempt, t.status, t.input, t.output, t.error, t.arrivals
      FROM unnest(${keys.map((k) => k.runId)}::uuid[], ${keys.map((k) => k.nodeId)}::text[], ${keys.map((k) => k.iteration)}::text[])
           AS k(run_id, node_id, iteration)
     CROSS JOIN LATERAL (
           SELECT t.id, t.attempt, t.status, t.input, t.output, t.error, t.arrivals FROM weft.tasks t
            WHERE t.run_id = k.run_id AND t.node_id = k.node_id AND t.iteration = k.iteration
            ORDER BY t.attempt DESC LIMIT 1) t`.execute();
  return rows.map((r) => ({ ...r, arrivals: r.arrivals ?? [] }));
}

/**
 * The latest attempt of every node instance of the given runs: what a decision that reads the whole run
 * (resume, retry, rerun) needs. One pass over each run's rows of the task identity index.
 */
export async function loadRunTasks(sql: Db, runIds: readonly string[]): Promise<LoadedTask[]> {
  if (runIds.length === 0) return [];
  const rows = await sql<(LoadedTask & { arrivals: LoadedTask['arrivals'] | null })[]>`
    SELECT DISTINCT ON (t.run_id, t.node_id, t.iteration)
           t.id, t.run_id, t.node_id, t.iteration, t.attempt, t.status, t.input, t.output, t.error, t.arrivals
      FROM unnest(${[...new Set(runIds)]}::uuid[]) AS k(run_id)
      JOIN weft.tasks t ON t.run_id = k.run_id
     ORDER BY t.run_id, t.node_id, t.iteration, t.attempt DESC`.execute();
  return rows.map((r) => ({ ...r, arrivals: r.arrivals ?? [] }));
}

/**
 * The latest attempt of each requested node instance, locked until the transaction ends. An operator's
 * action on a task reads it this way, after holding the run lock and claiming the run's decision, so
 * that what it checks is what it changes: a lease, a report that could not take the run lock, or the
 * lease reaper waits for it (or has committed before it, and then the row shows it). Lock order: run,
 * decide queue, then tasks, as everywhere.
 */
export async function lockTasks(sql: Db, keys: readonly StateKey[]): Promise<LoadedTask[]> {
  if (keys.length === 0) return [];
  const rows = await sql<(LoadedTask & { arrivals: LoadedTask['arrivals'] | null })[]>`
    SELECT t.id, t.run_id, t.node_id, t.iteration, t.attempt, t.status, t.input, t.output, t.error, t.arrivals
      FROM weft.tasks t
     WHERE (t.run_id, t.id) IN (
           SELECT l.run_id, l.id
             FROM unnest(${keys.map((k) => k.runId)}::uuid[], ${keys.map((k) => k.nodeId)}::text[],
                         ${keys.map((k) => k.iteration)}::text[]) AS k(run_id, node_id, iteration)
            CROSS JOIN LATERAL (
                  SELECT x.run_id, x.id FROM weft.tasks x
                   WHERE x.run_id = k.run_id AND x.node_id = k.node_id AND x.iteration = k.iteration
                   ORDER BY x.attempt DESC LIMIT 1) l)
     ORDER BY t.run_id, t.id
       FOR UPDATE OF t`.execute();
  return rows.map((r) => ({ ...r, arrivals: r.arrivals ?? [] }));
}
