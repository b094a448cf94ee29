import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { WeftError } from '@weft/core';

/** A secret as stored: AES-256-GCM ciphertext (tag appended), its nonce, and the id of the key used. */
export interface SealedSecret {
  readonly keyId: string;
  readonly nonce: Buffer;
  readonly ciphertext: Buffer;
}

/** The keys that seal secrets: `current` seals, `old` ones only open (for rotation). Base64, 32 bytes each. */
export interface SecretKeys {
  readonly current: string;
  readonly old?: readonly string[];
}

interface Key {
  readonly id: string;
  readonly bytes: Buffer;
}

function readKey(text: string, setting: string): Key {
  const bytes = Buffer.from(text.trim(), 'base64');
  if (bytes.length !== 32)
    throw new WeftError(
      'bad_config',
      `${setting} must be 32 bytes in base64 (make one with \`openssl rand -base64 32\`), not ${bytes.length} bytes`,
    );
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 16), bytes };
}

/**
 * Seals and opens secrets with AES-256-GCM. The namespace and name are authenticated with the value, so a
 * sealed value copied onto another secret's row does not open. Each sealed value names its key by id (a
 * hash of the key, never the key), so values sealed under an old key open as long as that key is listed.
 */
export class SecretBox {
  private readonly current: Key;
  private readonly keys: Map<string, Key>;

  constructor(keys: SecretKeys) {
    this.current = readKey(keys.current, 'WEFT_SECRETS_KEY');
    this.keys = new Map([[this.current.id, this.current]]);
    for (const old of keys.old ?? []) {
      const key = readKey(old, 'each of WEFT_SECRETS_OLD_KEYS');
      if (!this.keys.has(key.id)) this.keys.set(key.id, key);
    }
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /** True when the key `keyId` is one of this box's keys. */
  canOpen(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  seal(namespace: string, name: string, value: string): SealedSecret {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, nonce);
    cipher.setAAD(Buffer.from(`${namespace}\u0000${name}`));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.current.id, nonce, ciphertext: body };
  }

  open(namespace: string, name: string, sealed: SealedSecret): string {
    const key = this.keys.get(sealed.keyId);
    if (!key)
      throw new WeftError(
        'secret_key_missing',
        `secret ${JSON.stringify(name)} was sealed with key ${sealed.keyId}, which is neither WEFT_SECRETS_KEY ` +
          'nor one of WEFT_SECRETS_OLD_KEYS: add that key to WEFT_SECRETS_OLD_KEYS',
        500,
      );
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, sealed.nonce);
    decipher.setAAD(Buffer.from(`${namespace}\u0000${name}`));
    decipher.setAuthTag(sealed.ciphertext.subarray(sealed.ciphertext.length - 16));
    const body = sealed.ciphertext.subarray(0, sealed.ciphertext.length - 16);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }
}
