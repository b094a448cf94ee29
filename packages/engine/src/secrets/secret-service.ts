import { SECRET_NAME_PATTERN, WeftError } from '@weft/core';
import type { SecretBox } from './secret-box.js';
import type { SecretInfo, SecretKey, SecretStore } from './secret-store.js';

/** Largest secret value, in bytes. */
export const MAX_SECRET_BYTES = 64 * 1024;

/** Secrets per namespace: set, list (names only), delete, and resolve at the moment of a call. */
export class SecretService {
  constructor(
    private readonly store: SecretStore,
    private readonly box: SecretBox | undefined,
  ) {}

  /** True when a key is configured (WEFT_SECRETS_KEY), so secrets can be set and resolved. */
  get enabled(): boolean {
    return this.box !== undefined;
  }

  private sealer(): SecretBox {
    if (!this.box)
      throw new WeftError(
        'secrets_not_configured',
        'this server has no key for secrets: set WEFT_SECRETS_KEY to 32 random bytes in base64 ' +
          '(`openssl rand -base64 32`) and restart it',
        409,
      );
    return this.box;
  }

  async set(namespace: string, name: string, value: string): Promise<void> {
    checkName(name);
    if (Buffer.byteLength(value) > MAX_SECRET_BYTES)
      throw new WeftError(
        'secret_too_large',
        `a secret's value may be at most ${MAX_SECRET_BYTES} bytes`,
        413,
      );
    await this.store.put(namespace, name, this.sealer().seal(namespace, name, value));
  }

  list(namespace: string): Promise<SecretInfo[]> {
    return this.store.list(namespace);
  }

  async delete(namespace: string, name: string): Promise<void> {
    if (!(await this.store.delete(namespace, name)))
      throw new WeftError('secret_not_found', notSet(namespace, name), 404);
  }

  /** The values of `names` in `namespace`; throws naming the first that is not set. */
  async resolve(namespace: string, names: readonly string[]): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    if (names.length === 0) return values;
    const box = this.sealer();
    const sealed = await this.store.get(namespace, names);
    for (const name of names) {
      const s = sealed.get(name);
      if (!s) throw new WeftError('secret_not_found', notSet(namespace, name), 404);
      values.set(name, box.open(namespace, name, s));
    }
    return values;
  }

  /**
   * Seals again, under the current key, every secret sealed with an older one it holds. Returns how many
   * were sealed again and the names of those whose key it does not have (left as they are).
   */
  async rotate(): Promise<{ resealed: number; unopened: string[] }> {
    const box = this.sealer();
    let resealed = 0;
    const unopened: string[] = [];
    let after: SecretKey | null = null;
    for (;;) {
      const batch = await this.store.sealedWithOtherKeys(box.currentKeyId, after, 100);
      if (batch.length === 0) return { resealed, unopened };
      for (const s of batch) {
        after = s;
        if (!box.canOpen(s.keyId)) {
          unopened.push(`${s.namespace}/${s.name}`);
          continue;
        }
        const sealed = box.seal(s.namespace, s.name, box.open(s.namespace, s.name, s));
        await this.store.reseal({ ...s, ...sealed }, s.keyId);
        resealed++;
      }
    }
  }
}

function checkName(name: string): void {
  if (!SECRET_NAME_PATTERN.test(name))
    throw new WeftError(
      'bad_secret_name',
      `${JSON.stringify(name)} is not a valid secret name: use letters, digits and _, starting with a letter or _ (at most 128)`,
      400,
    );
}

function notSet(namespace: string, name: string): string {
  return `secret ${JSON.stringify(name)} is not set in namespace "${namespace}": set it with \`weft secrets set ${name}\` or PUT /v1/secrets/${name}`;
}
