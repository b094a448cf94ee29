import type { IdempotentRun } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * Claims idempotency keys, in (namespace, key) order so that two batches never wait on each other in a
 * cycle. A key another transaction inserted but has not committed makes this statement wait; when that
 * transaction commits, the conflict leaves the key to it (not returned here), and when it rolls back, the
 * key is claimed here. Returns the keys claimed.
 */
export async function claimIdempotencyKeys(
  sql: Db,
  rows: readonly IdempotentRun[],
): Promise<{ namespace: string; key: string }[]> {
  if (rows.length === 0) return [];
  const sorted = [...rows].sort((a, b) =>
    a.namespace === b.namespace
      ? a.key < b.key
        ? -1
        : a.key > b.key
          ? 1
          : 0
      : a.namespace < b.namespace
        ? -1
        : 1,
  );
  return sql<{ namespace: string; key: string }[]>`
    INSERT INTO weft.idempotency_keys (namespace, key, run_id, definition_name)
    SELECT namespace, key, run_id, definition_name
      FROM unnest(${sorted.map((r) => r.namespace)}::text[], ${sorted.map((r) => r.key)}::text[],
                  ${sorted.map((r) => r.runId)}::uuid[], ${sorted.map((r) => r.definitionName)}::text[])
           WITH ORDINALITY AS k(namespace, key, run_id, definition_name, ord)
     ORDER BY ord
    ON CONFLICT (namespace, key) DO NOTHING
    RETURNING namespace, key`.execute();
}

/** Deletes keys claimed by runs that were not inserted after all (refused by a quota). */
export async function releaseIdempotencyKeys(
  sql: Db,
  keys: readonly { namespace: string; key: string }[],
): Promise<void> {
  if (keys.length === 0) return;
  await sql`
    DELETE FROM weft.idempotency_keys i
     USING unnest(${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.key)}::text[]) AS k(namespace, key)
     WHERE i.namespace = k.namespace AND i.key = k.key`.execute();
}

/** The runs named by idempotency keys. */
export async function getIdempotentRuns(
  sql: Db,
  keys: readonly { namespace: string; key: string }[],
): Promise<IdempotentRun[]> {
  if (keys.length === 0) return [];
  return sql<IdempotentRun[]>`
    SELECT i.namespace, i.key, i.run_id, i.definition_name FROM weft.idempotency_keys i
      JOIN unnest(${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.key)}::text[]) AS k(namespace, key)
        ON i.namespace = k.namespace AND i.key = k.key`.execute();
}
