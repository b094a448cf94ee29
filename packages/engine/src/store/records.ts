// What the store keeps and hands out: definitions, runs, tasks, history, leases and reports.
import type {
  Arrival,
  Definition,
  Json,
  JsonObject,
  RunAttributes,
  RunError,
  RunEvent,
  RunStatus,
  TaskError,
  TaskStatus,
} from '@weft/core';
import type { RunProgress } from './run-progress.js';

/** A deployed definition version. */
export interface DefinitionRecord {
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly version: number;
  readonly hash: string;
  readonly source: string;
  readonly definition: Definition;
  readonly createdAt: Date;
}

/** A run as stored. */
export interface RunRecord {
  readonly id: string;
  readonly namespace: string;
  readonly definitionId: string;
  readonly definitionName: string;
  readonly definitionVersion: number;
  readonly status: RunStatus;
  readonly input: Json;
  readonly output: Json | null;
  readonly error: RunError | null;
  readonly vars: JsonObject;
  readonly sinksDone: number;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
  /** The attempt that started this run, for runs started by a `sub_workflow` or `start_workflow` node. */
  readonly parent?: RunParent | null;
  /** Its steps known, completed, failed and running (see RunProgress). */
  readonly progress?: RunProgress;
  /** Search attributes, read by the API's reads (`getRun`, `listRuns`), not by decisions. */
  readonly attributes?: RunAttributes;
  /**
   * The W3C `traceparent` of the span that started the run (null when the start carried none and tracing
   * is off): the parent of its tasks' spans, and the link of every later decision (see docs/guide/tracing.md).
   */
  readonly traceContext?: string | null;
}

/** Which attempt of which node started a run. A `detached` run (fire and forget) does not report back. */
export interface RunParent {
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly detached: boolean;
}

/** A run locked for a decision: the row, the last history sequence number and the transaction's time. */
export interface LockedRun extends RunRecord {
  readonly lastSeq: number;
  readonly now: Date;
}

/** One attempt of one node instance, as stored. */
export interface TaskRecord {
  readonly id: string;
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly status: TaskStatus;
  readonly taskType: string | null;
  readonly priority: number;
  readonly timeoutMs: number | null;
  readonly input: Json | null;
  readonly output: Json | null;
  readonly error: TaskError | null;
  readonly arrivals: readonly Arrival[];
  readonly worker: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** The run a `sub_workflow` or `start_workflow` attempt started. */
  readonly childRunId?: string | null;
}

/** One event in a run's history. `seq` is gap-free and strictly increasing per run. */
export interface HistoryRecord {
  readonly runId: string;
  readonly seq: number;
  readonly type: string;
  readonly nodeId: string | null;
  readonly iteration: string | null;
  readonly attempt: number | null;
  readonly data: Json;
  readonly at: Date;
}

/** An event waiting in a run's inbox for the next decision. */
export interface InboxItem {
  readonly id: string;
  readonly runId: string;
  readonly event: RunEvent;
}

/** A task handed to a worker: what it runs and the lease it holds while it does. */
export interface LeasedTask {
  readonly id: string;
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly taskType: string;
  readonly input: Json | null;
  readonly leaseToken: string;
  readonly leaseExpiresAt: Date;
  readonly deadlineAt: Date | null;
  readonly definitionName: string;
  /**
   * The same for every attempt of this node instance (run, node, iteration), unlike `id`: what a worker
   * gives a payment provider or any service that deduplicates requests (`taskIdempotencyKey`).
   */
  readonly idempotencyKey: string;
  /** What the handler receives as its context, built by the engine's `stepContext` hook (absent without one). */
  readonly context?: Json;
  /** How long the task waited, for metrics; set by the store's lease (absent from a store that does not say). */
  readonly waited?: LeaseWait;
  /**
   * The W3C `traceparent` a worker opens its handler's span under: the run's trace context as the store
   * returns it, then the lease's own span once the engine has traced the lease. Null when the run has none.
   */
  readonly traceContext?: string | null;
}

/** How long a leased task waited, in seconds, by the database's clock. */
export interface LeaseWait {
  /** Since it became due on the queue (a retry's backoff excluded). */
  readonly queueSeconds: number;
  /** For a first attempt, since the transaction that created it: the end of the task that led to it. */
  readonly stepSeconds: number | null;
}

/**
 * A queued task as a dispatcher sees it: which attempt to deliver, and not before when. A message is only
 * a wake-up: whoever takes it leases the task by id (`TaskService.leaseById`), which checks that the task is
 * still queued at that attempt and hands out a fresh fencing token, so duplicates and stale messages are
 * harmless.
 */
export interface DispatchTask {
  readonly taskId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly namespace: string;
  readonly taskType: string;
  readonly priority: number;
  /**
   * Deliver no earlier than this (a retry's backoff). A dispatcher must honour it durably: a message
   * delivered early runs the retry early, and a message dropped because it was not due yet is lost until
   * the engine's repair sends it again. Null: deliver now.
   */
  readonly notBefore: Date | null;
}

/** What a run start asks for (`RunService.start`; a before-start hook sees it too). */
export interface StartRequest {
  readonly namespace: string;
  readonly definition: string;
  /** A pinned version; the latest when absent. */
  readonly version?: number;
  readonly input: Json;
  /**
   * Makes the start idempotent within the namespace: a start with a key already used gets the run that
   * key started (`created: false`), or, with `onDuplicate: 'error'`, a `duplicate_start` error naming it.
   */
  readonly idempotencyKey?: string;
  readonly onDuplicate?: 'return' | 'error';
  /** Search attributes of the run (checked with `checkAttributes`). */
  readonly attributes?: RunAttributes;
  /** Who asked (an API key's name): recorded in the run's history with its start. */
  readonly by?: string;
  /** The caller's W3C `traceparent` (the HTTP request's span): the parent of the start's span. */
  readonly traceContext?: string;
}

/** A worker's report on an attempt it holds. */
export interface TaskReport {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
  readonly leaseToken: string;
  /** The node the worker was told it runs: a hint that lets the server read ahead; never trusted. */
  readonly nodeId?: string;
  readonly iteration?: string;
  readonly outcome:
    | { readonly kind: 'completed'; readonly output: Json }
    | { readonly kind: 'failed'; readonly error: TaskError };
}

/** What became of a report: applied, or refused with the reason. */
export type ReportVerdict =
  | {
      readonly taskId: string;
      readonly accepted: true;
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
      /** The task's type and how long it ran since its lease, for metrics (a store may leave them out). */
      readonly taskType?: string | null;
      readonly ranSeconds?: number;
    }
  | {
      readonly taskId: string;
      readonly accepted: false;
      readonly why: string;
      /** Present when the task exists, so the refusal can be recorded in the run's history. */
      readonly nodeId?: string;
      readonly iteration?: string;
      readonly attempt?: number;
    };
