import type { TaskReport } from '../../store/records.js';

/** A worker's request for tasks. */
export interface PollRequest {
  readonly namespace: string;
  readonly worker: string;
  readonly taskTypes: readonly string[];
  readonly max: number;
  /** How long to wait for a task when none is ready (long poll); 0 answers at once. */
  readonly waitMs: number;
  /** Aborts the wait (the worker hung up). */
  readonly signal?: AbortSignal;
}

/** What a worker is told with each lease. */
export interface LeaseTerms {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
}

/** Reports from one worker, and optionally room for more tasks to be handed back straight away. */
export interface ReportRequest {
  readonly namespace: string;
  readonly worker: string;
  readonly reports: readonly TaskReport[];
  readonly next?: { readonly taskTypes: readonly string[]; readonly max: number };
}
