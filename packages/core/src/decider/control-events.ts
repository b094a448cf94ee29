import type { Json } from '../json.js';
import type { Requester, RunEvent } from './events.js';
import type { TaskError } from './state.js';

/** What an operator says the outcome of a task is, when finishing it by hand. */
export type TaskOutcome =
  | { readonly kind: 'completed'; readonly output: Json }
  | { readonly kind: 'failed'; readonly error: TaskError }
  | { readonly kind: 'skipped'; readonly output: Json | null };

/**
 * Operator actions on a run, decided under the run's row lock like every other event. `run_cancelled`
 * (in events.ts) is one too. `node_skipped` is not an action but the effect of one: after an operator
 * skips a task, it passes control on as if the task had completed.
 */
export type ControlEvent =
  | ({ readonly kind: 'run_paused' } & Requester)
  | ({ readonly kind: 'run_resumed' } & Requester)
  | ({ readonly kind: 'run_terminated' } & Requester)
  | ({ readonly kind: 'run_retried' } & Requester)
  | ({ readonly kind: 'run_rerun'; readonly nodeId: string; readonly iteration: string } & Requester)
  | ({
      readonly kind: 'task_overridden';
      readonly nodeId: string;
      readonly iteration: string;
      readonly outcome: TaskOutcome;
    } & Requester)
  | {
      readonly kind: 'node_skipped';
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
    };

const OPERATOR_KINDS: ReadonlySet<RunEvent['kind']> = new Set([
  'run_cancelled',
  'run_paused',
  'run_resumed',
  'run_terminated',
  'run_retried',
  'run_rerun',
  'task_overridden',
]);

/**
 * True for an operator's action. A paused run decides these (and nothing else: other events wait in its
 * inbox until it is resumed).
 */
export function isControlEvent(event: RunEvent): boolean {
  return OPERATOR_KINDS.has(event.kind);
}

const WHOLE_RUN_KINDS: ReadonlySet<RunEvent['kind']> = new Set(['run_resumed', 'run_retried', 'run_rerun']);

/**
 * True for an event whose decision reads every node instance of the run (to find the queued tasks to
 * dispatch again, or the instances to run again). The shell loads the latest attempt of each instance
 * and marks the state complete, so a lookup of an instance with no task answers null.
 */
export function needsWholeRun(event: RunEvent): boolean {
  return WHOLE_RUN_KINDS.has(event.kind);
}
