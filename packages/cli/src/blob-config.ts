import { resolve } from 'node:path';
import { S3BlobStore } from '@weft/connectors';
import { type BlobStore, FolderBlobStore } from '@weft/engine';
import { CliError } from './errors.js';

/**
 * The blob store for large payloads: S3-compatible when WEFT_S3_BUCKET is set (WEFT_S3_PREFIX,
 * WEFT_S3_REGION, WEFT_S3_ENDPOINT, and the usual AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN), else a folder: `--blob-dir`, WEFT_BLOB_DIR, or `fallback`.
 */
export function blobStore(dir: string | undefined, fallback: string, env = process.env): BlobStore {
  const bucket = env.WEFT_S3_BUCKET;
  if (bucket) {
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey)
      throw new CliError('WEFT_S3_BUCKET is set: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too');
    return new S3BlobStore({
      bucket,
      region: env.WEFT_S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
      accessKeyId,
      secretAccessKey,
      ...(env.WEFT_S3_PREFIX ? { prefix: env.WEFT_S3_PREFIX } : {}),
      ...(env.WEFT_S3_ENDPOINT ? { endpoint: env.WEFT_S3_ENDPOINT } : {}),
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    });
  }
  return new FolderBlobStore(resolve(dir ?? env.WEFT_BLOB_DIR ?? fallback));
}

/** Parses a size such as `256kb`, `16mb` or a number of bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!m) throw new CliError(`"${text}" is not a size; write it like 256kb or 16mb`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Math.round(Number(m[1]) * unit);
}
