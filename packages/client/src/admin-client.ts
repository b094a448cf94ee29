import { WeftClient } from './client.js';

/** A role of an API key. */
export type KeyRole = 'admin' | 'operator' | 'viewer' | 'worker';

/** An API key as the server shows it (never its secret). */
export interface ApiKey {
  readonly name: string;
  readonly prefix: string;
  readonly role: KeyRole;
  readonly namespaces: string[] | null;
  readonly task_types: string[] | null;
  readonly created_by: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly last_used_at: string | null;
}

/** What a new key is. */
export interface KeySpec {
  readonly name: string;
  readonly role: KeyRole;
  readonly namespaces?: string[] | null;
  readonly task_types?: string[] | null;
  /** A time such as 2027-01-31T00:00:00Z, or use `expires_in`. */
  readonly expires_at?: string;
  /** A duration such as 30d. */
  readonly expires_in?: string;
}

/** An administrative change. */
export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly namespace: string | null;
  readonly target: string | null;
  readonly details: unknown;
}

/** The client with what only admins of every namespace may do: API keys and the audit list. */
export class WeftAdminClient extends WeftClient {
  /** Makes a key; the answer's `key` is shown this once. */
  createKey(spec: KeySpec): Promise<ApiKey & { key: string }> {
    return this.call('POST', '/v1/keys', spec);
  }

  listKeys(): Promise<{ items: ApiKey[] }> {
    return this.call('GET', '/v1/keys');
  }

  /** Revokes a key: it is refused from now on (and kept, so history still names it). */
  revokeKey(name: string): Promise<ApiKey> {
    return this.call('POST', `/v1/keys/${encodeURIComponent(name)}/revoke`, {});
  }

  /** Administrative changes, newest first; `before` continues from a page's `next_before`. */
  audit(
    page: { limit?: number; before?: string } = {},
  ): Promise<{ items: AuditEntry[]; next_before: string | null }> {
    const q = new URLSearchParams();
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    if (page.before !== undefined) q.set('before', page.before);
    const text = q.toString();
    return this.call('GET', `/v1/audit${text ? `?${text}` : ''}`);
  }
}
