import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key: `weft_<prefix>_<secret>`. The prefix (12 hex digits) is public and finds the key; the secret
 * is 32 random bytes (256 bits) in base64url. Only the SHA-256 of the whole key is stored: a key of that
 * entropy cannot be guessed from its hash, so no slow hash is needed.
 */
const KEY = /^weft_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** A new random key and its public prefix. */
export function generateKey(): { key: string; prefix: string } {
  const prefix = randomBytes(6).toString('hex');
  return { key: `weft_${prefix}_${randomBytes(32).toString('base64url')}`, prefix };
}

/** The prefix of a well-formed key, or null when the text is not one. */
export function keyPrefix(key: string): string | null {
  return KEY.exec(key)?.[1] ?? null;
}

/** The stored hash of a key. */
export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** True when `key` hashes to `hash`, compared in constant time. */
export function keyMatches(key: string, hash: Buffer): boolean {
  const given = hashKey(key);
  return given.length === hash.length && timingSafeEqual(given, hash);
}

/** True when two secrets are equal, compared in constant time (for the metrics token). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(hashKey(a), hashKey(b));
}
