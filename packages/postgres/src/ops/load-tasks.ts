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
