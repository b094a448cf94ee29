import type { Json, JsonObject } from '../json.js';
import type { Mailbox, MailboxKey } from './mailbox.js';

/**
 * Where a run is. `paused` is not terminal: a paused run resumes where it stopped. `compensating` is not
 * terminal either: the run failed for good and is running the compensations of its completed steps
 * (saga.ts); it ends `failed` once they are done or one of them fails for good.
 */
export type RunStatus =
  | 'running'
  | 'paused'
  | 'compensating'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'terminated';

/** Run statuses from which nothing more happens. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'terminated'];

/** True when a run in this status will never change again (short of an operator's retry or rerun). */
export function isTerminalRun(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

/**
 * Where one attempt of a node is. `waiting`: a join some of whose branches have arrived. `queued`: ready
 * for a worker. `running`: leased by a worker. The rest are final for that attempt.
 */
export type TaskStatus =
  | 'waiting'
  | 'queued'
  | 'running'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'skipped';

/** Attempt statuses that are final. */
export const FINAL_TASK_STATUSES: readonly TaskStatus[] = [
  'completed',
  'failed',
  'timed_out',
  'cancelled',
  'skipped',
];

/** True when an attempt in this status will not change again. */
export function isFinalTask(status: TaskStatus): boolean {
  return FINAL_TASK_STATUSES.includes(status);
}

/** Why an attempt failed. A user's task error is data: it is retryable or it is not. */
export interface TaskError {
  readonly message: string;
  /** `error`: the handler failed; `timeout`: the attempt ran past its timeout; `lease_expired`: the worker
   * stopped heartbeating; `input`: the input mapping could not be computed; `cancelled`: the run ended;
   * `skipped`: an operator skipped the task (control passes on as if it had completed). */
  readonly reason: 'error' | 'timeout' | 'lease_expired' | 'input' | 'cancelled' | 'skipped';
  readonly retryable: boolean;
  readonly type?: string;
  readonly stack?: string;
  readonly details?: Json;
}

/** What the compensations of a failed run did: all of them ran, or one failed for good. */
export interface CompensationOutcome {
  readonly status: 'completed' | 'failed';
  /** Instances compensated, in the order their compensations ran (`node` or `node[iteration]`). */
  readonly compensated: readonly string[];
  /** The instance whose compensation failed for good. */
  readonly failed?: string;
  /** Instances left uncompensated after that failure, next first. */
  readonly pending?: readonly string[];
}

/** Why a run failed or was stopped. */
export interface RunError {
  readonly message: string;
  readonly node?: string;
  /** `compensation_failed` when a compensation failed for good (the first failure is in `message`). */
  readonly reason: string;
  /** Set on a failed run that ran compensations. */
  readonly compensation?: CompensationOutcome;
}

/** One branch that reached a join: `taken` false means the branch was skipped. */
export interface Arrival {
  readonly from: string;
  readonly taken: boolean;
}

/** The latest attempt of one node instance, as the decider sees it. */
export interface TaskState {
  readonly nodeId: string;
  /** Loop and map position; empty at the top level. */
  readonly iteration: string;
  readonly attempt: number;
  readonly status: TaskStatus;
  readonly input: Json | null;
  readonly output: Json | null;
  readonly error: TaskError | null;
  readonly arrivals: readonly Arrival[];
}

/** The run fields the decider reads. */
export interface RunView {
  readonly id: string;
  readonly definition: string;
  readonly version: number;
  readonly status: RunStatus;
  readonly input: Json;
  readonly vars: JsonObject;
  /** How many sink nodes (nodes with no outgoing edge) are done or skipped. */
  readonly sinksDone: number;
}

/** The key of a node instance in maps: node id and iteration. */
export function taskKey(nodeId: string, iteration: string): string {
  return `${nodeId}\u0000${iteration}`;
}

/**
 * Thrown by a state lookup for a node instance (or a signal mailbox) the shell did not load; the decider
 * asks for it and retries.
 */
export class MissingState extends Error {
  constructor(
    readonly keys: readonly { nodeId: string; iteration: string }[],
    readonly mailboxes: readonly MailboxKey[] = [],
  ) {
    super(
      `state not loaded: ${[...keys.map((k) => k.nodeId), ...mailboxes.map((m) => `signal ${m.name}`)].join(', ')}`,
    );
  }
}

/**
 * The part of a run's state that one decision reads: the run row and the node instances the shell
 * loaded. A lookup of an instance that was not loaded throws MissingState; a loaded instance with no task
 * yet is null. This is what keeps an evaluation proportional to the frontier, not to the run.
 */
export interface DecisionState {
  readonly run: RunView;
  readonly tasks: ReadonlyMap<string, TaskState | null>;
  /** True when `tasks` holds every node instance of the run (see `needsWholeRun`): absent means none. */
  readonly complete?: boolean;
  /** Signal mailboxes loaded for this decision, by `mailboxKey`; null when the mailbox is empty. */
  readonly mailboxes?: ReadonlyMap<string, Mailbox | null>;
}

/** Reads a node instance from decision state, enforcing that it was loaded. */
export function lookupTask(state: DecisionState, nodeId: string, iteration: string): TaskState | null {
  const key = taskKey(nodeId, iteration);
  if (!state.tasks.has(key)) {
    if (state.complete) return null;
    throw new MissingState([{ nodeId, iteration }]);
  }
  return state.tasks.get(key) ?? null;
}
