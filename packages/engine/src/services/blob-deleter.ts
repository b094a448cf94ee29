import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineContext } from '../context.js';
import type { BlobDeletionOutcome, BlobDeletionPass } from '../store/blob-deletion-records.js';

/** Deletions sent to the blob store at once. */
const DELETE_CONCURRENCY = 8;

/**
 * Deletes the blobs of purged runs from the blob store, a small batch per transaction, once no run
 * references them and no writer is referencing them (invariant 30). A blob the store fails to delete stays
 * listed, with its error, and is tried again after a backoff; the failure is logged and counted. Runs as a
 * background loop as often as retention, pausing after a full batch like the purge.
 */
export class BlobDeleter {
  private warnedNoDelete = false;

  constructor(private readonly ctx: EngineContext) {}

  /** Whether the store lists blobs and the blob store can delete them. */
  get supported(): boolean {
    return this.ctx.store.blobDeletions !== undefined && this.ctx.payloads.blobs.delete !== undefined;
  }

  /** One pass; true when the batch was full (the loop goes on after the pause). */
  async round(): Promise<boolean> {
    const pass = await this.pass();
    if (pass === null) return false;
    const taken = pass.deleted.length + pass.failed.length + pass.referenced + pass.busy;
    const more = taken >= this.ctx.config.blobDeleteBatch;
    if (more) await sleep(this.ctx.config.purgePauseMs);
    return more;
  }

  /** One transaction of deletions, or null when this store or blob store deletes no blob. */
  async pass(): Promise<BlobDeletionPass | null> {
    const store = this.ctx.store.blobDeletions;
    if (!store) return null;
    if (!this.ctx.payloads.blobs.delete) {
      if (!this.warnedNoDelete)
        this.ctx.logger.warn(
          { blobs: this.ctx.payloads.blobs.name },
          'this blob store cannot delete: blobs of purged runs stay listed in weft.blob_deletions',
        );
      this.warnedNoDelete = true;
      return null;
    }
    const { blobDeleteBatch, blobDeleteBackoffMs, blobDeleteMaxBackoffMs } = this.ctx.config;
    const pass = await store.deleteListed(blobDeleteBatch, (keys) => this.remove(keys), {
      baseMs: blobDeleteBackoffMs,
      maxMs: blobDeleteMaxBackoffMs,
    });
    // Counted once the pass has committed: a rolled-back pass leaves its blobs listed for the next.
    this.ctx.stats.blobsDeleted += pass.deleted.length;
    this.ctx.stats.blobDeleteFailures += pass.failed.length;
    return pass;
  }

  /** How many blobs wait on the list (and how many have failed), or null when the store lists none. */
  backlog() {
    return this.ctx.store.blobDeletions?.backlog() ?? Promise.resolve(null);
  }

  private async remove(keys: readonly string[]): Promise<BlobDeletionOutcome> {
    const blobs = this.ctx.payloads.blobs;
    const deleted: string[] = [];
    const failed: { key: string; error: string }[] = [];
    const one = async (key: string) => {
      try {
        await blobs.delete!(key);
        deleted.push(key);
      } catch (e) {
        const error = e instanceof Error ? e.message : String(e);
        failed.push({ key, error });
        this.ctx.logger.warn(
          { blob: key, blobs: blobs.name, error },
          'deleting a blob of a purged run failed; it stays listed and is tried again after a backoff',
        );
      }
    };
    // A few at a time: a remote store is not flooded, and the pass (holding its keys' locks) stays short.
    for (let i = 0; i < keys.length; i += DELETE_CONCURRENCY)
      await Promise.all(keys.slice(i, i + DELETE_CONCURRENCY).map(one));
    return { deleted, failed };
  }
}
