import type { Json, StepDef } from '@weft/core';
import type { HandlerLog } from './attempt-log.js';

/** What a handler gets besides its input. */
export interface HandlerContext {
  readonly runId: string;
  readonly taskId: string;
  readonly nodeId: string;
  /** Loop or map position; empty at the top level. */
  readonly iteration: string;
  /** 1 on the first try, 2 on the first retry, and so on. */
  readonly attempt: number;
  /**
   * The same for every attempt of this node in this run and iteration (a retry keeps it; a loop pass or a
   * map item has its own). Give it to a payment provider or any service that deduplicates requests, so a
   * retry never repeats a side effect; the task id changes with each attempt and does not do this.
   */
  readonly idempotencyKey: string;
  /** Aborted when the lease on the task is lost or the engine stops: stop work, nothing will be kept. */
  readonly signal: AbortSignal;
  /** Log lines for this attempt, kept with the run when the engine has a task log store (PgTaskLogStore). */
  readonly log: HandlerLog;
}

/** A plain async function that runs one task type. */
export interface Handler {
  readonly taskType: string;
  readonly run: (input: Json, ctx: HandlerContext) => Promise<Json | undefined> | Json | undefined;
}

/**
 * A handler for a step, typed by it: `handle(chargeCard, async (input) => ({ paymentId: '...' }))` only
 * compiles if the function takes the step's input and gives back its output.
 */
export function handle<I extends Json, O extends Json>(
  step: StepDef<I, O>,
  fn: (input: I, ctx: HandlerContext) => Promise<O> | O,
): Handler {
  return { taskType: step.taskType, run: (input, ctx) => fn(input as I, ctx) };
}

/**
 * Throw this from a handler to fail the task without retrying it (a declined card, an invalid order).
 * Any other error fails the attempt, and the task is retried by its retry policy.
 */
export class TerminalError extends Error {
  override readonly name: string = 'TerminalError';
  constructor(
    message: string,
    readonly details?: Json,
  ) {
    super(message);
  }
}

/** Handlers by task type; a second handler for one type is a mistake, reported with both names. */
export function handlerMap(handlers: readonly Handler[]): Map<string, Handler> {
  const map = new Map<string, Handler>();
  for (const h of handlers) {
    if (map.has(h.taskType))
      throw new TypeError(`two handlers are registered for task type "${h.taskType}": register one`);
    map.set(h.taskType, h);
  }
  return map;
}
