import { WeftError } from '@weft/core';
import type { ApiKeyRecord, KeyRole, PgApiKeys } from '@weft/postgres';
import { generateKey, hashKey, keyPrefix } from './key-format.js';

/** What a new key is: a unique name, a role, and where it may act. */
export interface KeyRequest {
  readonly name: string;
  readonly role: KeyRole;
  /** The namespaces it may act in; absent or null for every one. */
  readonly namespaces?: readonly string[] | null;
  /** For a worker key, the task types it may take; absent or null for any. */
  readonly taskTypes?: readonly string[] | null;
  readonly expiresAt?: Date | null;
}

/** A key as made: its record and the key itself, which is shown this once and never stored. */
export interface IssuedKey {
  readonly record: ApiKeyRecord;
  readonly key: string;
}

/** Makes a new random key; 409 when the name is taken. */
export async function issueKey(keys: PgApiKeys, request: KeyRequest, createdBy: string): Promise<IssuedKey> {
  checkRequest(request);
  for (let attempt = 0; attempt < 3; attempt++) {
    const { key, prefix } = generateKey();
    const stored = await store(keys, request, createdBy, key, prefix);
    if (stored) return { record: stored, key };
    if (await keys.findByName(request.name)) break;
  }
  throw new WeftError('key_exists', `there is already a key named "${request.name}": pick another name`, 409);
}

/**
 * Makes sure the given key exists as an admin key of every namespace (the first key of a new installation,
 * given as WEFT_BOOTSTRAP_ADMIN_KEY). A key already there is left as it is: revoking it stays revoked.
 */
export async function ensureBootstrapKey(keys: PgApiKeys, key: string): Promise<void> {
  const prefix = keyPrefix(key);
  if (!prefix)
    throw new WeftError(
      'bad_config',
      'the bootstrap admin key is not a Weft key: make one with `weft keys generate` (it looks like weft_<12 hex>_<43 characters>)',
    );
  const found = await keys.find(prefix);
  if (found) {
    if (!found.hash.equals(hashKey(key)))
      throw new WeftError(
        'bad_config',
        'the bootstrap admin key clashes with another key: generate a new one',
      );
    return;
  }
  await store(keys, { name: `bootstrap-admin-${prefix}`, role: 'admin' }, 'bootstrap', key, prefix);
}

async function store(
  keys: PgApiKeys,
  r: KeyRequest,
  createdBy: string,
  key: string,
  prefix: string,
): Promise<ApiKeyRecord | null> {
  const created = await keys.create({
    prefix,
    name: r.name,
    hash: hashKey(key),
    role: r.role,
    namespaces: r.namespaces ?? null,
    taskTypes: r.taskTypes ?? null,
    createdBy,
    expiresAt: r.expiresAt ?? null,
  });
  return created ? keys.find(prefix) : null;
}

function checkRequest(r: KeyRequest): void {
  if (r.taskTypes && r.role !== 'worker')
    throw new WeftError(
      'bad_request',
      'task_types only applies to worker keys: leave it out or use role worker',
      400,
    );
  if (r.expiresAt && r.expiresAt.getTime() <= Date.now())
    throw new WeftError('bad_request', 'expires_at is in the past: give a time to come', 400);
}
