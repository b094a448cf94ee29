import type { LoadedTask } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * The latest attempt of each requested node instance of one run: what a decision reads. The cost follows
 * the number of instances asked for (the frontier), not the size of the run.
 */
export async function loadTasks(
  sql: Db,
  runId: string,
  keys: readonly { nodeId: string; iteration: string }[],
): Promise<LoadedTask[]> {
  if (keys.length === 0) return [];
  const rows = await sql<(LoadedTask & { arrivals: LoadedTask['arrivals'] | null })[]>`
    SELECT DISTINCT ON (t.node_id, t.iteration)
           t.id, t.node_id, t.iteration, t.attempt, t.status, t.input, t.output, t.error, t.arrivals
      FROM weft.tasks t
      JOIN unnest(${keys.map((k) => k.nodeId)}::text[], ${keys.map((k) => k.iteration)}::text[]) AS k(node_id, iteration)
        ON t.node_id = k.node_id AND t.iteration = k.iteration
     WHERE t.run_id = ${runId}::uuid
     ORDER BY t.node_id, t.iteration, t.attempt DESC`;
  return rows.map((r) => ({ ...r, arrivals: r.arrivals ?? [] }));
}
