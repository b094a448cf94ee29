import type { Json, RunError, RunStatus, TaskError } from '@weft/core';
import type { DefinitionRecord, LeasedTask, StartRequest } from '../store/records.js';

/** A before-start hook's answer: let the run start, or refuse it with a code and a message that says why. */
export type StartVerdict =
  | { readonly kind: 'allow' }
  | { readonly kind: 'refuse'; readonly code: string; readonly message: string };

/** A step whose report was applied (after its transaction committed). */
export interface StepOutcome {
  readonly namespace: string;
  readonly runId: string;
  readonly taskId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly worker: string;
  readonly outcome:
    | { readonly kind: 'completed'; readonly output: Json }
    | { readonly kind: 'failed'; readonly error: TaskError };
}

/** A run that reached a final status (after the transaction that finished it committed). */
export interface FinishedRun {
  readonly runId: string;
  readonly namespace: string;
  readonly definition: string;
  readonly status: RunStatus;
  readonly output: Json | null;
  readonly error: RunError | null;
}

/**
 * Hooks into the engine's life cycle. Every hook is optional.
 * - `beforeStart`: a guard or a quota, called before anything is written, with the stored version the start
 *   will run (the latest, when the request names none); a refusal fails the start with a `start_refused`
 *   error carrying the hook's code and message, and writes nothing. An error it throws fails the start as is.
 * - `stepContext`: what a handler receives as its context; the engine attaches it to the leased task
 *   (`LeasedTask.context`), so it travels to HTTP workers with the lease.
 * - `afterStep`: a step's report was applied.
 * - `onRunFinished`: a run completed, failed, was cancelled or terminated.
 * The last two are called after commit, in the process that committed; errors there are logged and ignored.
 */
export interface Hooks {
  beforeStart?(request: StartRequest, definition: DefinitionRecord): StartVerdict | Promise<StartVerdict>;
  stepContext?(task: LeasedTask): Json | undefined | Promise<Json | undefined>;
  afterStep?(step: StepOutcome): void | Promise<void>;
  onRunFinished?(run: FinishedRun): void | Promise<void>;
}
