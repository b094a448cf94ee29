import type { NodeDef } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import type { RunEvent, TimerPurpose } from '../events.js';
import type { Arrival, TaskState } from '../state.js';

/** How a node is reached: its iteration, its join row if branches arrived before, and every branch now. */
export interface Reach {
  readonly iteration: string;
  /** The node instance's `waiting` row (a join, or a placeholder of a retry or rerun); null when none. */
  readonly waiting: TaskState | null;
  readonly arrivals: readonly Arrival[];
}

/** The attempt a retry follows: the failed attempt's identity and input. */
export interface FailedAttempt {
  readonly iteration: string;
  readonly attempt: number;
  readonly input: Json | null;
}

/** A child run started by a `sub_workflow` attempt ended. */
export type ChildFinished = Extract<RunEvent, { kind: 'child_finished' }>;

/**
 * What the decider does for one node kind: one method per event that concerns the node, in the visitor
 * style. The traversal and the event handlers reach a kind's handler through the node table
 * (node-table.ts), never by importing its file; a handler moves control on through `ctx.flow`.
 */
export interface NodeHandler<N extends NodeDef> {
  /** The node is reached: start it, or finish it at once and pass control on. */
  activate(ctx: DecisionContext, node: N, reach: Reach): Promise<void>;
  /** Schedules the attempt after a failed one (nodes with a retry policy), `delayMs` from now or at once. */
  retry?(ctx: DecisionContext, node: N, failed: FailedAttempt, delayMs: number): void | Promise<void>;
  /** One of the node's own timers fired: a wait's end, a signal's timeout, a human task's deadline. */
  timerFired?(ctx: DecisionContext, node: N, purpose: TimerPurpose): Promise<void>;
  /** Pass (or item) `index` of the instance at `parent` finished its body (loops and maps). */
  bodyDone?(ctx: DecisionContext, node: N, parent: string, index: number): Promise<void>;
  /** The node's child run ended; returns a failure to decide next (the node's retry policy applies). */
  childFinished?(ctx: DecisionContext, node: N, event: ChildFinished): Promise<RunEvent | null>;
}
