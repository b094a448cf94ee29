import type { PurgeSelection, RetentionPolicy, RetentionStore, RunArchive } from '@weft/engine';
import type { Sql } from 'postgres';
import { countPurgeable, deleteRuns, lockPurgeable } from './ops/purge-runs.js';
import { deletePolicy, listPolicies, putPolicy } from './ops/retention-policies.js';
import { readRunArchives } from './ops/run-archives.js';

/** Retention on PostgreSQL: policies, and purges of finished runs a batch per transaction. */
export class PgRetention implements RetentionStore {
  constructor(private readonly sql: Sql) {}

  listPolicies = (namespace?: string) => listPolicies(this.sql, namespace);
  putPolicy = (policy: Omit<RetentionPolicy, 'updatedAt'>) => putPolicy(this.sql, policy);
  deletePolicy = (namespace: string, definition: string | null) =>
    deletePolicy(this.sql, namespace, definition);
  countPurgeable = (selection: PurgeSelection, cap: number) => countPurgeable(this.sql, selection, cap);

  /**
   * One batch: lock purgeable runs (skipping those others hold), archive them if asked, delete them, commit.
   * The archive is written before the rows are deleted and inside the transaction: if writing it fails, the
   * transaction rolls back and the runs stay.
   */
  async purge(
    selection: PurgeSelection,
    limit: number,
    archive?: (runs: readonly RunArchive[]) => Promise<void>,
  ): Promise<string[]> {
    return this.sql.begin(async (tx) => {
      // Every statement reads its runs' rows by key, as in PgStore's transactions: no sequential scans.
      await tx`SELECT set_config('enable_seqscan', 'off', true)`;
      const ids = await lockPurgeable(tx, selection, limit);
      if (ids.length === 0) return [];
      if (archive) await archive(await readRunArchives(tx, ids));
      await deleteRuns(tx, ids);
      return ids;
    });
  }
}
