import type { LimitRecord, LimitUsage } from '@weft/engine';
import type { Db } from '../db.js';

/** Limits of one namespace, or of all. */
export async function listLimits(sql: Db, namespace?: string): Promise<LimitRecord[]> {
  return sql<LimitRecord[]>`
    SELECT namespace, kind, name, max, window_ms, updated_at FROM weft.limits
     WHERE (${namespace ?? null}::text IS NULL OR namespace = ${namespace ?? null}::text)
     ORDER BY namespace, kind, name`.execute();
}

/** Creates or replaces limits. */
export async function setLimits(sql: Db, rows: readonly LimitRecord[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.limits AS l (namespace, kind, name, max, window_ms)
    SELECT * FROM unnest(${rows.map((r) => r.namespace)}::text[], ${rows.map((r) => r.kind)}::text[],
                         ${rows.map((r) => r.name)}::text[], ${rows.map((r) => r.max)}::int[],
                         ${rows.map((r) => r.windowMs)}::int[])
    ON CONFLICT (namespace, kind, name) DO UPDATE
       SET max = EXCLUDED.max, window_ms = EXCLUDED.window_ms, updated_at = now()`.execute();
}

/** Deletes a limit; true when there was one. */
export async function deleteLimit(sql: Db, namespace: string, kind: string, name: string): Promise<boolean> {
  const rows = await sql`
    DELETE FROM weft.limits WHERE namespace = ${namespace} AND kind = ${kind} AND name = ${name} RETURNING 1`.execute();
  return rows.length > 0;
}

/**
 * Limits of a namespace with their use: tasks or permits held by running attempts (concurrency,
 * semaphore), starts inside the window (rate), running or paused runs (quota).
 */
export async function limitUsage(sql: Db, namespace: string): Promise<LimitUsage[]> {
  return sql<LimitUsage[]>`
    SELECT l.namespace, l.kind, l.name, l.max, l.window_ms, l.updated_at,
           CASE l.kind
             WHEN 'quota' THEN (SELECT count(*) FROM weft.runs r
                                 WHERE r.namespace = l.namespace AND r.status IN ('running', 'paused', 'compensating'))
             WHEN 'rate' THEN (SELECT coalesce(sum(h.amount), 0) FROM weft.holds h
                                WHERE h.gate = l.kind || ':' || l.namespace || ':' || l.name
                                  AND h.taken_at > now() - l.window_ms * interval '1 millisecond')
             ELSE (SELECT coalesce(sum(h.amount), 0) FROM weft.holds h
                    JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt
                   WHERE h.gate = l.kind || ':' || l.namespace || ':' || l.name AND t.status = 'running')
           END::int AS used
      FROM weft.limits l WHERE l.namespace = ${namespace}
     ORDER BY l.kind, l.name`.execute();
}
