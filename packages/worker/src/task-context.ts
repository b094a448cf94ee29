import type { Json } from '@weft/client/tasks';
import type { TaskLogger } from './task-log.js';

/** What a handler gets besides its input. */
export interface TaskContext {
  readonly taskId: string;
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  /**
   * The same for every attempt of this node in this run and iteration (a retry keeps it; a loop pass or a
   * map item has its own). Give it to a payment provider or any service that deduplicates requests, so a
   * retry never repeats a side effect; the task id changes with each attempt and does not do this.
   */
  readonly idempotencyKey: string;
  readonly taskType: string;
  readonly definition: string;
  /** Aborted when the lease is lost (the run was cancelled, or the lease expired) or the worker stops hard. */
  readonly signal: AbortSignal;
  /** What the server's step-context hook built for this step (absent without one). */
  readonly context?: Json;
  /** Log lines for this attempt, kept with the run (`weft runs logs`); sent in batches, fenced by the lease. */
  readonly log: TaskLogger;
  /**
   * The W3C trace context the server sent with the task (absent when the run has none). The handler's
   * span is already open under it; this is for passing it on by hand to something outside OpenTelemetry.
   */
  readonly traceparent?: string;
}

/** Does one task: takes its input, returns its output (or throws to fail it). */
export type Handler = (
  input: Json,
  ctx: TaskContext,
) => Json | undefined | Promise<Json | undefined | void> | void;
