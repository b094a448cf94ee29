import type { Json, RunAttributes, RunStatus, TaskState } from '@weft/core';
import type { LeasedTask, RunParent } from './records.js';

/** A hint that something is ready: it makes waiting workers and loops look now instead of at their next poll. */
export type Wakeup =
  | { readonly kind: 'tasks'; readonly namespace: string; readonly taskTypes: readonly string[] }
  | { readonly kind: 'decisions' }
  | { readonly kind: 'timers' }
  /** Outbox rows were written: relays look now. */
  | { readonly kind: 'outbox' }
  /** A limit changed: reload the limit book. */
  | { readonly kind: 'limits' }
  /** Capacity under a limit of the namespace was freed: every poll there looks again. */
  | { readonly kind: 'gates'; readonly namespace: string }
  /** These runs ended (completed, failed, cancelled or terminated): whoever awaits them reads them now. */
  | { readonly kind: 'ended'; readonly runIds: readonly string[] };

/** A node instance of a run, to load for a decision. */
export interface StateKey {
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
}

/** A signal mailbox of a run, to load for a decision. */
export interface MailboxStateKey {
  readonly runId: string;
  readonly name: string;
  readonly correlation: string;
}

/** A node instance's latest attempt as loaded for a decision, with its run and row id. */
export type LoadedTask = TaskState & { readonly id: string; readonly runId: string };

/** A run to insert. */
export interface NewRun {
  readonly id: string;
  readonly namespace: string;
  readonly definitionId: string;
  readonly definitionName: string;
  readonly definitionVersion: number;
  readonly input: Json;
  /** The start's idempotency key: the run is inserted only if this transaction won the key. */
  readonly idempotencyKey?: string;
  /** Set for a run started by a node of another run. */
  readonly parent?: RunParent;
  /** The idempotency key of a start by a node: one run per key (see `childStartKey`). */
  readonly startKey?: string;
  /** Search attributes given at start. */
  readonly attributes?: RunAttributes;
  /** The W3C `traceparent` of the span that starts the run, kept with it (see RunRecord). */
  readonly traceContext?: string | null;
}

/** An idempotency key and the run it started. */
export interface IdempotentRun {
  readonly namespace: string;
  readonly key: string;
  readonly runId: string;
  readonly definitionName: string;
}

/** What a lease request got: the tasks, and when a task held back by a rate limit may be tried again. */
export interface LeaseOutcome {
  readonly tasks: LeasedTask[];
  readonly retryAt: Date | null;
}

/** What one statement of a store's fast lease path did. */
export interface FastLease {
  /** The tasks it leased. */
  readonly tasks: LeasedTask[];
  /** Queue rows it took, stale ones included (a task no longer queued is dropped, not leased). */
  readonly taken: number;
  /** True when rows under a limit wait for these types: it took nothing, and the gated path must run. */
  readonly gated: boolean;
  /** When a task held back by a rate limit becomes available, if one is. */
  readonly nextAt: Date | null;
}

/** Counts of runs by status, for progress displays. */
export type RunCounts = Partial<Record<RunStatus, number>>;

/** What a lease request asks for. */
export interface LeaseRequest {
  readonly namespace: string;
  readonly taskTypes: readonly string[];
  readonly max: number;
  readonly worker: string;
  readonly leaseMs: number;
}

/** A task whose lease (or attempt deadline) ran out, ended by the lease reaper. */
export interface ExpiredTask {
  readonly runId: string;
  readonly taskId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  /** True when the attempt's own timeout passed; false when the worker stopped heartbeating. */
  readonly timedOut: boolean;
  readonly worker: string | null;
}
