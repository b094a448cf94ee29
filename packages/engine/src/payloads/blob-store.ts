/**
 * Where large payloads are kept. Keys are content hashes, so a blob is written once and never changes:
 * writing the same key twice is harmless, and a blob written by a transaction that rolled back is only
 * garbage, never wrong data.
 */
export interface BlobStore {
  /** A short description for logs (`folder /var/lib/weft/blobs`, `s3 bucket/prefix`). */
  readonly name: string;
  put(key: string, data: Buffer): Promise<void>;
  /**
   * Writes a blob whether or not one has the key: for documents that are not content-addressed (a run's
   * archive, written again if the run was retried and purged again). A store without it must overwrite on
   * `put` (S3 does).
   */
  replace?(key: string, data: Buffer): Promise<void>;
  /** The blob, or null when there is none with this key. */
  get(key: string): Promise<Buffer | null>;
  /**
   * Whether a blob has the key, without reading it. Checked after a transaction that references a large
   * payload holds its key's lock (invariant 30); a store without it has the blob put again instead.
   */
  has?(key: string): Promise<boolean>;
  /**
   * Deletes a blob; deleting one that is not there succeeds. Used only for blobs of purged runs that no run
   * references (invariant 30); a store without it keeps every blob.
   */
  delete?(key: string): Promise<void>;
}
