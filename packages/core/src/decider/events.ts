import type { Json } from '../json.js';
import type { OperatorEvent } from './operator-events.js';
import type { RunError, TaskError } from './state.js';

/**
 * What a timer is for: the next attempt of a failed task (`retry`), the end of a wait node (`wait`), the
 * timeout of a wait_for_event node (`event_timeout`), or a human task's deadline (`deadline`).
 */
export type TimerPurpose = {
  readonly kind: 'retry' | 'wait' | 'event_timeout' | 'deadline';
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
};

/** Everything that can happen to a run. The decider handles exactly one at a time. */
export type RunEvent =
  /** `by`: who started the run (an API key's name), recorded in the run's history. */
  | { readonly kind: 'run_started'; readonly by?: string }
  | {
      readonly kind: 'node_completed';
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
    }
  | {
      readonly kind: 'node_failed';
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
      readonly error: TaskError;
    }
  | { readonly kind: 'timer_fired'; readonly purpose: TimerPurpose }
  /** A signal sent to the run (`weft signal`); `signalId` is given by the shell. */
  | {
      readonly kind: 'signal_received';
      readonly signalId: string;
      readonly name: string;
      readonly correlation: string | null;
      readonly data: Json;
      readonly by: string;
    }
  /** A child run started by a `sub_workflow` attempt ended; delivered in the child's own transaction. */
  | {
      readonly kind: 'child_finished';
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
      readonly childRunId: string;
      readonly status: 'completed' | 'failed' | 'cancelled' | 'terminated';
      readonly output: Json | null;
      readonly error: RunError | null;
    }
  /** A compensating run takes its next compensation (put in the inbox by the decision that failed it). */
  | { readonly kind: 'compensation_due' }
  /**
   * The run starts as a fork of another: the nodes it reuses are finished with the other run's outputs,
   * and control passes on from them; entry nodes it does not reuse start.
   */
  | {
      readonly kind: 'run_forked';
      readonly fromRunId: string;
      readonly upToNode: string | null;
      readonly reused: readonly ReusedNode[];
      readonly by?: string;
    }
  /** The stuck-run sweeper found the run with nothing able to wake it: look at every node again. */
  | { readonly kind: 'run_swept'; readonly idleMs: number }
  | {
      readonly kind: 'report_refused';
      readonly nodeId: string;
      readonly iteration: string;
      readonly attempt: number;
      readonly report: 'complete' | 'fail' | 'heartbeat';
      readonly why: string;
      readonly worker: string;
      readonly details?: Json;
    }
  /** An operator's action (operator-events.ts). */
  | OperatorEvent;

/** A node a forked run takes over finished from the run it was forked from. */
export interface ReusedNode {
  readonly nodeId: string;
  readonly status: 'completed' | 'skipped';
  readonly output: Json | null;
}

/** The kinds of run event. */
export type RunEventKind = RunEvent['kind'];
