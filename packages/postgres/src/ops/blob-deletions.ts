import type { BlobDeletionBacklog, BlobDeletionOutcome } from '@weft/engine';
import type { Db } from '../db.js';

/** What the deleter may do with the listed blobs it took. */
export interface ListedBlobs {
  /** Listed, locked and referenced by no run: delete them from the blob store. */
  readonly garbage: string[];
  /** Listed but referenced by a run again: no longer garbage, taken off the list. */
  readonly referenced: string[];
}

/**
 * Takes up to `limit` listed blobs that are due, for the caller's transaction: their list rows locked
 * (`SKIP LOCKED`: two deleters take different blobs) and each key's advisory lock taken exclusively without
 * waiting (`pg_try_advisory_xact_lock`); a key a writer holds is left for a later pass. The reference check is
 * a later statement, so its snapshot is taken once the locks are held and sees every writer that referenced
 * the blob before; a writer that comes after waits for this transaction and then puts the blob back
 * (invariant 30; test "a blob being referenced while the deleter runs is never lost").
 */
export async function takeListedBlobs(sql: Db, limit: number): Promise<ListedBlobs> {
  const due = await sql<{ key: string }[]>`
    SELECT key FROM weft.blob_deletions WHERE not_before <= now()
     ORDER BY not_before, key LIMIT ${limit}::int
       FOR UPDATE SKIP LOCKED`.execute();
  if (due.length === 0) return { garbage: [], referenced: [] };
  const locked = await sql<{ key: string }[]>`
    SELECT k AS key FROM unnest(${due.map((d) => d.key)}::text[]) AS k
     WHERE pg_try_advisory_xact_lock(hashtextextended('weft.blob:' || k, 0))`.execute();
  if (locked.length === 0) return { garbage: [], referenced: [] };
  // A reference row whose run is gone (recorded by a report its run's purge overtook) references nothing:
  // a run and its reference rows commit together, so a row without its run cannot gain one.
  const rows = await sql<{ key: string; referenced: boolean }[]>`
    SELECT k AS key, EXISTS (SELECT 1 FROM weft.blob_refs r JOIN weft.runs x ON x.id = r.run_id
                              WHERE r.key = k) AS referenced
      FROM unnest(${locked.map((l) => l.key)}::text[]) AS k`.execute();
  return {
    garbage: rows.filter((r) => !r.referenced).map((r) => r.key),
    referenced: rows.filter((r) => r.referenced).map((r) => r.key),
  };
}

/**
 * Settles what a deletion pass did, in its transaction: deleted and referenced blobs leave the list, and so
 * do the reference rows of runs that are gone, left on a deleted blob; a blob
 * the store failed to delete stays listed with its error and tries again after a backoff that doubles with
 * each failure (from `baseMs`, at most `maxMs`).
 */
export async function settleListedBlobs(
  sql: Db,
  outcome: BlobDeletionOutcome,
  referenced: readonly string[],
  backoff: { readonly baseMs: number; readonly maxMs: number },
): Promise<void> {
  const gone = [...outcome.deleted, ...referenced];
  const removing =
    gone.length > 0
      ? sql`DELETE FROM weft.blob_deletions WHERE key = ANY(${gone}::text[])`.execute()
      : Promise.resolve();
  const orphans =
    outcome.deleted.length > 0
      ? sql`DELETE FROM weft.blob_refs WHERE key = ANY(${outcome.deleted}::text[])`.execute()
      : Promise.resolve();
  const failing =
    outcome.failed.length > 0
      ? sql`
    UPDATE weft.blob_deletions d
       SET attempts = d.attempts + 1, last_error = f.error,
           not_before = now() + least(${backoff.maxMs}::float8,
                                      ${backoff.baseMs}::float8 * power(2, least(d.attempts, 30)))
                                * interval '1 millisecond'
      FROM unnest(${outcome.failed.map((f) => f.key)}::text[], ${outcome.failed.map((f) => f.error)}::text[])
           AS f(key, error)
     WHERE d.key = f.key`.execute()
      : Promise.resolve();
  await Promise.all([removing, orphans, failing]);
}

/** How many blobs are listed for deletion, and how many of those have failed at least once. */
export async function blobDeletionBacklog(sql: Db): Promise<BlobDeletionBacklog> {
  const [row] = await sql<{ listed: number; failing: number }[]>`
    SELECT count(*)::int AS listed, count(*) FILTER (WHERE attempts > 0)::int AS failing
      FROM weft.blob_deletions`.execute();
  return { listed: row?.listed ?? 0, failing: row?.failing ?? 0 };
}
