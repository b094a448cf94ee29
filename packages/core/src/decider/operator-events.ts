import type { Json } from '../json.js';
import type { TaskError } from './state.js';

/** Who asked for an operator action, and why; recorded in history. */
export interface Requester {
  readonly by: string;
  readonly reason?: string;
}

/** What an operator says the outcome of a task is, when finishing it by hand. */
export type TaskOutcome =
  | { readonly kind: 'completed'; readonly output: Json }
  | { readonly kind: 'failed'; readonly error: TaskError }
  | { readonly kind: 'skipped'; readonly output: Json | null };

/**
 * Operator actions on a run (pause, resume, cancel, terminate, retry, rerun, and finishing a task by hand),
 * decided under the run's row lock like every other event. `node_skipped` is not an action but the effect
 * of one: after an operator skips a task, it passes control on as if the task had completed.
 */
export type OperatorEvent =
  | ({ readonly kind: 'run_cancelled' } & Requester)
  | ({ readonly kind: 'run_paused' } & Requester)
  | ({ readonly kind: 'run_resumed' } & Requester)
  | ({ readonly kind: 'run_terminated' } & Requester)
  | ({ readonly kind: 'run_retried' } & Requester)
  | ({ readonly kind: 'run_rerun'; readonly nodeId: string; readonly iteration: string } & Requester)
  /** The run was moved to another version of its definition (the shell changed its rows under the lock). */
  | ({
      readonly kind: 'run_migrated';
      readonly fromVersion: number;
      readonly toVersion: number;
      /** Old node id to new node id, for the nodes whose id changed. */
      readonly nodeMap: Readonly<Record<string, string>>;
    } & Requester)
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

/** The kinds of operator event. */
export type OperatorEventKind = OperatorEvent['kind'];

const ACTION_KINDS: ReadonlySet<string> = new Set<OperatorEventKind>([
  'run_cancelled',
  'run_paused',
  'run_resumed',
  'run_terminated',
  'run_retried',
  'run_rerun',
  'run_migrated',
  'task_overridden',
]);

/**
 * True for an operator's action (not `node_skipped`, which follows one). A paused run decides these (and
 * nothing else: other events wait in its inbox until it is resumed).
 */
export function isOperatorAction(event: { readonly kind: string }): boolean {
  return ACTION_KINDS.has(event.kind);
}

const WHOLE_RUN_KINDS: ReadonlySet<string> = new Set<OperatorEventKind>([
  'run_resumed',
  'run_retried',
  'run_rerun',
]);

/**
 * True for an event whose decision reads every node instance of the run (to find the queued tasks to
 * dispatch again, or the instances to run again). The shell loads the latest attempt of each instance
 * and marks the state complete, so a lookup of an instance with no task answers null.
 */
export function needsWholeRun(event: { readonly kind: string }): boolean {
  return WHOLE_RUN_KINDS.has(event.kind);
}
