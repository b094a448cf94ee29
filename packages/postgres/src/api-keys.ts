import type { Db } from './db.js';

/** What a key may do: `admin` everything, `operator` run work, `viewer` read, `worker` take and report tasks. */
export type KeyRole = 'admin' | 'operator' | 'viewer' | 'worker';

/** The roles, most powerful first. */
export const KEY_ROLES: readonly KeyRole[] = ['admin', 'operator', 'viewer', 'worker'];

/** A stored API key, without its secret (only its hash is stored). */
export interface ApiKeyRecord {
  readonly prefix: string;
  readonly name: string;
  readonly hash: Buffer;
  readonly role: KeyRole;
  /** The namespaces the key may act in; null for every namespace. */
  readonly namespaces: readonly string[] | null;
  /** For a worker key, the task types it may take; null for any. */
  readonly taskTypes: readonly string[] | null;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

/** A key to store: everything but the times the database sets. */
export interface NewApiKey {
  readonly prefix: string;
  readonly name: string;
  readonly hash: Buffer;
  readonly role: KeyRole;
  readonly namespaces: readonly string[] | null;
  readonly taskTypes: readonly string[] | null;
  readonly createdBy: string;
  readonly expiresAt: Date | null;
}

/** An administrative change, as the audit list keeps it. */
export interface AuditEntry {
  readonly id: string;
  readonly at: Date;
  readonly actor: string;
  readonly action: string;
  readonly namespace: string | null;
  readonly target: string | null;
  readonly details: unknown;
}

const COLUMNS =
  'prefix, name, hash, role, namespaces, task_types, created_by, created_at, expires_at, revoked_at, last_used_at';

/** API keys and the audit list of administrative changes, in PostgreSQL. */
export class PgApiKeys {
  constructor(private readonly sql: Db) {}

  /** Stores a key; false when its name (or prefix) is taken. */
  async create(key: NewApiKey): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO weft.api_keys (prefix, name, hash, role, namespaces, task_types, created_by, expires_at)
      VALUES (${key.prefix}, ${key.name}, ${key.hash}, ${key.role},
              ${key.namespaces as string[] | null}::text[], ${key.taskTypes as string[] | null}::text[],
              ${key.createdBy}, ${key.expiresAt?.toISOString() ?? null}::timestamptz)
      ON CONFLICT DO NOTHING
      RETURNING prefix`.execute();
    return rows.length === 1;
  }

  /** The key with this prefix, revoked and expired ones included. */
  async find(prefix: string): Promise<ApiKeyRecord | null> {
    const rows = await this.sql.unsafe(`SELECT ${COLUMNS} FROM weft.api_keys WHERE prefix = $1`, [prefix]);
    return (rows[0] as ApiKeyRecord | undefined) ?? null;
  }

  /** The key with this name, revoked and expired ones included. */
  async findByName(name: string): Promise<ApiKeyRecord | null> {
    const rows = await this.sql.unsafe(`SELECT ${COLUMNS} FROM weft.api_keys WHERE name = $1`, [name]);
    return (rows[0] as ApiKeyRecord | undefined) ?? null;
  }

  /** Every key, newest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.sql.unsafe(`SELECT ${COLUMNS} FROM weft.api_keys ORDER BY created_at DESC, name`);
    return rows as unknown as ApiKeyRecord[];
  }

  /** Revokes the key of this name (kept, refused from now on); null when there is none. */
  async revoke(name: string): Promise<ApiKeyRecord | null> {
    const rows = await this.sql.unsafe(
      `UPDATE weft.api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE name = $1 RETURNING ${COLUMNS}`,
      [name],
    );
    return (rows[0] as ApiKeyRecord | undefined) ?? null;
  }

  /** Notes that a key was used now. */
  async touch(prefix: string): Promise<void> {
    await this.sql`UPDATE weft.api_keys SET last_used_at = now() WHERE prefix = ${prefix}`.execute();
  }

  /** Appends an administrative change to the audit list. */
  async audit(entry: Omit<AuditEntry, 'id' | 'at'>): Promise<void> {
    await this.sql`
      INSERT INTO weft.audit (actor, action, namespace, target, details)
      VALUES (${entry.actor}, ${entry.action}, ${entry.namespace}, ${entry.target},
              ${JSON.stringify(entry.details ?? {})}::jsonb)`.execute();
  }

  /** Audit entries, newest first, older than `before` (an id) when given. */
  async auditList(options: { limit: number; before?: string; namespace?: string }): Promise<AuditEntry[]> {
    const rows = await this.sql`
      SELECT id::text AS id, at, actor, action, namespace, target, details FROM weft.audit
       WHERE (${options.before ?? null}::bigint IS NULL OR id < ${options.before ?? null}::bigint)
         AND (${options.namespace ?? null}::text IS NULL OR namespace = ${options.namespace ?? null}::text)
       ORDER BY id DESC LIMIT ${options.limit}`.execute();
    return rows as unknown as AuditEntry[];
  }
}
