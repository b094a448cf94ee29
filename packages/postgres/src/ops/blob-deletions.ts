import type { BlobDeletionBacklog, BlobDeletionOutcome } from '@weft/engine';
import type { Db } from '../db.js';

/** What the deleter may do with the listed blobs it took. */
export interface ListedBlobs {
  /** Listed, locked and referenced by no run: delete them from the blob store. */
  readonly garbage: string[];
  /** Listed but referenced by a run again: no longer garbage, taken off the list. */
  readonly referenced: string[];
  /** Held by a writer: left listed, and put back behind the others so that busy blobs cannot fill a pass. */
  readonly busy: string[];
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
  if (due.length === 0) return { garbage: [], referenced: [], busy: [] };
  const locked = await sql<{ key: string }[]>`
    SELECT k AS key FROM unnest(${due.map((d) => d.key)}::text[]) AS k
     WHERE pg_try_advisory_xact_lock(hashtextextended('weft.blob:' || k, 0))`.execute();
  const all = due.map((d) => d.key);
  if (locked.length === 0) return { garbage: [], referenced: [], busy: all };
  // A reference row whose run is gone (recorded by a report its run's purge overtook) references nothing:
  // a run and its reference rows commit together, so a row without its run cannot gain one. A purge deleting
  // the last referencing run meanwhile lists the blob again once this pass commits: its upsert waits for the
  // list row this pass holds (test "a purge racing the deleter lists the blob again, so the last reference
  // going never strands it").
  const rows = await sql<{ key: string; live: boolean }[]>`
    SELECT k AS key,
           EXISTS (SELECT 1 FROM weft.blob_refs r JOIN weft.runs x ON x.id = r.run_id WHERE r.key = k) AS live
      FROM unnest(${locked.map((l) => l.key)}::text[]) AS k`.execute();
  const garbage = rows.filter((r) => !r.live).map((r) => r.key);
  const referenced = rows.filter((r) => r.live).map((r) => r.key);
  const settled = new Set([...garbage, ...referenced]);
  return { garbage, referenced, busy: all.filter((k) => !settled.has(k)) };
}

/**
 * Settles what a deletion pass did, in its transaction: deleted and referenced blobs leave the list, and so
 * do the reference rows of runs that are gone, left on a deleted blob; busy ones wait one backoff step; a blob
 * the store failed to delete stays listed with its error and tries again after a backoff that doubles with
 * each failure (from `baseMs`, at most `maxMs`).
 */
export async function settleListedBlobs(
  sql: Db,
  outcome: BlobDeletionOutcome,
  listed: ListedBlobs,
  backoff: { readonly baseMs: number; readonly maxMs: number },
): Promise<void> {
  const referenced = listed.referenced;
  const later =
    listed.busy.length > 0
      ? sql`UPDATE weft.blob_deletions SET not_before = now() + ${backoff.baseMs}::float8 * interval '1 millisecond'
             WHERE key = ANY(${listed.busy}::text[])`.execute()
      : Promise.resolve();
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
  await Promise.all([removing, orphans, failing, later]);
}

/** How many blobs are listed for deletion, and how many of those have failed at least once. */
export async function blobDeletionBacklog(sql: Db): Promise<BlobDeletionBacklog> {
  const [row] = await sql<{ listed: number; failing: number }[]>`
    SELECT count(*)::int AS listed, count(*) FILTER (WHERE attempts > 0)::int AS failing
      FROM weft.blob_deletions`.execute();
  return { listed: row?.listed ?? 0, failing: row?.failing ?? 0 };
}
