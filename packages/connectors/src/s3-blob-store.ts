import type { BlobStore } from '@weft/engine';
import { signS3Request } from './s3-signature.js';

/** Where an S3-compatible store is and how to sign for it. */
export interface S3Options {
  readonly bucket: string;
  /** Prepended to every key, such as `weft/`. */
  readonly prefix?: string;
  readonly region: string;
  /** For S3-compatible services (MinIO, R2, Ceph): `http://127.0.0.1:9000`; AWS S3 when absent. */
  readonly endpoint?: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  /** The time requests are signed at; the system clock when absent (a fixed one reproduces a signature). */
  readonly clock?: () => Date;
}

/**
 * Blobs in an S3-compatible bucket, with path-style URLs (`<endpoint>/<bucket>/<key>`) signed with AWS
 * Signature Version 4 (see `signS3Request`) and sent with Node's fetch.
 */
export class S3BlobStore implements BlobStore {
  readonly name: string;
  private readonly base: URL;

  constructor(private readonly options: S3Options) {
    this.base = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`);
    this.name = `s3 ${options.bucket}/${options.prefix ?? ''}`;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const response = await this.send('PUT', key, data);
    if (!response.ok)
      throw new Error(`S3 PUT of blob ${key} failed: HTTP ${response.status} ${await response.text()}`);
  }

  async get(key: string): Promise<Buffer | null> {
    const response = await this.send('GET', key);
    if (response.status === 404) return null;
    if (!response.ok)
      throw new Error(`S3 GET of blob ${key} failed: HTTP ${response.status} ${await response.text()}`);
    return Buffer.from(await response.arrayBuffer());
  }

  /** Whether the bucket has the blob (a HEAD request). */
  async has(key: string): Promise<boolean> {
    const response = await this.send('HEAD', key);
    if (response.status === 404) return false;
    if (!response.ok) throw new Error(`S3 HEAD of blob ${key} failed: HTTP ${response.status}`);
    return true;
  }

  /** Deletes the blob; S3 answers 204 whether or not it was there. */
  async delete(key: string): Promise<void> {
    const response = await this.send('DELETE', key);
    if (!response.ok && response.status !== 404)
      throw new Error(`S3 DELETE of blob ${key} failed: HTTP ${response.status} ${await response.text()}`);
  }

  /** Signs and sends one request. */
  private send(method: 'GET' | 'PUT' | 'HEAD' | 'DELETE', key: string, body?: Buffer): Promise<Response> {
    const path = `${this.base.pathname.replace(/\/$/, '')}/${encodeURIComponent(this.options.bucket)}/${(this.options.prefix ?? '') + key}`;
    const headers = signS3Request(
      {
        method,
        host: this.base.host,
        path,
        ...(body ? { headers: { 'content-type': 'application/json' }, body } : {}),
      },
      this.options.region,
      this.options,
      this.options.clock?.() ?? new Date(),
    );
    return fetch(`${this.base.protocol}//${this.base.host}${path}`, {
      method,
      headers,
      ...(body ? { body } : {}),
    });
  }
}
