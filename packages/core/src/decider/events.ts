import type { Json } from '../json.js';
import type { ControlEvent } from './control-events.js';
import type { TaskError } from './state.js';

/** What a timer is for. */
export type TimerPurpose = {
  readonly kind: 'retry';
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
};

/** Who asked for an operator action, and why; recorded in history. */
export interface Requester {
  readonly by: string;
  readonly reason?: string;
}

/** Everything that can happen to a run. The decider handles exactly one at a time. */
export type RunEvent =
  | { readonly kind: 'run_started' }
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
  | ({ readonly kind: 'run_cancelled' } & Requester)
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
  | ControlEvent;

/** The kinds of run event. */
export type RunEventKind = RunEvent['kind'];
