import { ApiClient } from './api-client.js';

/** How long finished runs of the namespace (or of one definition there) are kept. */
export interface RetentionPolicy {
  readonly namespace: string;
  /** Null for the namespace's own policy; a definition's name for its override. */
  readonly definition: string | null;
  readonly keep_ms: number;
  /** Runs are archived to the blob store before they are deleted. */
  readonly archive: boolean;
  readonly updated_at: string;
}

/** What a purge did (or, as a dry run, would do). */
export interface PurgeOutcome {
  readonly dry_run: boolean;
  /** Runs that match (a dry run counts up to 1,000,000: `capped` says the count stopped there). */
  readonly matched: number;
  readonly purged: number;
  readonly capped: boolean;
  /**
   * Blobs of purged runs (of every namespace) listed for deletion from the blob store and not deleted yet,
   * and of those, how many the blob store failed to delete (tried again after a backoff). Absent when the
   * server's store deletes no blobs.
   */
  readonly blobs_waiting?: number;
  readonly blobs_failing?: number;
}

/** Retention of a namespace, over the HTTP API: policies, and purges of finished runs by hand. */
export class RetentionClient extends ApiClient {
  /** The namespace's policy and its per-definition overrides. */
  async policies(): Promise<RetentionPolicy[]> {
    return (await this.call<{ items: RetentionPolicy[] }>('GET', '/v1/retention')).items;
  }

  /** Sets the namespace's policy (or, with `definition`, that definition's override): `keep` like `30d`. */
  set(keep: string, options: { definition?: string; archive?: boolean } = {}): Promise<RetentionPolicy> {
    return this.call('PUT', '/v1/retention', { keep, ...options });
  }

  /** Removes the namespace's policy (or a definition's override). */
  clear(definition?: string): Promise<{ deleted: boolean }> {
    const q = definition === undefined ? '' : `?definition=${encodeURIComponent(definition)}`;
    return this.call('DELETE', `/v1/retention${q}`);
  }

  /** Deletes (or with `dry_run`, counts) finished runs of the namespace that finished before `before`. */
  purge(request: { before: string; definition?: string; dry_run?: boolean }): Promise<PurgeOutcome> {
    return this.call('POST', '/v1/runs/purge', request);
  }
}
