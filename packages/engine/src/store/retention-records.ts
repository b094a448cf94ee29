import type { Json, RunStatus } from '@weft/core';

/** How long finished runs of a namespace (or of one definition there) are kept. */
export interface RetentionPolicy {
  readonly namespace: string;
  /** The definition this policy overrides the namespace's for; null for the namespace's own. */
  readonly definition: string | null;
  /** Finished runs older than this (by their finish time) are deleted. */
  readonly keepMs: number;
  /** Write each run to the blob store (one JSON document) before deleting it. */
  readonly archive: boolean;
  readonly updatedAt: Date;
}

/** Which finished runs to purge: those of a namespace that finished before a time. */
export interface PurgeSelection {
  readonly namespace: string;
  readonly finishedBefore: Date;
  /** Only runs of this definition. */
  readonly definition?: string;
  /** Not runs of these definitions (they have a policy of their own). */
  readonly exceptDefinitions?: readonly string[];
}

/** A run as archived before it is deleted: the run, its history and every attempt, with their payloads. */
export interface RunArchive {
  readonly format: 'weft.run-archive/1';
  readonly archivedAt: string;
  readonly run: {
    readonly id: string;
    readonly namespace: string;
    readonly definition: string;
    readonly version: number;
    readonly status: RunStatus;
    readonly input: Json;
    readonly output: Json;
    readonly error: Json;
    readonly created_at: string;
    readonly finished_at: string | null;
    readonly parent: Json;
  };
  readonly tasks: readonly Json[];
  readonly history: readonly Json[];
}

/**
 * Optional store capability (`Store.retention`): deleting finished runs with everything that belongs to
 * them. A store without it keeps runs forever.
 */
export interface RetentionStore {
  /** Policies of a namespace, or of every namespace. */
  listPolicies(namespace?: string): Promise<RetentionPolicy[]>;
  /** Creates or replaces a policy. */
  putPolicy(policy: Omit<RetentionPolicy, 'updatedAt'>): Promise<RetentionPolicy>;
  /** Deletes a policy; false when there was none. */
  deletePolicy(namespace: string, definition: string | null): Promise<boolean>;
  /** How many runs a purge would take now, counted up to `cap`. */
  countPurgeable(selection: PurgeSelection, cap: number): Promise<number>;
  /**
   * Deletes up to `limit` purgeable runs in one transaction, oldest finished first, skipping runs another
   * transaction holds. With `archive`, each run's document is handed to it before the rows are deleted, in
   * that transaction: if it throws, nothing is deleted. Returns the ids deleted.
   */
  purge(
    selection: PurgeSelection,
    limit: number,
    archive?: (runs: readonly RunArchive[]) => Promise<void>,
  ): Promise<string[]>;
}
