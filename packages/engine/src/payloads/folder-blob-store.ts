import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.js';

/**
 * Blobs as files in a folder (the default): `<dir>/<first two hex digits>/<key>`. Each file is written
 * under a temporary name and renamed into place, so a reader never sees half a blob. Several servers can
 * share the folder when it is on shared storage; otherwise use the S3 store.
 */
export class FolderBlobStore implements BlobStore {
  readonly name: string;

  constructor(readonly dir: string) {
    this.name = `folder ${dir}`;
  }

  async put(key: string, data: Buffer): Promise<void> {
    if (await exists(this.path(key))) return;
    await this.replace(key, data);
  }

  /** Writes the blob even if one has the key: the new one takes its place at once (a rename). */
  async replace(key: string, data: Buffer): Promise<void> {
    const path = this.path(key);
    const folder = join(this.dir, key.slice(-2));
    await mkdir(folder, { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, data);
    await rename(temp, path);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return null;
      throw e;
    }
  }

  has(key: string): Promise<boolean> {
    return exists(this.path(key));
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.path(key));
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
    }
  }

  private path(key: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return join(this.dir, key.slice(-2), key);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
