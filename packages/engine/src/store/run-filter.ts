import type { RunStatus } from '@weft/core';

/** A filter for listing runs. */
export interface RunFilter {
  readonly namespace: string;
  readonly status?: RunStatus;
  readonly definition?: string;
  /** Only runs of this version (of `definition`). */
  readonly version?: number;
  /** Only runs started before / after this time. */
  readonly startedBefore?: Date;
  readonly startedAfter?: Date;
  /** Only the run with this id, or the runs whose id starts with this text (see `runIdRange`). */
  readonly runId?: string;
  /** Only the run started with this idempotency key. */
  readonly idempotencyKey?: string;
  /** Only runs with this search attribute, matched as text (`42` matches 42 and "42"). */
  readonly attribute?: { readonly key: string; readonly value: string };
  /**
   * The payloads to read with each run. A list is a page of summaries: fields left out are null, and are
   * never read from the table (nor from the blob store), so a page costs the same whatever the runs carry.
   */
  readonly include?: readonly RunPayloadField[];
  /**
   * Opaque cursor from the previous page. Runs come newest first: by id (ids are time-ordered), or, with
   * a start-time filter, by start time then id, so that the time range is read from an index.
   */
  readonly cursor?: string;
  readonly limit: number;
}

/** A run's payload fields a list may read (`RunFilter.include`). */
export type RunPayloadField = 'input' | 'output';

/** A page of results and the cursor of the next page (null on the last page). */
export interface Page<T> {
  readonly items: T[];
  readonly next: string | null;
}
