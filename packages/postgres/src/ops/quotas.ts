import type { Db } from '../db.js';

/**
 * Takes the quota lock of each given namespace that has a quota: a transaction-scoped advisory lock on
 * `quota:<namespace>:`, released at commit or rollback. The insert that follows in the same pipeline counts
 * running runs with a snapshot taken after the lock is held, so two starters cannot both see the last free
 * place (invariant 18; test: "ten starters at once never make more running runs than the quota"). Namespaces
 * without a quota take no lock.
 */
export async function lockQuotas(sql: Db, namespaces: readonly string[]): Promise<void> {
  if (namespaces.length === 0) return;
  await sql`
    SELECT pg_advisory_xact_lock(hashtextextended('quota:' || q.namespace || ':', 0))
      FROM (SELECT l.namespace FROM weft.limits l
             WHERE l.kind = 'quota' AND l.name = '' AND l.namespace = ANY(${[...namespaces]}::text[])
             ORDER BY l.namespace) q`.execute();
}

/** The quota and the running (or paused) runs of each namespace that has a quota. */
export async function quotaUsage(
  sql: Db,
  namespaces: readonly string[],
): Promise<{ namespace: string; max: number; used: number }[]> {
  if (namespaces.length === 0) return [];
  return sql<{ namespace: string; max: number; used: number }[]>`
    SELECT l.namespace, l.max,
           (SELECT count(*)::int FROM weft.runs r
             WHERE r.namespace = l.namespace AND r.status IN ('running', 'paused', 'compensating')) AS used
      FROM weft.limits l
     WHERE l.kind = 'quota' AND l.name = '' AND l.namespace = ANY(${[...namespaces]}::text[])`.execute();
}
