import type { RunAttributes } from '../attributes.js';
import type { Json, JsonObject } from '../json.js';
import type { Effect } from './effects.js';
import type { RunEvent, TimerPurpose } from './events.js';
import type { Mailbox } from './mailbox.js';
import {
  type Arrival,
  type DecisionState,
  type RunError,
  type RunStatus,
  type RunView,
  type TaskError,
  type TaskState,
  type TaskStatus,
  taskKey,
} from './state.js';

/** Identity of one attempt of one node instance. */
export interface TaskIdentity {
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
}

/** What a person is shown for a human task. */
export interface HumanTaskSpec {
  readonly title: string;
  readonly description: string | null;
  readonly assignees: readonly string[];
  readonly form: JsonObject | null;
  readonly deadlineAt: Date | null;
}

/** Dispatch details of a task a worker will run. */
export interface TaskDispatch {
  readonly taskType: string;
  readonly priority: number;
  readonly timeoutMs: number | null;
  /** Deliver no earlier than this long after the decision (a retry's backoff); absent: now. */
  readonly delayMs?: number;
  /** The bucket of the task's limit key, for a node with `limit_key` (see `limitKeyOf`). */
  readonly limitKey?: string;
}

/**
 * The changes one decision asks the shell to make. The shell writes all actions of a decision in one
 * transaction, under the run's row lock.
 */
export type Action =
  /** Insert a new attempt. If one with the same identity exists, the insert is absorbed and the shell
   * schedules another evaluation (invariant 4). `queued` attempts are dispatched. */
  | ({
      readonly kind: 'create_task';
      readonly status: Extract<
        TaskStatus,
        'waiting' | 'queued' | 'running' | 'completed' | 'skipped' | 'failed'
      >;
      readonly input: Json | null;
      readonly output: Json | null;
      readonly error: TaskError | null;
      readonly arrivals: readonly Arrival[];
      readonly dispatch: TaskDispatch | null;
    } & TaskIdentity)
  /** Change an existing attempt that is still in `expect` status. */
  | ({
      readonly kind: 'update_task';
      readonly expect: TaskStatus;
      readonly status: TaskStatus;
      readonly input?: Json | null;
      readonly output?: Json | null;
      readonly error?: TaskError | null;
      readonly arrivals?: readonly Arrival[];
      readonly dispatch?: TaskDispatch | null;
    } & TaskIdentity)
  /** Arm a timer that delivers a `timer_fired` event at `dueAt`. */
  | { readonly kind: 'set_timer'; readonly dueAt: Date; readonly purpose: TimerPurpose }
  /** Cancel every unfinished attempt, timer and signal mailbox of the run, and stop whatever those
   * attempts started (see the engine's Cascader): as cancelled, or as terminated when `mode` says so. */
  | { readonly kind: 'cancel_open_work'; readonly reason: string; readonly mode?: 'cancel' | 'terminate' }
  /** Move the run to a final status. */
  | {
      readonly kind: 'finish_run';
      readonly status: Extract<RunStatus, 'completed' | 'failed' | 'cancelled' | 'terminated'>;
      readonly output: Json | null;
      readonly error: RunError | null;
    }
  /** Pause or resume a run, or start compensating it; `reopen` moves a finished run back to running and
   * clears its outcome. */
  | {
      readonly kind: 'set_run_status';
      readonly status: Extract<RunStatus, 'running' | 'paused' | 'compensating'>;
      readonly reopen: boolean;
    }
  /** Put an existing queued attempt (back) on the queue: its queue row may have been taken while paused. */
  | ({ readonly kind: 'dispatch_task'; readonly dispatch: TaskDispatch } & TaskIdentity)
  /** Ask for another decision on this run once this transaction commits (resume: the inbox waits). */
  | { readonly kind: 'request_decision'; readonly reason: string }
  /** Keep an event in the run's inbox for a later decision (an effect that must wait for resume). */
  | { readonly kind: 'defer'; readonly event: RunEvent }
  /** Count sink nodes that became done or skipped. */
  | { readonly kind: 'add_sinks_done'; readonly count: number }
  /** Store a signal mailbox as it now is (an empty one is removed). */
  | { readonly kind: 'put_mailbox'; readonly mailbox: Mailbox }
  /** Set run variables (merged into the existing ones). */
  | { readonly kind: 'set_vars'; readonly values: JsonObject }
  /** Set search attributes of the run (each replaces the one of its name). */
  | { readonly kind: 'set_attributes'; readonly values: RunAttributes }
  /** Put a human node's attempt in its namespace's inbox (the attempt itself is created just before). */
  | ({ readonly kind: 'open_human_task' } & HumanTaskSpec & TaskIdentity)
  /** Take a human task out of the inbox because it ended without an answer. */
  | ({ readonly kind: 'close_human_task'; readonly state: 'expired' | 'cancelled' } & TaskIdentity)
  /** Have something done outside the run, through the outbox. `task` is the attempt it belongs to: if
   * that attempt's insert is absorbed as a duplicate, the effect is dropped with it. */
  | { readonly kind: 'effect'; readonly effect: Effect; readonly task: TaskIdentity | null }
  /** Append an event to the run's history. */
  | {
      readonly kind: 'record';
      readonly type: string;
      readonly nodeId?: string;
      readonly iteration?: string;
      readonly attempt?: number;
      readonly data: Json;
    };

/** The kinds of action. */
export type ActionKind = Action['kind'];

/**
 * Applies actions to decision state, giving the state the next decision of the same pass sees. Pure; the
 * shell's writes must have the same effect on the stored state.
 */
export function evolve(state: DecisionState, actions: readonly Action[]): DecisionState {
  const tasks = new Map(state.tasks);
  let run = state.run;
  for (const action of actions) run = applyAction(tasks, run, action);
  return { ...state, run, tasks };
}

/** The task map an action changes: a `Map`, or a decision's overlay of its state (see TaskOverlay). */
export interface MutableTasks extends Iterable<[string, TaskState | null]> {
  get(key: string): TaskState | null | undefined;
  set(key: string, value: TaskState | null): unknown;
}

/** Applies one action to a mutable task map; returns the run as it is after the action. */
export function applyAction(tasks: MutableTasks, run: RunView, action: Action): RunView {
  switch (action.kind) {
    case 'create_task': {
      const key = taskKey(action.nodeId, action.iteration);
      const existing = tasks.get(key);
      if (existing && existing.attempt >= action.attempt) return run;
      tasks.set(key, {
        nodeId: action.nodeId,
        iteration: action.iteration,
        attempt: action.attempt,
        status: action.status,
        input: action.input,
        output: action.output,
        error: action.error,
        arrivals: action.arrivals,
      });
      return run;
    }
    case 'update_task': {
      const key = taskKey(action.nodeId, action.iteration);
      const existing = tasks.get(key);
      if (!existing || existing.attempt !== action.attempt || existing.status !== action.expect) return run;
      tasks.set(key, {
        ...existing,
        status: action.status,
        ...(action.input !== undefined ? { input: action.input } : {}),
        ...(action.output !== undefined ? { output: action.output } : {}),
        ...(action.error !== undefined ? { error: action.error } : {}),
        ...(action.arrivals !== undefined ? { arrivals: action.arrivals } : {}),
      });
      return run;
    }
    case 'cancel_open_work':
      for (const [key, task] of tasks) {
        if (task && (task.status === 'waiting' || task.status === 'queued' || task.status === 'running')) {
          tasks.set(key, { ...task, status: 'cancelled' });
        }
      }
      return run;
    case 'finish_run':
      return { ...run, status: action.status };
    case 'add_sinks_done':
      return { ...run, sinksDone: run.sinksDone + action.count };
    case 'set_run_status':
      return { ...run, status: action.status };
    case 'set_vars':
      return { ...run, vars: { ...run.vars, ...action.values } };
    case 'set_attributes':
    case 'put_mailbox':
    case 'set_timer':
    case 'record':
    case 'dispatch_task':
    case 'request_decision':
    case 'defer':
    case 'open_human_task':
    case 'close_human_task':
    case 'effect':
      return run;
  }
}
