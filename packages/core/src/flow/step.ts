import type { Json } from '../json.js';
import type { Duration, RetryOptions } from './options.js';

/**
 * A kind of work, declared in code: the task type workers (or the embedded engine's handlers) run, with
 * the types of its input and output. The types are for TypeScript only: a handler registered for this
 * step must take `I` and give back `O`, and a workflow's `task` node names the step it runs.
 */
export interface StepDef<I extends Json = Json, O extends Json = Json> {
  readonly kind: 'step';
  readonly taskType: string;
  /** Defaults for every task node that runs this step; a node's own options win. */
  readonly retry?: RetryOptions;
  readonly timeout?: Duration;
  /** Phantom fields that carry the input and output types; never set. */
  readonly __input?: I;
  readonly __output?: O;
}

/** The input type of a step. */
export type StepInput<S> = S extends StepDef<infer I, Json> ? I : never;
/** The output type of a step. */
export type StepOutput<S> = S extends StepDef<Json, infer O> ? O : never;

/** Declares a step: `defineStep<{ amount: number }, { paymentId: string }>('payments.charge')`. */
export function defineStep<I extends Json = Json, O extends Json = Json>(
  taskType: string,
  defaults: { readonly retry?: RetryOptions; readonly timeout?: Duration } = {},
): StepDef<I, O> {
  return { kind: 'step', taskType, ...defaults };
}
