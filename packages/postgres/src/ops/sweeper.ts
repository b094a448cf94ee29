import type { Db } from '../db.js';

/**
 * Running and compensating runs with nothing that could wake them: no queued or running attempt (a
 * rate-limited task waits on the queue, so its run has one), no timer, no pending decision, no inbox event,
 * and no history event for `idleMs`. A compensating run runs its compensations as tasks, so it stalls the
 * same way (invariant 26; test: "repairs a compensating run whose compensation report was lost"). Reads the
 * live-runs index; advisory (no locks): the caller re-checks under the run locks.
 */
export async function stuckRuns(sql: Db, idleMs: number, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT r.id FROM weft.runs r
     WHERE r.status IN ('running', 'compensating')
       AND ${stuckCondition(sql, idleMs)}
     ORDER BY r.id LIMIT ${limit}::int`.execute();
  return rows.map((r) => r.id);
}

/** The given runs that are stuck, by a statement that starts after the caller locked them. */
export async function stillStuck(sql: Db, runIds: readonly string[], idleMs: number): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT r.id FROM unnest(${[...runIds]}::uuid[]) AS k(id) JOIN weft.runs r ON r.id = k.id
     WHERE r.status IN ('running', 'compensating') AND ${stuckCondition(sql, idleMs)}`.execute();
  return rows.map((r) => r.id);
}

function stuckCondition(sql: Db, idleMs: number) {
  return sql`
        NOT EXISTS (SELECT 1 FROM weft.tasks t WHERE t.run_id = r.id AND t.status IN ('queued', 'running'))
    AND NOT EXISTS (SELECT 1 FROM weft.timers tm WHERE tm.run_id = r.id)
    AND NOT EXISTS (SELECT 1 FROM weft.decide_queue d WHERE d.run_id = r.id)
    AND NOT EXISTS (SELECT 1 FROM weft.inbox i WHERE i.run_id = r.id)
    AND coalesce((SELECT h.at FROM weft.history h WHERE h.run_id = r.id ORDER BY h.seq DESC LIMIT 1), r.created_at)
        <= now() - ${idleMs}::int * interval '1 millisecond'`;
}
