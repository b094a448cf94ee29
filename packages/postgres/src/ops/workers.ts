import type { WorkerSighting } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * Remembers workers seen asking for tasks: one upsert for a server's whole batch, keeping the later
 * sighting (a heartbeat or a report names no task types: the types last asked for are kept). Rows are sent in key order, so two servers writing overlapping batches lock the rows in the
 * same order and never deadlock (test: "servers writing the same workers at once never deadlock"). Workers
 * unseen for a day are forgotten in the same round trip.
 */
export async function recordWorkers(sql: Db, sightings: readonly WorkerSighting[]): Promise<void> {
  if (sightings.length === 0) return;
  const byKey = new Map<string, WorkerSighting>();
  for (const w of sightings) {
    const k = `${w.namespace}\u0000${w.name}`;
    const old = byKey.get(k);
    if (!old || old.lastSeenAt < w.lastSeenAt) byKey.set(k, w);
  }
  const rows = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, w]) => w);
  const upsert = sql`
    INSERT INTO weft.workers AS w (namespace, name, task_types, first_seen_at, last_seen_at)
    SELECT u.namespace, u.name, ARRAY(SELECT jsonb_array_elements_text(u.types::jsonb)), u.seen, u.seen
      FROM unnest(${rows.map((w) => w.namespace)}::text[], ${rows.map((w) => w.name)}::text[],
                  ${rows.map((w) => JSON.stringify([...w.taskTypes].sort()))}::text[],
                  ${rows.map((w) => w.lastSeenAt.toISOString())}::timestamptz[]) WITH ORDINALITY
           AS u(namespace, name, types, seen, ord)
     ORDER BY u.ord
    ON CONFLICT (namespace, name) DO UPDATE
       SET task_types = CASE WHEN cardinality(EXCLUDED.task_types) > 0 AND EXCLUDED.last_seen_at >= w.last_seen_at
                             THEN EXCLUDED.task_types ELSE w.task_types END,
           last_seen_at = greatest(w.last_seen_at, EXCLUDED.last_seen_at)`.execute();
  const forget = sql`DELETE FROM weft.workers WHERE last_seen_at < now() - interval '1 day'`.execute();
  await Promise.all([upsert, forget]);
}

/** Workers of a namespace seen since a time, most recently seen first. */
export async function listWorkers(sql: Db, namespace: string, since: Date): Promise<WorkerSighting[]> {
  return sql<WorkerSighting[]>`
    SELECT namespace, name, task_types, first_seen_at, last_seen_at FROM weft.workers
     WHERE namespace = ${namespace} AND last_seen_at >= ${since.toISOString()}::timestamptz
     ORDER BY last_seen_at DESC, name LIMIT 1000`.execute();
}
