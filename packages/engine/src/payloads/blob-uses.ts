import type { Json } from '@weft/core';
import type { BlobUse } from '../store/blob-deletion-records.js';
import type { StoreTx } from '../store/store.js';
import { BLOB_REF, type PayloadStore } from './payload-store.js';

/**
 * The large payloads a transaction is about to reference, by run: what it must record and check before it
 * commits so that the blob deleter cannot lose one (invariant 30). Small values are never noted (a reference
 * is recognised by one field lookup), so a transaction without large payloads does nothing more.
 */
export class BlobUses {
  private readonly uses = new Map<string, BlobUse>();
  /** The values of blobs written for this transaction, to put back if a deleter overtook the put. */
  private readonly values = new Map<string, Json>();

  /** The use of one value a row of `runId` will hold (see `note`). */
  static of(runId: string, stored: unknown, value?: Json): BlobUses {
    const uses = new BlobUses();
    uses.note(runId, stored, value);
    return uses;
  }

  /**
   * Notes that a row of `runId` will hold `stored`: when it is a blob reference, the use is recorded. With
   * `value` (the value the reference stands for, just offloaded) the blob can be put back if missing.
   */
  note(runId: string, stored: unknown, value?: Json): void {
    if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return;
    const key = (stored as Record<string, unknown>)[BLOB_REF];
    if (typeof key !== 'string') return;
    this.uses.set(`${runId}\u0000${key}`, { runId, key });
    if (value !== undefined && value !== stored) this.values.set(key, value);
  }

  /** Takes in what another collection noted. */
  add(other: BlobUses): void {
    for (const [k, use] of other.uses) this.uses.set(k, use);
    for (const [k, value] of other.values) this.values.set(k, value);
  }

  get size(): number {
    return this.uses.size;
  }

  /**
   * In the transaction that writes the references, before it commits: records the uses under the keys'
   * shared locks (`StoreTx.referenceBlobs`), then checks every blob written for it is still in the blob
   * store and puts back any a deleter removed before the lock was held. Nothing for a store that deletes no
   * blobs, or when nothing was noted.
   */
  async guard(tx: StoreTx, payloads: PayloadStore): Promise<void> {
    if (this.uses.size === 0 || !tx.referenceBlobs) return;
    await tx.referenceBlobs([...this.uses.values()]);
    await Promise.all([...this.values].map(([key, value]) => payloads.ensureStored(key, value)));
  }
}
