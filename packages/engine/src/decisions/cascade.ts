import type { StoreTx } from '../store/store.js';
import type { WriteSet } from '../store/write-set.js';

/** A run whose open work was stopped: everything it started that still runs must stop too. */
export interface StoppedRun {
  readonly runId: string;
  /** Why, as recorded on the run's cancelled attempts ("terminated by ops: ..."). */
  readonly reason: string;
  /** Cancelled (a cancel, a failure, a completion that leaves branches open) or terminated. */
  readonly mode: 'cancel' | 'terminate';
}

/**
 * Carries an operator's cancel or terminate (and any other end of a run's open work) beyond the run's
 * own attempts and timers, which the store cancels itself: to the child runs its attempts started, for
 * instance. It runs inside the transaction that stops the run and must only add writes to it (an outbox
 * row, say) or read: never lock another run, whose lock would come out of order (lock order: run rows
 * first, in id order). The child then stops in its own transaction, under its own lock.
 */
export interface Cascader {
  readonly name: string;
  stop(tx: StoreTx, writes: WriteSet, stopped: readonly StoppedRun[]): Promise<void>;
}

/** Runs start nothing but their own tasks and timers yet: nothing more to stop. */
export const noCascade: Cascader = {
  name: 'none',
  async stop() {},
};
