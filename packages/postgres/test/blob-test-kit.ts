import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Json } from '@weft/core';
import { FolderBlobStore } from '@weft/engine';

/** A folder blob store of its own, in the system's temporary folder, and a way to remove it. */
export async function tempBlobStore(): Promise<{ blobs: FolderBlobStore; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-blobs-'));
  return { blobs: new FolderBlobStore(dir), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The blob key a large value is stored under (its content hash, as the payload store computes it). */
export function blobKeyOf(value: Json): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

/** A value over a 1000-byte threshold, different for each `tag`. */
export function largeValue(tag: string): Json {
  return { tag, text: 'x'.repeat(4000) };
}
