/** A run's row referencing a large-payload blob, recorded by the transaction that writes the row. */
export interface BlobUse {
  readonly runId: string;
  readonly key: string;
}

/** What the blob store did with the blobs a deletion pass handed it. */
export interface BlobDeletionOutcome {
  /** Deleted (or already absent). */
  readonly deleted: readonly string[];
  /** Not deleted: the store's error, kept with the listed blob. */
  readonly failed: readonly { readonly key: string; readonly error: string }[];
}

/** Blobs listed for deletion: all of them, and those whose deletion has failed at least once. */
export interface BlobDeletionBacklog {
  readonly listed: number;
  readonly failing: number;
}

/** What one deletion pass did. */
export interface BlobDeletionPass extends BlobDeletionOutcome {
  /** Listed blobs found referenced by a run again, taken off the list without being deleted. */
  readonly referenced: number;
  /** Listed blobs left for a later pass: a writer held them. */
  readonly busy: number;
}

/**
 * Optional store capability (`Store.blobDeletions`): the list of blobs purged runs referenced, and the
 * coordination that keeps a blob a run references from being deleted (invariant 30). A store without it
 * deletes no blob.
 */
export interface BlobDeletionStore {
  /**
   * One pass, in one transaction: takes up to `limit` due listed blobs that no run references and no writer
   * is referencing now, hands them to `remove` (which deletes them from the blob store), then takes the
   * deleted and the referenced off the list and keeps the failed ones listed with a backoff.
   */
  deleteListed(
    limit: number,
    remove: (keys: readonly string[]) => Promise<BlobDeletionOutcome>,
    backoff: { readonly baseMs: number; readonly maxMs: number },
  ): Promise<BlobDeletionPass>;
  /** How many blobs wait on the list. */
  backlog(): Promise<BlobDeletionBacklog>;
}
