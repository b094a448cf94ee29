import type { RunEvent, TimerPurpose } from '@weft/core';
import type { TimerRow } from '@weft/engine';
import type { Db } from '../db.js';

/** Arms timers. */
export async function insertTimers(sql: Db, rows: readonly TimerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.timers (run_id, id, due_at, purpose)
    SELECT run_id, id, due_at, purpose::jsonb
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.id)}::uuid[],
                  ${rows.map((r) => r.dueAt.toISOString())}::text[]::timestamptz[], ${rows.map((r) => JSON.stringify(r.purpose))}::text[])
        AS t(run_id, id, due_at, purpose)`.execute();
}

/** Timers that are due, oldest first. Advisory: no locks. */
export async function dueTimers(sql: Db, limit: number): Promise<{ id: string; runId: string }[]> {
  return sql<{ id: string; runId: string }[]>`
    SELECT id, run_id FROM weft.timers WHERE due_at <= now() ORDER BY due_at LIMIT ${limit}::int`.execute();
}

/**
 * Deletes due timers and returns their events. SKIP LOCKED: when two pollers race for a timer, one takes
 * it and the other skips it, so each timer fires once.
 */
export async function takeTimers(
  sql: Db,
  ids: readonly { id: string; runId: string }[],
): Promise<{ runId: string; event: RunEvent }[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ runId: string; purpose: TimerPurpose }[]>`
    DELETE FROM weft.timers t USING (
      SELECT tm.run_id, tm.id FROM weft.timers tm
        JOIN unnest(${ids.map((i) => i.runId)}::uuid[], ${ids.map((i) => i.id)}::uuid[]) AS k(run_id, id)
          ON tm.run_id = k.run_id AND tm.id = k.id
       WHERE tm.due_at <= now()
       FOR UPDATE OF tm SKIP LOCKED) d
     WHERE t.run_id = d.run_id AND t.id = d.id
    RETURNING t.run_id, t.purpose`.execute();
  return rows.map((r) => ({ runId: r.runId, event: { kind: 'timer_fired', purpose: r.purpose } }));
}
