import { setTimeout as sleep } from 'node:timers/promises';
import { type Json, parseDuration, WeftError } from '@weft/core';
import type { EngineContext } from '../context.js';
import type {
  PurgeSelection,
  RetentionPolicy,
  RetentionStore,
  RunArchive,
} from '../store/retention-records.js';
import { isUuid } from '../support/ids.js';

/** A dry run counts no further than this. */
export const PURGE_COUNT_CAP = 1_000_000;

/** A policy as asked for: a duration such as `30d`, and whether to archive first. */
export interface RetentionRequest {
  readonly definition?: string;
  readonly keep: string;
  readonly archive?: boolean;
}

/** A purge by hand: runs of a namespace (or of one definition there) finished before a time. */
export interface PurgeRequest {
  readonly namespace: string;
  readonly before: Date;
  readonly definition?: string;
  /** Count, delete nothing. */
  readonly dryRun?: boolean;
}

/** The blob key of a run's archive document. */
export function archiveKey(runId: string): string {
  return `run-archive-${runId.toLowerCase()}`;
}

/**
 * Retention: how long finished runs are kept, per namespace with a per-definition override, and the purge
 * that deletes older ones a batch per transaction (by the background loop, or by hand). When the policy
 * says so, each run is archived to the blob store (one JSON document with its history and attempts, payloads
 * resolved) before its rows are deleted, and `archived` reads it back once the rows are gone.
 */
export class RetentionService {
  constructor(private readonly ctx: EngineContext) {}

  /** Whether the store can delete runs; without it, runs are kept forever. */
  get supported(): boolean {
    return this.ctx.store.retention !== undefined;
  }

  private store(): RetentionStore {
    const store = this.ctx.store.retention;
    if (!store)
      throw new WeftError(
        'retention_unsupported',
        'this store keeps runs forever: retention needs the PostgreSQL store (run the server with a DATABASE_URL)',
        501,
      );
    return store;
  }

  /** Policies of a namespace, the namespace's own first. */
  policies(namespace: string): Promise<RetentionPolicy[]> {
    return this.store().listPolicies(namespace);
  }

  /** Sets the namespace's policy, or a definition's override of it. */
  async setPolicy(namespace: string, request: RetentionRequest): Promise<RetentionPolicy> {
    const keep = parseDuration(request.keep);
    if (!keep.ok) throw new WeftError('bad_request', `keep: ${keep.error}`, 400);
    if (keep.value < 60_000)
      throw new WeftError(
        'bad_request',
        'keep must be at least 1m: finished runs are kept at least a minute',
        400,
      );
    return this.store().putPolicy({
      namespace,
      definition: request.definition ?? null,
      keepMs: keep.value,
      archive: request.archive ?? false,
    });
  }

  /** Removes a policy (runs of the namespace, or of the definition, fall back to the next one up). */
  clearPolicy(namespace: string, definition: string | null): Promise<boolean> {
    return this.store().deletePolicy(namespace, definition);
  }

  /** A purge by hand: counts (dry run) or deletes, a batch per transaction, archiving as the policy says. */
  async purge(request: PurgeRequest): Promise<{ matched: number; purged: number; capped: boolean }> {
    const store = this.store();
    const selection: PurgeSelection = {
      namespace: request.namespace,
      finishedBefore: request.before,
      ...(request.definition !== undefined ? { definition: request.definition } : {}),
    };
    if (request.dryRun) {
      const matched = await store.countPurgeable(selection, PURGE_COUNT_CAP);
      return { matched, purged: 0, capped: matched >= PURGE_COUNT_CAP };
    }
    const archive = await this.archivesFor(request.namespace, request.definition);
    let purged = 0;
    for (;;) {
      const batch = await this.purgeBatch(selection, archive);
      purged += batch;
      if (batch < this.ctx.config.purgeBatch) break;
    }
    return { matched: purged, purged, capped: false };
  }

  /**
   * One round of the background loop: for each policy of each namespace, one batch of runs finished before
   * the database's now less the period. A namespace's own policy leaves out definitions that have their
   * own. Returns true when a batch was full (the loop goes on at once).
   */
  async round(): Promise<boolean> {
    const store = this.ctx.store.retention;
    if (!store) return false;
    const policies = await store.listPolicies();
    if (policies.length === 0) return false;
    const now = await this.ctx.store.now();
    let more = false;
    for (const p of policies) {
      const overridden = policies
        .filter((o) => o.namespace === p.namespace && o.definition !== null)
        .map((o) => o.definition!);
      const selection: PurgeSelection = {
        namespace: p.namespace,
        finishedBefore: new Date(now.getTime() - p.keepMs),
        ...(p.definition !== null ? { definition: p.definition } : { exceptDefinitions: overridden }),
      };
      const batch = await this.purgeBatch(selection, p.archive);
      if (batch >= this.ctx.config.purgeBatch) more = true;
    }
    // A backlog goes on after a pause, at a pace that leaves the database to the runs.
    if (more) await sleep(this.ctx.config.purgePauseMs);
    return more;
  }

  /** A run's archive document, or null when it was not archived (or the blob store has lost it). */
  async archived(runId: string): Promise<RunArchive | null> {
    // Only a run id can name an archive: anything else (a mistyped or hostile id) has none.
    if (!isUuid(runId)) return null;
    const data = await this.ctx.payloads.blobs.get(archiveKey(runId));
    return data ? (JSON.parse(data.toString('utf8')) as RunArchive) : null;
  }

  private async purgeBatch(selection: PurgeSelection, archive: boolean): Promise<number> {
    const ids = await this.store().purge(
      selection,
      this.ctx.config.purgeBatch,
      archive ? (runs) => this.writeArchives(runs) : undefined,
    );
    this.ctx.stats.runsPurged += ids.length;
    if (archive) this.ctx.stats.runsArchived += ids.length;
    return ids.length;
  }

  /**
   * Whether a purge by hand archives: as the definition's policy says (else the namespace's); for a whole
   * namespace, when any of its policies archives (archiving a run more is harmless, losing one is not).
   */
  private async archivesFor(namespace: string, definition?: string): Promise<boolean> {
    const policies = await this.store().listPolicies(namespace);
    if (definition === undefined) return policies.some((p) => p.archive);
    const own = policies.find((p) => p.definition === definition);
    return (own ?? policies.find((p) => p.definition === null))?.archive ?? false;
  }

  /** Writes each run's document with its payloads resolved, so it stands alone once the blobs are gone. */
  private async writeArchives(runs: readonly RunArchive[]): Promise<void> {
    const payloads = this.ctx.payloads;
    for (const run of runs) {
      const whole = await payloads.resolveDeep(run as unknown as Json);
      // Replaced, not put: a run retried after an archive whose purge rolled back is archived again.
      const blobs = payloads.blobs;
      await (blobs.replace ?? blobs.put).call(
        blobs,
        archiveKey(run.run.id),
        Buffer.from(JSON.stringify(whole)),
      );
    }
  }
}
