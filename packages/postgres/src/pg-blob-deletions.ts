import type { BlobDeletionOutcome, BlobDeletionPass, BlobDeletionStore } from '@weft/engine';
import type { Sql } from 'postgres';
import { blobDeletionBacklog, settleListedBlobs, takeListedBlobs } from './ops/blob-deletions.js';

/** The blob deleter's side on PostgreSQL: a pass per transaction over the listed blobs. */
export class PgBlobDeletions implements BlobDeletionStore {
  constructor(private readonly sql: Sql) {}

  backlog = () => blobDeletionBacklog(this.sql);

  /**
   * One pass in one transaction. The blob store deletes while the transaction holds the keys' locks: a writer
   * referencing one of them waits until the pass commits, then finds the blob gone and puts it back. If the
   * commit fails after the store deleted, the blobs stay listed and the next pass deletes them again (a
   * delete of an absent blob succeeds).
   */
  async deleteListed(
    limit: number,
    remove: (keys: readonly string[]) => Promise<BlobDeletionOutcome>,
    backoff: { readonly baseMs: number; readonly maxMs: number },
  ): Promise<BlobDeletionPass> {
    return this.sql.begin(async (tx) => {
      const listed = await takeListedBlobs(tx, limit);
      const outcome = listed.garbage.length > 0 ? await remove(listed.garbage) : { deleted: [], failed: [] };
      await settleListedBlobs(tx, outcome, listed, backoff);
      return { ...outcome, referenced: listed.referenced.length, busy: listed.busy.length };
    });
  }
}
