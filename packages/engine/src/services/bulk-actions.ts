import { isWeftError, type RunStatus } from '@weft/core';
import type { Store } from '../store/store.js';
import type { OperatorActionService } from './operator-actions.js';

/** Which runs a bulk action applies to. Every field narrows; none matches every run of the namespace. */
export interface BulkFilter {
  readonly definition?: string;
  readonly version?: number;
  readonly status?: RunStatus;
  readonly startedBefore?: Date;
  readonly startedAfter?: Date;
  /** A run id, or its first characters. */
  readonly runId?: string;
  readonly idempotencyKey?: string;
  /** Only runs with this search attribute, matched as text. */
  readonly attribute?: { readonly key: string; readonly value: string };
}

/** A bulk action: cancel, terminate or retry every run that matches, one run per transaction. */
export interface BulkRequest {
  readonly namespace: string;
  readonly action: 'cancel' | 'terminate' | 'retry';
  readonly filter: BulkFilter;
  readonly by: string;
  readonly reason?: string;
  /** Runs per batch (read together, then acted on one transaction each). Default 100. */
  readonly batchSize?: number;
  /** Continue after this run (the `next` of an earlier call); runs are taken newest first. */
  readonly cursor?: string;
  /** Stop after this many batches (an HTTP call does one); `next` says where to go on. */
  readonly maxBatches?: number;
  /** List what would be acted on, without acting. */
  readonly dryRun?: boolean;
}

/** One run the action refused (a 409 naming the run's state, say), or failed on. */
export interface BulkRefusal {
  readonly runId: string;
  readonly code: string;
  readonly message: string;
}

/** Where a bulk action stands: after each batch, and at the end. */
export interface BulkProgress {
  readonly batches: number;
  readonly matched: number;
  readonly done: number;
  readonly refused: number;
  /** Where to continue; null when every matching run has been seen. */
  readonly next: string | null;
}

/** What a bulk action did. */
export interface BulkResult extends BulkProgress {
  readonly doneIds: string[];
  readonly refusals: BulkRefusal[];
}

const PARALLEL = 4;

/**
 * Applies cancel, terminate or retry to every run matching a filter, a batch at a time, newest first.
 * Each run gets its own transaction through the operator action service, so one run's refusal (or failure)
 * never undoes another's action, and a run that changed since it was listed is checked as it is then.
 * Runs started after the first batch was read are not included: the cursor only moves to older runs.
 */
export async function bulkOperatorAction(
  store: Store,
  actions: OperatorActionService,
  request: BulkRequest,
  onProgress?: (progress: BulkProgress) => void,
): Promise<BulkResult> {
  const doneIds: string[] = [];
  const refusals: BulkRefusal[] = [];
  let cursor = request.cursor;
  let batches = 0;
  let matched = 0;
  let next: string | null = null;
  const asker = { by: request.by, ...(request.reason ? { reason: request.reason } : {}) };
  for (;;) {
    const page = await store.listRuns({
      namespace: request.namespace,
      limit: request.batchSize ?? 100,
      ...request.filter,
      ...(cursor ? { cursor } : {}),
    });
    batches++;
    matched += page.items.length;
    const ids = page.items.map((r) => r.id);
    if (request.dryRun) doneIds.push(...ids);
    else {
      for (let i = 0; i < ids.length; i += PARALLEL) {
        await Promise.all(
          ids.slice(i, i + PARALLEL).map(async (runId) => {
            try {
              await actions.act(runId, { kind: request.action, ...asker });
              doneIds.push(runId);
            } catch (e) {
              refusals.push({
                runId,
                code: isWeftError(e) ? e.code : 'error',
                message: e instanceof Error ? e.message : String(e),
              });
            }
          }),
        );
      }
    }
    next = page.next;
    onProgress?.({ batches, matched, done: doneIds.length, refused: refusals.length, next });
    if (!next || (request.maxBatches !== undefined && batches >= request.maxBatches)) break;
    cursor = next;
  }
  return { batches, matched, done: doneIds.length, refused: refusals.length, next, doneIds, refusals };
}
