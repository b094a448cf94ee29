import type { BlobUse } from '@weft/engine';
import type { Db } from '../db.js';

/** The advisory lock of a blob key, shared by writers referencing it, exclusive for the deleter. */
export function blobLockKey(key: string): string {
  return `weft.blob:${key}`;
}

/**
 * Records, in the caller's transaction, that runs now reference blobs: takes each key's advisory lock in
 * shared mode (held until commit) and inserts the (run, key) rows. Writers share the lock, so they never wait
 * for each other; they wait only for a deleter holding it exclusively, which has then finished deleting, and
 * the caller checks the blob is still there after this returns. A deleter's reference check starts after it
 * holds the lock exclusively, so it sees every writer's row that committed before (invariant 30; test
 * "a blob being referenced while the deleter runs is never lost", blob-deleter-race.test.ts).
 */
export async function referenceBlobs(sql: Db, uses: readonly BlobUse[]): Promise<void> {
  if (uses.length === 0) return;
  const keys = [...new Set(uses.map((u) => u.key))].sort();
  const locking = sql`
    SELECT pg_advisory_xact_lock_shared(hashtextextended('weft.blob:' || k, 0))
      FROM (SELECT k FROM unnest(${keys}::text[]) AS k ORDER BY k) s`.execute();
  const inserting = sql`
    INSERT INTO weft.blob_refs (run_id, key)
    SELECT * FROM unnest(${uses.map((u) => u.runId)}::uuid[], ${uses.map((u) => u.key)}::text[])
    ON CONFLICT DO NOTHING`.execute();
  await Promise.all([locking, inserting]);
}
