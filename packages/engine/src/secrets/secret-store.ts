import type { SealedSecret } from './secret-box.js';

/** A secret's name and when it was last set: all a listing shows. */
export interface SecretInfo {
  readonly name: string;
  readonly updatedAt: Date;
}

/** Where a secret belongs. */
export interface SecretKey {
  readonly namespace: string;
  readonly name: string;
}

/** A sealed secret with where it belongs, as rotation reads it. */
export interface StoredSecret extends SealedSecret {
  readonly namespace: string;
  readonly name: string;
}

/** Where sealed secrets are kept. It only ever sees ciphertext. */
export interface SecretStore {
  put(namespace: string, name: string, sealed: SealedSecret): Promise<void>;
  get(namespace: string, names: readonly string[]): Promise<Map<string, SealedSecret>>;
  list(namespace: string): Promise<SecretInfo[]>;
  /** True when there was one to delete. */
  delete(namespace: string, name: string): Promise<boolean>;
  /** Secrets sealed with a key other than `keyId`, in (namespace, name) order after `after`, up to `limit`. */
  sealedWithOtherKeys(keyId: string, after: SecretKey | null, limit: number): Promise<StoredSecret[]>;
  /** Replaces a sealed value only if it is still sealed with `previousKeyId` (a set meanwhile wins). */
  reseal(secret: StoredSecret, previousKeyId: string): Promise<void>;
}

/** Secrets in memory, for the embedded engine and tests. */
export class MemorySecretStore implements SecretStore {
  private readonly rows = new Map<string, StoredSecret & { updatedAt: Date }>();

  async put(namespace: string, name: string, sealed: SealedSecret): Promise<void> {
    this.rows.set(`${namespace}\u0000${name}`, { ...sealed, namespace, name, updatedAt: new Date() });
  }

  async get(namespace: string, names: readonly string[]): Promise<Map<string, SealedSecret>> {
    const out = new Map<string, SealedSecret>();
    for (const name of names) {
      const row = this.rows.get(`${namespace}\u0000${name}`);
      if (row) out.set(name, row);
    }
    return out;
  }

  async list(namespace: string): Promise<SecretInfo[]> {
    return [...this.rows.values()]
      .filter((r) => r.namespace === namespace)
      .map((r) => ({ name: r.name, updatedAt: r.updatedAt }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async delete(namespace: string, name: string): Promise<boolean> {
    return this.rows.delete(`${namespace}\u0000${name}`);
  }

  async sealedWithOtherKeys(keyId: string, after: SecretKey | null, limit: number): Promise<StoredSecret[]> {
    const order = (r: SecretKey) => `${r.namespace}\u0000${r.name}`;
    return [...this.rows.values()]
      .filter((r) => r.keyId !== keyId && (!after || order(r) > order(after)))
      .sort((a, b) => (order(a) < order(b) ? -1 : 1))
      .slice(0, limit);
  }

  async reseal(secret: StoredSecret, previousKeyId: string): Promise<void> {
    const key = `${secret.namespace}\u0000${secret.name}`;
    const row = this.rows.get(key);
    if (row?.keyId === previousKeyId) this.rows.set(key, { ...secret, updatedAt: row.updatedAt });
  }
}
