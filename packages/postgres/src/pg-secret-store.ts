import type { SealedSecret, SecretInfo, SecretKey, SecretStore, StoredSecret } from '@weft/engine';
import type { Sql } from 'postgres';

interface Row {
  namespace: string;
  name: string;
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
}

/** Sealed secrets in `weft.secrets`. Values arrive sealed; this table never sees plaintext. */
export class PgSecretStore implements SecretStore {
  constructor(private readonly sql: Sql) {}

  async put(namespace: string, name: string, sealed: SealedSecret): Promise<void> {
    await this.sql`
      INSERT INTO weft.secrets (namespace, name, key_id, nonce, ciphertext)
      VALUES (${namespace}, ${name}, ${sealed.keyId}, ${sealed.nonce}, ${sealed.ciphertext})
      ON CONFLICT (namespace, name) DO UPDATE
         SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext,
             updated_at = now()`.execute();
  }

  async get(namespace: string, names: readonly string[]): Promise<Map<string, SealedSecret>> {
    const rows = await this.sql<Row[]>`
      SELECT namespace, name, key_id AS "keyId", nonce, ciphertext FROM weft.secrets
       WHERE namespace = ${namespace} AND name = ANY(${names as string[]}::text[])`.execute();
    return new Map(rows.map((r) => [r.name, r]));
  }

  async list(namespace: string): Promise<SecretInfo[]> {
    return this.sql<SecretInfo[]>`
      SELECT name, updated_at AS "updatedAt" FROM weft.secrets WHERE namespace = ${namespace}
       ORDER BY name`.execute();
  }

  async delete(namespace: string, name: string): Promise<boolean> {
    const rows = await this.sql`
      DELETE FROM weft.secrets WHERE namespace = ${namespace} AND name = ${name} RETURNING 1`.execute();
    return rows.length > 0;
  }

  async sealedWithOtherKeys(keyId: string, after: SecretKey | null, limit: number): Promise<StoredSecret[]> {
    return this.sql<Row[]>`
      SELECT namespace, name, key_id AS "keyId", nonce, ciphertext FROM weft.secrets
       WHERE key_id <> ${keyId}
         AND (namespace, name) > (${after?.namespace ?? ''}::text, ${after?.name ?? ''}::text)
       ORDER BY namespace, name LIMIT ${limit}`.execute();
  }

  async reseal(secret: StoredSecret, previousKeyId: string): Promise<void> {
    // Conditional on the old key id, one statement: a secret set meanwhile (already under the new key) is
    // left as it is (invariant 19; test "a re-seal loses to a set made meanwhile").
    await this.sql`
      UPDATE weft.secrets SET key_id = ${secret.keyId}, nonce = ${secret.nonce}, ciphertext = ${secret.ciphertext}
       WHERE namespace = ${secret.namespace} AND name = ${secret.name} AND key_id = ${previousKeyId}`.execute();
  }
}
